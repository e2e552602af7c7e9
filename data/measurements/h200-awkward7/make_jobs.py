#!/usr/bin/env python3
"""Writes the h200-awkward7 sweep jobs (issue 25, seventh blind set) from problems.json beside
this file, exactly as the fifth and sixth sets' were written (../h200-awkward5/make_jobs.py's
write_set(): ../h200-awkward2/make_jobs.py's write(), kept to the 16-bit kernel sweep and the
bf16/fp16/tf32 gemm_sweep, plus blind_gemmbl.json, the same gemm_sweep with backlog_us 100).
Usage: make_jobs.py OUTDIR"""
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    spec = importlib.util.spec_from_file_location(
        "mj5", os.path.join(HERE, "..", "h200-awkward5", "make_jobs.py"))
    mj5 = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mj5)
    mj5.write_set(HERE, sys.argv[1])


if __name__ == "__main__":
    main()
