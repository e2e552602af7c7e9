#!/usr/bin/env python3
"""Unaligned cuBLAS rows (K or N not a multiple of 8): median / p90 of |pred/meas - 1| for H100
sets 2-28, H100 sets 29-38 and H200 sets 2-7, and how many of H100 sets 29-38 meet 8 / 20 %.

    bash data/measurements/h100-gemm-time/cub_rows.sh ROWS.txt
    python3 data/measurements/h100-gemm-time/cub_score.py ROWS.txt [ROWS2.txt ...]
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tstat import pct  # noqa: E402


def load(path):
    """{(gpu, set, 'gemm', dtype, m, n, k, layout): (measured ms, predicted ms)}"""
    rows = {}
    for line in open(path):
        t = line.split()
        rows[tuple(t[:8])] = (float(t[9]), float(t[11]))
    return rows


def unaligned(rows, gpu, sets):
    return [abs(p / m - 1) for k, (m, p) in rows.items()
            if k[0] == gpu and k[1] in sets and (int(k[5]) % 8 or int(k[6]) % 8)]


def main():
    for path in sys.argv[1:]:
        rows = load(path)
        out = []
        for gpu, lo, hi in (("h100", 2, 28), ("h100", 29, 38), ("h200", 2, 7)):
            e = unaligned(rows, gpu, {str(s) for s in range(lo, hi + 1)})
            out.append("%s %d-%d %4d med %5.1f p90 %5.1f" % (gpu, lo, hi, len(e), 100 * pct(e, .5), 100 * pct(e, .9)))
        met = 0
        for s in range(29, 39):
            e = unaligned(rows, "h100", {str(s)})
            met += pct(e, .5) <= 0.08 and pct(e, .9) <= 0.20
        print(os.path.basename(path), " | ".join(out), "| H100 29-38 sets met", met)


if __name__ == "__main__":
    main()
