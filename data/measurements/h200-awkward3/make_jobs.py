#!/usr/bin/env python3
"""Writes the h200-awkward3 sweep jobs (issue 25, third blind set) from problems.json beside
this file: ../h200-awkward2/make_jobs.py's write(), the same config space and timing (no
shape of this set has M, N, K multiples of 16, so there is no fp8 kernel job).
Usage: make_jobs.py OUTDIR"""
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    spec = importlib.util.spec_from_file_location(
        "mj2", os.path.join(HERE, "..", "h200-awkward2", "make_jobs.py"))
    mj2 = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mj2)
    mj2.write(os.path.join(HERE, "problems.json"), sys.argv[1], "h200-awkward3")


if __name__ == "__main__":
    main()
