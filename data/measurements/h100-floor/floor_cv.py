#!/usr/bin/env python3
"""Fourteenth round (issue 25): the launch floor of the lent H100 hosts,
chosen by leave-one-set-out CV over the H100 awkward sweeps.

Input: `build/bench/kernel_awkward --hw h100-sxm --gemm-rows` (every cuBLAS
row of data/measurements/h100-awkwardN: measured, predicted, the launch
floor priced and the GPU part). The floor is additive in cost_gemm (added
after the kernel shape is chosen), so a candidate floor L prices a row at
pred - launch + L exactly.

Estimator (no tuning on the scored set): the fold's floor is the median of
(measured - predicted GPU part) over the fit sets' floor rows, the rows
whose predicted GPU part is under 2 us (launch-bound: 1 x N GEMVs, tiny
tiles). A second, tuned estimator for comparison: the grid value
(0.1 us steps) minimising median + p90 of the fit sets' unaligned rows.
Scored: the held-out set's unaligned rows (K or N not a multiple of 8),
gemm_sweep timing (blind_gemm.json, the figure of record), pooled.
Usage: floor_cv.py ROWS.txt [first_set last_set]
"""
import gzip
import os
import re
import statistics as st
import sys

ROW = re.compile(r"h(\d+)blind\s+(\w+)\s+(\w+)\s+(\w\w)\s+(\d+)\s+(\d+)\s+(\d+)\s+al(\d+)\s+(\w+)\s+"
                 r"meas ([\d.]+) pred ([\d.]+) launch ([\d.]+) gpu ([\d.]+)")


def pct(v, q):  # bench/kernel_awkward.c pct(): linear interpolation
    v = sorted(v)
    n = len(v)
    pos = q * (n - 1)
    i = int(pos)
    return v[i] + (pos - i) * (v[i + 1] - v[i]) if i + 1 < n else v[i]


def lines(path):
    """The lines of a row dump, gzip-compressed (NAME.txt.gz) or not; a NAME.txt that is not
    there is read from NAME.txt.gz (the committed dumps are compressed)."""
    if not os.path.exists(path) and os.path.exists(path + ".gz"):
        path += ".gz"
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        yield from f


def load(path):
    rows = []
    for line in lines(path):
        m = ROW.match(line)
        if not m:
            continue
        g = m.groups()
        rows.append(dict(set=int(g[0]), how=g[1], un=g[8] == "unal", meas=float(g[9]) * 1e3,
                         pred=float(g[10]) * 1e3, launch=float(g[11]) * 1e3,
                         gpu=float(g[12]) * 1e3))
    return rows


def errs(rr, L):
    return [abs((r["pred"] if L is None else r["pred"] - r["launch"] + L) / r["meas"] - 1)
            for r in rr]


def floor_median(rows, sets, how, thr=2.0):
    return st.median(r["meas"] - r["gpu"] for r in rows
                     if r["set"] in sets and r["how"] == how and r["gpu"] < thr)


def floor_grid(rows, sets, how):
    rr = [r for r in rows if r["set"] in sets and r["how"] == how and r["un"]]
    best = None
    for i in range(30, 61):
        e = errs(rr, i / 10)
        s = pct(e, .5) + pct(e, .9)
        if best is None or s < best[0] - 1e-12:
            best = (s, i / 10)
    return best[1]


def main():
    rows = load(sys.argv[1])
    lo, hi = (int(sys.argv[2]), int(sys.argv[3])) if len(sys.argv) > 3 else (4, 12)
    sets = list(range(lo, hi + 1))
    for how in ("sweep", "gemmbl"):
        for name, est in (("floor rows (median)", floor_median), ("grid (median+p90)", floor_grid)):
            pb, pa = [], []
            print(f"== timing {how}, estimator {name}, fit sets h100-awkward{lo}..{hi}")
            for s in sets:
                rr = [r for r in rows if r["set"] == s and r["how"] == how and r["un"]]
                if not rr:
                    continue
                L = est(rows, [x for x in sets if x != s], how)
                b, a = errs(rr, None), errs(rr, L)
                pb += b
                pa += a
                print(f"  held out {s:2d} ({len(rr):2d} rows) floor {L:.2f} us: "
                      f"{100 * pct(b, .5):4.1f} / {100 * pct(b, .9):4.1f} % -> "
                      f"{100 * pct(a, .5):4.1f} / {100 * pct(a, .9):4.1f} %")
            print(f"  pooled ({len(pa)} rows): {100 * pct(pb, .5):.1f} / {100 * pct(pb, .9):.1f} % "
                  f"-> {100 * pct(pa, .5):.1f} / {100 * pct(pa, .9):.1f} %")
    print("all fit sets' floor rows (sweep): %.2f us; (gemmbl): %.2f us" %
          (floor_median(rows, sets, "sweep"), floor_median(rows, sets, "gemmbl")))


if __name__ == "__main__":
    main()
