#!/usr/bin/env python3
"""Writes the h200-awkward5 sweep jobs (issue 25, fifth blind set) from problems.json beside
this file: ../h200-awkward2/make_jobs.py's write() (the same 23 Triton configs, split-K 4/8/16,
backlog 100 us, 2 warm-up + 15 timed calls, 128 MiB flush), kept to what the fourth set swept
(../h200-awkward4/make_jobs.py): the 16-bit kernel sweep and the cuBLAS gemm_sweep in
bf16/fp16/tf32 (no tf32 or fp8 kernel sweep, no fp8 GEMM rows), plus blind_gemmbl.json: the
same gemm_sweep with backlog_us 100 (the GPU's time beside the defined score, as the lead added
to the fourth set's call).
Usage: make_jobs.py OUTDIR"""
import importlib.util
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def write_set(here, out):
    """The jobs of the set whose problems.json is in folder `here` (named after it)."""
    name = os.path.basename(here)
    spec = importlib.util.spec_from_file_location(
        "mj2", os.path.join(HERE, "..", "h200-awkward2", "make_jobs.py"))
    mj2 = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mj2)
    mj2.write(os.path.join(here, "problems.json"), out, name)
    for kind in ("kernel_tf32", "kernel_fp8"):
        path = os.path.join(out, "blind_%s.json" % kind)
        if os.path.exists(path):
            os.remove(path)
    path = os.path.join(out, "blind_gemm.json")
    job = json.load(open(path))
    job["params"]["dtypes"] = ["bf16", "fp16", "tf32"]
    with open(path, "w") as f:
        json.dump(job, f, indent=1)
    job["id"] = name + "-blind-gemm-backlog"
    job["params"]["backlog_us"] = 100.0
    with open(os.path.join(out, "blind_gemmbl.json"), "w") as f:
        json.dump(job, f, indent=1)


def main():
    """make_jobs.py OUTDIR [SETDIR]: SETDIR (default: this folder) holds problems.json; the
    seventh set's jobs are `make_jobs.py ../h200-awkward7/jobs ../h200-awkward7`."""
    write_set(os.path.abspath(sys.argv[2]) if len(sys.argv) > 2 else HERE, sys.argv[1])


if __name__ == "__main__":
    main()
