#!/usr/bin/env python3
"""Sixteenth round: per-set median / p90 of the unaligned gemm_sweep rows,
two dumps side by side, to three decimals (tails_cv.py prints one, too few
for the ship rule's 1-point clause). Every LOSO fold picked the same value,
so the fixed-value comparison is the LOSO one.
Usage: p90_precise.py BASE_ROWS CAND_ROWS [first_set last_set]"""
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "h100-tails"))
sys.path.insert(0, os.path.join(here, "..", "h100-floor"))
from floor_cv import pct  # noqa: E402
from tails_cv import load  # noqa: E402

b, c = load(sys.argv[1]), load(sys.argv[2])
lo, hi = (int(sys.argv[3]), int(sys.argv[4])) if len(sys.argv) > 4 else (4, 16)
sets = range(lo, hi + 1)
for s in sets:
    print(s, "%.3f / %.3f -> %.3f / %.3f  dp90 %+.3f" % (
        100 * pct(b[s], .5), 100 * pct(b[s], .9), 100 * pct(c[s], .5), 100 * pct(c[s], .9),
        100 * (pct(c[s], .9) - pct(b[s], .9))))
pb = [x for s in sets for x in b[s]]
pc = [x for s in sets for x in c[s]]
print("pooled %.3f / %.3f -> %.3f / %.3f" % (100 * pct(pb, .5), 100 * pct(pb, .9), 100 * pct(pc, .5),
                                            100 * pct(pc, .9)))
