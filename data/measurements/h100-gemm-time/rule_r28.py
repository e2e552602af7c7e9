#!/usr/bin/env python3
"""The twenty-eighth round's blind rule (GEMM_K1_JOIN, costmodel/gemm.c), written 2026-12-07
before any sweep of the K = 1 probe (h200-awkward-k1: 16 M x N x 1 `nn` shapes, 16-bit and
tf32, M at per-GPU batches no earlier set used).

    python3 rule_r28.py SET_DIR [SET_DIR ...]     (run from data/measurements)

Pooled over the sets, on the first-run cuBLAS sweep blind_gemm.json (the score of record) and,
reported beside it, the backlog-timed blind_gemmbl.json: the median and p90 of |pred/meas - 1|
over the K = 1 rows with M, N > 1, predictions.json (the model without the round) against
predictions_r28.json. The round stays if both its median and its p90 on blind_gemm.json are
lower; otherwise GEMM_K1_JOIN goes back to 0.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from score_time import matched  # noqa: E402
from tstat import pct  # noqa: E402


def errs(set_dirs, name, sweep):
    return [e for d in set_dirs for p, e in matched(d, name, sweep)
            if p["k"] == 1 and p["m"] > 1 and p["n"] > 1]


def main():
    dirs = sys.argv[1:]
    res = {}
    for sweep in ("blind_gemm.json", "blind_gemmbl.json"):
        for name in ("predictions.json", "predictions_r28.json"):
            e = errs(dirs, name, sweep)
            res[(sweep, name)] = (pct(e, .5), pct(e, .9))
            print("%-18s %-22s K = 1 rows %3d median %5.1f%% p90 %5.1f%%"
                  % (sweep, name, len(e), 100 * pct(e, .5), 100 * pct(e, .9)))
    b, r = res[("blind_gemm.json", "predictions.json")], res[("blind_gemm.json", "predictions_r28.json")]
    stays = r[0] < b[0] and r[1] < b[1]
    print("twenty-eighth round:", "stays" if stays else "goes (GEMM_K1_JOIN back to 0)")


if __name__ == "__main__":
    main()
