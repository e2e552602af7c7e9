#!/usr/bin/env python3
"""Seventeenth round (issue 25, candidate M): clauses (1) and (2) of the ship
rule (docs/kernels.md), from two `kernel_awkward --hw h100-sxm --gemm-rows`
dumps (the shipped model, then M with the refitted H200 calibration).

Scored: the gemm_sweep rows (blind_gemm.json, "sweep") of h100-awkward4..16,
|pred/meas - 1|, the bench's percentile (h100-floor/floor_cv.py pct):
  clause 1: unaligned rows pooled (median and p90 both better) and all rows
            pooled (neither worse);
  clause 2: every set's unaligned p90 (none worse by more than 1 point);
and, for the record, the rows the round was about (K <= 128, M x N >= 256K),
signed median, all H100 sets in the dump.
Usage: mempath_score.py BASE_ROWS CAND_ROWS [first_set last_set] [--label NAME]
(NAME: the candidate, M by default; the eighteenth round ran it with --label W)."""
import os
import re
import statistics as st
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "h100-floor"))
from floor_cv import lines, pct  # noqa: E402  (the bench's percentile, one copy)

ROW = re.compile(r"h(\d+)blind\s+(\w+)\s+(\w+)\s+(\w\w)\s+(\d+)\s+(\d+)\s+(\d+)\s+al(\d+)\s+(\w+)\s+"
                 r"meas ([\d.]+) pred ([\d.]+)")


def load(path):
    rows = []
    for line in lines(path):
        m = ROW.match(line)
        if m and m.group(2) == "sweep":
            g = m.groups()
            rows.append(dict(set=int(g[0]), m=int(g[4]), n=int(g[5]), k=int(g[6]), un=g[8] == "unal",
                             e=float(g[10]) / float(g[9]) - 1))
    return rows


def mp(v):
    a = [abs(x) for x in v]
    return 100 * pct(a, .5), 100 * pct(a, .9)


def main():
    args, label = list(sys.argv[1:]), "M"
    if "--label" in args:
        i = args.index("--label")
        label = args[i + 1]
        del args[i:i + 2]
    b, c = load(args[0]), load(args[1])
    lo, hi = (int(args[2]), int(args[3])) if len(args) > 3 else (4, 16)
    sets = range(lo, hi + 1)
    assert len(b) == len(c)
    print("per set, unaligned gemm_sweep rows, median / p90 %% (base -> %s), sets %d..%d" %
          (label, lo, hi))
    worst = -1e9
    for s in sets:
        eb = [r["e"] for r in b if r["set"] == s and r["un"]]
        ec = [r["e"] for r in c if r["set"] == s and r["un"]]
        if not eb:
            continue
        (m0, p0), (m1, p1) = mp(eb), mp(ec)
        worst = max(worst, p1 - p0)
        print("  %2d (%2d rows) %6.3f / %6.3f -> %6.3f / %6.3f  dp90 %+.3f" % (s, len(eb), m0, p0, m1, p1,
                                                                          p1 - p0))
    print("  largest p90 rise: %+.3f points (clause 2: <= 1)" % worst)
    for name, f in (("unaligned", lambda r: r["un"]), ("all", lambda r: True)):
        eb = [r["e"] for r in b if r["set"] in sets and f(r)]
        ec = [r["e"] for r in c if r["set"] in sets and f(r)]
        (m0, p0), (m1, p1) = mp(eb), mp(ec)
        print("pooled %-9s (%3d rows) %7.4f / %7.4f -> %7.4f / %7.4f" % (name, len(eb), m0, p0, m1, p1))
    sel = lambda r: r["k"] <= 128 and r["m"] * r["n"] >= 256 * 1024  # noqa: E731
    for lab, rng in (("sets %d..%d" % (lo, hi), sets), ("all sets in the dump", None)):
        eb = [r["e"] for r in b if sel(r) and (rng is None or r["set"] in rng)]
        ec = [r["e"] for r in c if sel(r) and (rng is None or r["set"] in rng)]
        if eb:
            print("K <= 128, M x N >= 256K, %s (%d rows): signed median %+.1f -> %+.1f %%, "
                  "|err| median / p90 %.1f / %.1f -> %.1f / %.1f %%" % (
                      lab, len(eb), 100 * st.median(eb), 100 * st.median(ec), *mp(eb), *mp(ec)))


if __name__ == "__main__":
    main()
