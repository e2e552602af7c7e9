#!/usr/bin/env python3
"""The fortieth round's blind score (no 64-row tiles for an unaligned `tn` GEMM with M >= 1024 and
K > 128 on Hopper; fitted 2026-12-08 by leave-one-set-out, r40.txt, and withdrawn the same day:
cuBLAS does run 64x64 tiles there, README.md "Fortieth round"), written before any sweep of sets
71 and 77-84. For information only: the term is not in the model, whatever this prints.

    python3 rule_r40.py SET_DIR [SET_DIR ...]     (run from data/measurements)

Each SET_DIR (h100-awkwardN or h200-awkwardN, swept) holds predictions.json (committed before
the round: the model without it) and predictions_r40.json.gz (with it; the Triton picks are the
same). Pooled over the sets, on blind_gemm.json (from runner 1.1 each row the lower of two
passes' medians: the score of record) and, beside it, the backlog-timed blind_gemmbl.json: the
median and p90 of |pred/meas - 1| over the unaligned rows (K or N not a multiple of 8) and all
rows, and the sets meeting 8 / 20 % on their unaligned rows; and over the rows whose price the
round changes (more than 0.5 %), the median |pred/meas - 1| of each. The round stays if, on
blind_gemm.json, its changed rows' median is lower and its pooled unaligned median and p90 are
each at most 0.5 points above the model without it; otherwise it would have gone. (The
changed rows are few, 1024 x 219 / 479 `tn` at K > 128: the pooled percentiles alone might not
move either way.)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import score_time  # noqa: E402
from tstat import pct  # noqa: E402

NAMES = ("predictions.json", "predictions_r40.json")


def changed(dirs):
    """(error without, error with) of each measured row whose price the round moves > 0.5 %"""
    out = []
    for d in dirs:
        a = {score_time.key(p): (p, e) for p, e in score_time.matched(d, NAMES[0])}
        for p, e in score_time.matched(d, NAMES[1]):
            q = a.get(score_time.key(p))
            if q and abs(p["ms"] / q[0]["ms"] - 1) > 0.005:
                out.append((q[1], e))
    return out


def main():
    dirs = [d for d in sys.argv[1:] if os.path.exists(os.path.join(d, "blind_gemm.json"))]
    if not dirs:
        sys.exit(__doc__ + "\n(no swept SET_DIR given)")
    res = {}
    for sweep in ("blind_gemm.json", "blind_gemmbl.json"):
        score_time.SWEEP = sweep
        for name in NAMES:
            per = [score_time.errors(d, name) for d in dirs]
            e = [x for p in per for x in p]
            u = [x for un, x in e if un]
            a = [x for _, x in e]
            met = sum(pct([x for un, x in p if un], .5) <= .08 and
                      pct([x for un, x in p if un], .9) <= .20 for p in per)
            res[(sweep, name)] = (pct(u, .5), pct(u, .9))
            print("%-18s %-21s unaligned %3d median %5.1f%% p90 %5.1f%% | all %3d median %5.1f%% "
                  "p90 %5.1f%% | sets meeting 8 / 20 %%: %d of %d"
                  % (sweep, name, len(u), 100 * pct(u, .5), 100 * pct(u, .9), len(a),
                     100 * pct(a, .5), 100 * pct(a, .9), met, len(per)))
    b, r = res[("blind_gemm.json", NAMES[0])], res[("blind_gemm.json", NAMES[1])]
    score_time.SWEEP = "blind_gemm.json"
    ch = changed(dirs)
    print("rows the round changes: %d; median |pred/meas - 1| without %s, with %s"
          % (len(ch), "%.1f%%" % (100 * pct([x for x, _ in ch], .5)) if ch else "--",
             "%.1f%%" % (100 * pct([y for _, y in ch], .5)) if ch else "--"))
    better = bool(ch) and pct([y for _, y in ch], .5) < pct([x for x, _ in ch], .5)
    stays = better and r[0] <= b[0] + 0.005 and r[1] <= b[1] + 0.005
    print("fortieth round (withdrawn; for information):",
          "would have stayed" if stays else "would have gone")


if __name__ == "__main__":
    main()
