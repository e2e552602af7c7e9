#!/usr/bin/env python3
"""Score committed cuBLAS GEMM-time predictions on swept sets: |pred/meas - 1| median and p90
(bench/kernel_awkward's percentiles) over all rows and over the unaligned ones (K or N not a
multiple of 8), per set and pooled, for each predictions file name.

  python3 score_time.py NAME [NAME ...] -- SET_DIR [SET_DIR ...]

Each SET_DIR holds blind_gemm.json (the sweep) and the named predictions files, e.g.
  score_time.py predictions_r20.json predictions_r21.json -- ../h100-awkward25 ../h100-awkward26
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tstat import pct  # noqa: E402


def key(r):
    return (r["m"], r["n"], r["k"], r.get("layout", "nn"), r["dtype"])


def errors(set_dir, name):
    with open(os.path.join(set_dir, "blind_gemm.json")) as f:
        meas = {key(r): r["ms"] for r in json.load(f)["rows"]}
    with open(os.path.join(set_dir, name)) as f:
        pred = json.load(f)["gemm"]
    out = []
    for p in pred:
        m = meas.get(key(p))
        if m:
            out.append((p["k"] % 8 != 0 or p["n"] % 8 != 0, abs(p["ms"] / m - 1)))
    return out


def line(label, e):
    a = [x for _, x in e]
    u = [x for un, x in e if un]
    return "%-40s all %3d median %5.1f%% p90 %5.1f%% | unaligned %3d median %5.1f%% p90 %5.1f%%" % (
        label, len(a), 100 * pct(a, .5), 100 * pct(a, .9), len(u), 100 * pct(u, .5), 100 * pct(u, .9))


def main():
    if "--" not in sys.argv:
        sys.exit(__doc__)
    i = sys.argv.index("--")
    names, dirs = sys.argv[1:i], sys.argv[i + 1:]
    for name in names:
        pooled = []
        for d in dirs:
            e = errors(d, name)
            pooled += e
            print(line("%s %s" % (os.path.basename(os.path.normpath(d)), name), e))
        print(line("pooled " + name, pooled))


if __name__ == "__main__":
    main()
