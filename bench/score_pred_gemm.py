#!/usr/bin/env python3
"""GEMM time of a committed predictions file (its "gemm" array, written by
`kernel_awkward --predict` before a sweep) against a measured gemm_sweep
result (blind_gemm.json): |pred/meas - 1|, median and p90 (linear
interpolation, as bench/kernel_awkward.c's pct()), over all rows and over
the unaligned ones (K or N not a multiple of 8), and per dtype. Used to
score the candidates' predictions on a blind set; on a shipped model's
predictions.json it must print kernel_awkward --blind-dir's figures.
With --first-pass, a row swept in several passes (runner 1.1: pass_ms) is scored on its first
pass's median, as a single-pass sweep (runner 1.0) measured it, instead of the lowest (ms).
Usage: score_pred_gemm.py [--first-pass] PREDICTIONS.json BLIND_GEMM.json [LABEL]"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data",
                                "measurements", "h100-floor"))
from floor_cv import pct  # noqa: E402  (the bench's percentile, one copy)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data",
                                "measurements", "h100-awkfam"))
from fit_awkfam import read_json  # noqa: E402  (a file or its gzip -n copy, one copy)


def main():
    args = sys.argv[1:]
    first = "--first-pass" in args
    args = [a for a in args if a != "--first-pass"]
    if len(args) < 2:
        sys.exit(__doc__)
    pred = read_json(args[0])
    meas = read_json(args[1])
    label = args[2] if len(args) > 2 else args[0]
    key = lambda r: (r["m"], r["n"], r["k"], r.get("layout") or "nn", r["dtype"])
    p = {key(r): r["ms"] for r in pred.get("gemm", [])}
    rows = []
    for r in meas.get("rows", []):
        k = key(r)
        ms = r["pass_ms"][0] if first and r.get("pass_ms") else r.get("ms", 0)
        if k in p and ms > 0:
            rows.append((k, abs(p[k] / ms - 1)))
    missing = len(meas.get("rows", [])) - len(rows)
    groups = [("all", lambda k: True), ("unaligned", lambda k: k[2] % 8 or k[1] % 8)]
    groups += [(d, (lambda d: lambda k: k[4] == d)(d)) for d in ("bf16", "fp16", "tf32", "fp8")]
    for name, f in groups:
        e = [x for k, x in rows if f(k)]
        if e:
            print("%-28s %-10s %4d  median %5.1f%%  p90 %5.1f%%" %
                  (label, name, len(e), pct(e, .5) * 100, pct(e, .9) * 100))
    if missing:
        print("%-28s %d measured rows had no prediction" % (label, missing))


if __name__ == "__main__":
    main()
