#!/usr/bin/env python3
"""Issue 25, the timing behind gemm_sweep's two passes (runner 1.1): on every H100 awkward set
swept twice in one call (blind_gemm.json, then blind_gemm_repeat.json), the committed picks'
cuBLAS times (predictions.json) scored on the unaligned rows (K or N not a multiple of 8) against
the first run, the second run and the lower of the two runs' medians; and, over all rows, the
first run against the second where the first run's median was over twice its minimum (the host
interrupted the window) and elsewhere.
  cd data/measurements && python3 h100-awkfam/two_pass.py"""
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fit_awkfam import has_json, read_json  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "h100-gemm-time"))
from score_time import key  # noqa: E402  (a row's shape, layout and dtype, one copy)
from tstat import pct  # noqa: E402  (bench/kernel_awkward.c's percentile)



def main():
    ways = ("first run", "second run", "lower of the two")
    errs = {w: [] for w in ways}
    met = dict.fromkeys(ways, 0)
    flagged, steady, sets = [], [], 0
    for s in range(2, 100):
        d = "h100-awkward%d" % s
        if not has_json(d + "/blind_gemm_repeat.json") or not has_json(d + "/predictions.json"):
            continue
        rep = {key(r): r for r in read_json(d + "/blind_gemm_repeat.json").get("rows", [])}
        if not rep:
            continue
        pred = {key(r): r["ms"] for r in read_json(d + "/predictions.json")["gemm"]}
        one = {w: [] for w in ways}
        for r in read_json(d + "/blind_gemm.json")["rows"]:
            q = rep.get(key(r))
            if not q or not r.get("ms") or not q.get("ms"):
                continue
            (flagged if r["ms"] > 2 * r["min_ms"] else steady).append(r["ms"] / q["ms"])
            p = pred.get(key(r))
            if not p or (r["k"] % 8 == 0 and r["n"] % 8 == 0):
                continue
            for w, t in zip(ways, (r["ms"], q["ms"], min(r["ms"], q["ms"]))):
                one[w].append(abs(p / t - 1))
        sets += 1
        for w in ways:
            errs[w] += one[w]
            met[w] += pct(one[w], .5) <= .08 and pct(one[w], .9) <= .20
    print("H100 awkward sets swept twice in one call: %d" % sets)
    for w in ways:
        print("%-17s unaligned rows %d  median %.1f %%  p90 %.1f %%  sets meeting 8 / 20 %%: %d"
              % (w, len(errs[w]), 100 * pct(errs[w], .5), 100 * pct(errs[w], .9), met[w]))
    print("first / second run, rows with median > 2x min: %d rows, median %.2f"
          % (len(flagged), statistics.median(flagged)))
    print("first / second run, the other rows: %d rows, median %.3f"
          % (len(steady), statistics.median(steady)))


if __name__ == "__main__":
    main()
