#!/usr/bin/env python3
"""The gemm_sweep timing's own repeatability (issue 25): the same job's rows
timed twice on one host (blind_gemm.json, then blind_gemm_repeat.json after
the kernel sweep and the backlog-timed copy), and a committed set timed again
on another host (set 16's gemm_sweep, first on 12-06's host, again on this
one). |t1/t2 - 1|, median and p90 (bench/kernel_awkward.c's pct()), all rows
and the unaligned ones (K or N not a multiple of 8).
Usage: repeat.py A.json B.json LABEL (a repeat file kept as A.json.gz is read from there)"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "h100-floor"))
sys.path.insert(0, os.path.join(HERE, "..", "h100-awkfam"))
from floor_cv import pct  # noqa: E402  (the bench's percentile, one copy)
from fit_awkfam import read_json  # noqa: E402


def main():
    a, b = (read_json(p)["rows"] for p in sys.argv[1:3])
    key = lambda r: (r["m"], r["n"], r["k"], r.get("layout") or "nn", r["dtype"])
    tb = {key(r): r["ms"] for r in b}
    pairs = [(key(r), r["ms"], tb[key(r)]) for r in a if key(r) in tb]
    for name, f in (("all", lambda k: True), ("unaligned", lambda k: k[1] % 8 or k[2] % 8)):
        e = [abs(x / y - 1) for k, x, y in pairs if f(k)]
        s = [x / y - 1 for k, x, y in pairs if f(k)]
        print("%-24s %-10s %3d  median %5.1f%%  p90 %5.1f%%  max %5.1f%%  signed median %+5.1f%%" %
              (sys.argv[3], name, len(e), pct(e, .5) * 100, pct(e, .9) * 100, max(e) * 100,
               pct(s, .5) * 100))


if __name__ == "__main__":
    main()
