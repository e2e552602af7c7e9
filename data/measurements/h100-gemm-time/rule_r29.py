#!/usr/bin/env python3
"""The twenty-ninth round's blind rule (GEMM_SPLIT3, costmodel/gemm.c: split-K factor 3 on
Hopper, with data/calibration/h200.json regenerated under it), written 2026-12-07 before any
sweep of blind sets 39-44 (h200-awkward39 ... h200-awkward44, seeds 6085-6595).

    python3 rule_r29.py SET_DIR [SET_DIR ...]     (run from data/measurements)

Pooled over the sets, on the first-run cuBLAS sweep blind_gemm.json (the score of record) and,
reported beside it, the backlog-timed blind_gemmbl.json: the median and p90 of |pred/meas - 1|
over the unaligned rows (K or N not a multiple of 8) and over all rows, predictions.json (the
model without the round) against predictions_r29.json, and how many sets meet 8 / 20 % on
their unaligned rows. The round stays if, on blind_gemm.json, both the unaligned median and
the unaligned p90 are lower and the all-rows median is not higher by more than 0.2 points;
otherwise GEMM_SPLIT3 stays 0.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import score_time  # noqa: E402
from tstat import pct  # noqa: E402


def main():
    dirs = sys.argv[1:]
    if not dirs:
        sys.exit(__doc__)
    res = {}
    for sweep in ("blind_gemm.json", "blind_gemmbl.json"):
        score_time.SWEEP = sweep
        for name in ("predictions.json", "predictions_r29.json"):
            per = [score_time.errors(d, name) for d in dirs]
            e = [x for p in per for x in p]
            u = [x for un, x in e if un]
            a = [x for _, x in e]
            met = sum(pct([x for un, x in p if un], .5) <= .08 and pct([x for un, x in p if un], .9) <= .20
                      for p in per)
            res[(sweep, name)] = (pct(u, .5), pct(u, .9), pct(a, .5))
            print("%-18s %-21s unaligned %3d median %5.1f%% p90 %5.1f%% | all %3d median %5.1f%% p90 %5.1f%%"
                  " | sets meeting 8 / 20 %%: %d of %d"
                  % (sweep, name, len(u), 100 * pct(u, .5), 100 * pct(u, .9), len(a), 100 * pct(a, .5),
                     100 * pct(a, .9), met, len(per)))
    b, r = res[("blind_gemm.json", "predictions.json")], res[("blind_gemm.json", "predictions_r29.json")]
    stays = r[0] < b[0] and r[1] < b[1] and r[2] <= b[2] + 0.002
    print("twenty-ninth round:", "stays" if stays else "goes (GEMM_SPLIT3 stays 0)")


if __name__ == "__main__":
    main()
