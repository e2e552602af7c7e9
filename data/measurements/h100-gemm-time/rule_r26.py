#!/usr/bin/env python3
"""The twenty-sixth round's blind rule (README.md here), on swept sets 29-30.

    python3 rule_r26.py SET_DIR [SET_DIR ...]     (run from data/measurements)

Pooled over the sets, on the backlog-timed blind_gemmbl.json: the median |pred/meas - 1| of the
rows whose price the round changed (M = 1 `tn`, K > 128), predictions.json against
predictions_r26.json, and both files' all-row median and p90. The round stays if the changed
rows' median is lower and the all-row median and p90 are each no more than 0.5 points above.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from score_time import matched  # noqa: E402
from tstat import pct  # noqa: E402


def errs(set_dirs, name):
    allr, changed = [], []
    for d in set_dirs:
        for p, e in matched(d, name, "blind_gemmbl.json"):
            allr.append(e)
            if p["m"] == 1 and p.get("layout") == "tn" and p["k"] > 128:
                changed.append(e)
    return allr, changed


def main():
    dirs = sys.argv[1:]
    res = {}
    for name in ("predictions.json", "predictions_r26.json"):
        a, c = errs(dirs, name)
        res[name] = (pct(c, .5), pct(a, .5), pct(a, .9))
        print("%-22s changed rows %2d median %5.1f%% | all %3d median %5.1f%% p90 %5.1f%%"
              % (name, len(c), 100 * res[name][0], len(a), 100 * res[name][1], 100 * res[name][2]))
    b, r = res["predictions.json"], res["predictions_r26.json"]
    stays = r[0] < b[0] and r[1] <= b[1] + 0.005 and r[2] <= b[2] + 0.005
    print("twenty-sixth round:", "stays" if stays else "goes (GEMM_GEMV_TN_US back to 0)")


if __name__ == "__main__":
    main()
