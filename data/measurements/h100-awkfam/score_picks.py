#!/usr/bin/env python3
"""Score committed picks on a swept set: bf16 + fp16 top-1 geomean / worst / mean Kendall tau,
as bench/kernel_sweep.c ks_evaluate does, from a predictions file's ranked configs (the model's
times as committed) and the sweep's measured configs.

  python3 data/measurements/h100-awkfam/score_picks.py SWEEP.json PREDICTIONS.json [...]
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fit_awkfam import join, read_json, score  # noqa: E402


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    rows = read_json(sys.argv[1])["rows"]
    for p in sys.argv[2:]:
        probs = join(read_json(p)["selection"], rows)
        print("%-60s %3d  top1 %.3f worst %.3f tau %.3f" % ((p, len(probs)) + score(probs)))


if __name__ == "__main__":
    main()
