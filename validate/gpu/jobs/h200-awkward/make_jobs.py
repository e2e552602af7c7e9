#!/usr/bin/env python3
"""Writes the h200-awkward sweep jobs from data/measurements/h200-awkward/problems.json
(bench/awkward_shapes.py): for HALF (fit or blind) a kernel_sweep over the awkward-shape
config space (small-M tiles, split-K) in bf16 + fp16, one in tf32 on the first 6 shapes,
one in fp8 on the shapes with M, N, K multiples of 16, and a gemm_sweep (cuBLAS) of every
shape in bf16, fp16, tf32, fp8. BACKLOG_US > 0 sets the kernel sweeps' backlog_us (the
runner's GPU spin before each timed call); NAME (default HALF) prefixes the files.
Usage: make_jobs.py HALF OUTDIR [BACKLOG_US [NAME]]"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "..", "..", "..", "..")


def cfg(bm, bn, bk, warps=4, stages=3, split_k=1):
    c = {"bm": bm, "bn": bn, "bk": bk, "warps": warps, "stages": stages, "group_m": 8}
    if split_k > 1:
        c["split_k"] = split_k
    return c


# The awkward-shape space: small-M tiles (16, 32 rows: mma.sync on Hopper), narrow-N
# tiles for N = 1, the usual 64-256 tiles, and split-K 4/8/16 on four tiles.
CONFIGS = [cfg(16, 64, 64), cfg(16, 128, 64), cfg(32, 64, 64), cfg(32, 128, 64, stages=4),
           cfg(64, 32, 128), cfg(64, 64, 64), cfg(64, 64, 128), cfg(64, 128, 64),
           cfg(64, 256, 64), cfg(128, 32, 64), cfg(128, 64, 64), cfg(128, 128, 32, stages=4),
           cfg(128, 128, 64), cfg(128, 256, 64, 8), cfg(256, 128, 64, 8),
           cfg(64, 64, 64, split_k=4), cfg(64, 64, 64, split_k=16),
           cfg(128, 128, 64, split_k=4), cfg(128, 128, 64, split_k=16),
           cfg(32, 64, 128, split_k=4), cfg(32, 64, 128, split_k=16),
           cfg(16, 64, 128, split_k=8), cfg(64, 128, 64, split_k=8)]


def main():
    half, outdir = sys.argv[1], sys.argv[2]
    backlog = float(sys.argv[3]) if len(sys.argv) > 3 else 0.0
    name = sys.argv[4] if len(sys.argv) > 4 else half
    prob = json.load(open(os.path.join(SRC, "data", "measurements", "h200-awkward",
                                       "problems.json")))
    shapes = [{"m": g["m"], "n": g["n"], "k": g["k"], "layout": g["layout"]} for g in prob[half]]
    f8 = [s for s in shapes if all(s[x] % 16 == 0 for x in "mnk")]
    base = {"warmup": 2, "iters": 15, "shape_budget_s": 20, "flush_mib": 128,
            "precompile_timeout_s": 150, "configs": CONFIGS}
    if backlog > 0:
        base["backlog_us"] = backlog
    jobs = {
        "kernel_16bit": dict(base, dtypes=["bf16", "fp16"], shapes=shapes),
        "kernel_tf32": dict(base, dtypes=["tf32"], shapes=shapes[:6]),
        "kernel_fp8": dict(base, dtypes=["fp8"], shapes=f8),
    }
    os.makedirs(outdir, exist_ok=True)
    for kind, p in jobs.items():
        with open(os.path.join(outdir, "%s_%s.json" % (name, kind)), "w") as f:
            json.dump({"kind": "kernel_sweep", "id": "h200-awkward-%s-%s" % (name, kind),
                       "params": p}, f, indent=1)
    with open(os.path.join(outdir, "%s_gemm.json" % name), "w") as f:
        json.dump({"kind": "gemm_sweep", "id": "h200-awkward-%s-gemm" % name,
                   "params": {"shapes": shapes, "dtypes": ["bf16", "fp16", "tf32", "fp8"],
                              "warmup": 3, "min_iters": 20, "max_iters": 100,
                              "flush_mib": 128}}, f, indent=1)


if __name__ == "__main__":
    main()
