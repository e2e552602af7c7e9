#!/usr/bin/env python3
"""Writes the h200-awkward4 sweep jobs (issue 25, fourth blind set) from problems.json beside
this file: ../h200-awkward2/make_jobs.py's write() (the same 23 Triton configs, split-K 4/8/16,
backlog 100 us, 2 warm-up + 15 timed calls, 128 MiB flush), then kept to what this set is
swept for: the 16-bit kernel sweep and the cuBLAS gemm_sweep in bf16/fp16/tf32 (no tf32 or
fp8 kernel sweep, no fp8 GEMM rows: the lead's device minutes go to the 16-bit picks and the
GEMM time model).
Usage: make_jobs.py OUTDIR"""
import importlib.util
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    spec = importlib.util.spec_from_file_location(
        "mj2", os.path.join(HERE, "..", "h200-awkward2", "make_jobs.py"))
    mj2 = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mj2)
    out = sys.argv[1]
    mj2.write(os.path.join(HERE, "problems.json"), out, "h200-awkward4")
    for kind in ("kernel_tf32", "kernel_fp8"):
        path = os.path.join(out, "blind_%s.json" % kind)
        if os.path.exists(path):
            os.remove(path)
    path = os.path.join(out, "blind_gemm.json")
    job = json.load(open(path))
    job["params"]["dtypes"] = ["bf16", "fp16", "tf32"]
    with open(path, "w") as f:
        json.dump(job, f, indent=1)


if __name__ == "__main__":
    main()
