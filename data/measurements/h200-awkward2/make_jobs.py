#!/usr/bin/env python3
"""Writes the h200-awkward2 sweep jobs (issue 25, second blind set) from
problems.json beside this file, with the config space (CONFIGS) and timing
parameters of validate/gpu/jobs/h200-awkward/make_jobs.py, imported from there
so the space is the same: a kernel_sweep in bf16 + fp16 over every shape, one in
tf32 on the first 6, one in fp8 on the shapes with M, N, K multiples of 16
(backlog_us 100, as the first blind call), and a gemm_sweep (cuBLAS) of every
shape in bf16, fp16, tf32, fp8.
write() serves the later sets too (../h200-awkward3/make_jobs.py); a set with no shape
fit for fp8 gets no fp8 job (the runner refuses an empty shape list).
Usage: make_jobs.py OUTDIR"""
import importlib.util
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "..", "..", "..")


def write(problems, outdir, name):
    """The sweep jobs of problems (a problems.json) into outdir, ids prefixed name."""
    spec = importlib.util.spec_from_file_location(
        "mj", os.path.join(SRC, "validate", "gpu", "jobs", "h200-awkward", "make_jobs.py"))
    mj = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mj)
    prob = json.load(open(problems))
    shapes = [{"m": g["m"], "n": g["n"], "k": g["k"], "layout": g["layout"]} for g in prob["blind"]]
    f8 = [s for s in shapes if all(s[x] % 16 == 0 for x in "mnk")]
    base = {"warmup": 2, "iters": 15, "shape_budget_s": 20, "flush_mib": 128,
            "precompile_timeout_s": 150, "configs": mj.CONFIGS, "backlog_us": 100.0}
    jobs = {
        "kernel_16bit": dict(base, dtypes=["bf16", "fp16"], shapes=shapes),
        "kernel_tf32": dict(base, dtypes=["tf32"], shapes=shapes[:6]),
    }
    if f8:
        jobs["kernel_fp8"] = dict(base, dtypes=["fp8"], shapes=f8)
    os.makedirs(outdir, exist_ok=True)
    for kind, p in jobs.items():
        with open(os.path.join(outdir, "blind_%s.json" % kind), "w") as f:
            json.dump({"kind": "kernel_sweep", "id": "%s-blind-%s" % (name, kind),
                       "params": p}, f, indent=1)
    with open(os.path.join(outdir, "blind_gemm.json"), "w") as f:
        json.dump({"kind": "gemm_sweep", "id": "%s-blind-gemm" % name,
                   "params": {"shapes": shapes, "dtypes": ["bf16", "fp16", "tf32", "fp8"],
                              "warmup": 3, "min_iters": 20, "max_iters": 100,
                              "flush_mib": 128}}, f, indent=1)


def main():
    write(os.path.join(HERE, "problems.json"), sys.argv[1], "h200-awkward2")


if __name__ == "__main__":
    main()
