#!/usr/bin/env python3
"""Fifteenth round (issue 25): leave-one-set-out CV of a candidate term's
value over the H100 awkward sweeps (the h100-floor/floor_cv.py pattern).

Input: one `build/bench/kernel_awkward --hw h100-sxm --gemm-rows` dump per
grid value of the candidate (cost_gemm built with the value as a -D macro),
given as VALUE=PATH; the first one is the shipped model (the baseline).
Each fold picks the grid value minimising median + p90 of the other sets'
unaligned gemm_sweep rows (K or N not a multiple of 8) and scores the
held-out set's unaligned rows with it; nothing is tuned on the scored set.
Usage: tails_cv.py V0=ROWS0 V1=ROWS1 ... [first_set last_set]
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "h100-floor"))
from floor_cv import lines, pct  # noqa: E402  (the bench's percentile, one copy)

ROW = re.compile(r"h(\d+)blind\s+(\w+)\s+(\w+)\s+(\w\w)\s+(\d+)\s+(\d+)\s+(\d+)\s+al(\d+)\s+(\w+)\s+"
                 r"meas ([\d.]+) pred ([\d.]+)")


def load(path):
    out = {}
    for line in lines(path):
        m = ROW.match(line)
        if m and m.group(2) == "sweep" and m.group(9) == "unal":
            out.setdefault(int(m.group(1)), []).append(
                abs(float(m.group(11)) / float(m.group(10)) - 1))
    return out


def main():
    args = [a for a in sys.argv[1:] if "=" in a]
    nums = [int(a) for a in sys.argv[1:] if "=" not in a]
    lo, hi = nums if nums else (4, 13)
    sets = list(range(lo, hi + 1))
    grid = [(a.split("=", 1)[0], load(a.split("=", 1)[1])) for a in args]
    base = grid[0][1]
    print("fixed values, pooled unaligned gemm_sweep rows of sets %d..%d:" % (lo, hi))
    for v, d in grid:
        e = [x for s in sets for x in d.get(s, [])]
        print(f"  {v:>5}: {100 * pct(e, .5):4.1f} / {100 * pct(e, .9):4.1f} % ({len(e)} rows); per set p90 "
              + " ".join(f"{s}:{100 * pct(d[s], .9):.1f}" for s in sets if s in d))
    pb, pa = [], []
    print("leave-one-set-out CV (value chosen on the other sets by median + p90):")
    for s in sets:
        if s not in base:
            continue
        fit = [x for x in sets if x != s]
        best = None
        for v, d in grid:
            e = [x for f in fit for x in d.get(f, [])]
            score = pct(e, .5) + pct(e, .9)
            if best is None or score < best[0] - 1e-12:
                best = (score, v, d)
        b, a = base[s], best[2][s]
        pb += b
        pa += a
        print(f"  held out {s:2d} ({len(b):2d} rows) value {best[1]:>5}: "
              f"{100 * pct(b, .5):4.1f} / {100 * pct(b, .9):4.1f} % -> "
              f"{100 * pct(a, .5):4.1f} / {100 * pct(a, .9):4.1f} %")
    print(f"  pooled ({len(pa)} rows): {100 * pct(pb, .5):.1f} / {100 * pct(pb, .9):.1f} % -> "
          f"{100 * pct(pa, .5):.1f} / {100 * pct(pa, .9):.1f} %")


if __name__ == "__main__":
    main()
