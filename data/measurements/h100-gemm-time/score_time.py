#!/usr/bin/env python3
"""Score committed cuBLAS GEMM-time predictions on swept sets: |pred/meas - 1| median and p90
(bench/kernel_awkward's percentiles) over all rows and over the unaligned ones (K or N not a
multiple of 8), per set and pooled, for each predictions file name.

  python3 score_time.py [--sweep FILE] NAME [NAME ...] -- SET_DIR [SET_DIR ...]

Each SET_DIR holds blind_gemm.json (the sweep) and the named predictions files, e.g.
  score_time.py predictions_r20.json predictions_r21.json -- ../h100-awkward25 ../h100-awkward26
--sweep names another sweep file of each SET_DIR (blind_gemmbl.json: the same calls timed after
a 100 us backlog, which hides the host's launch path; blind_gemm_repeat.json: the same calls
again).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tstat import pct  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "h100-awkfam"))
from fit_awkfam import read_json  # noqa: E402


def key(r):
    return (r["m"], r["n"], r["k"], r.get("layout", "nn"), r["dtype"])


SWEEP = "blind_gemm.json"


def matched(set_dir, name, sweep=None):
    """(predicted row, |pred/meas - 1|) of each row of predictions file name the sweep measured"""
    meas = {key(r): r["ms"] for r in read_json(os.path.join(set_dir, sweep or SWEEP))["rows"]}
    pred = read_json(os.path.join(set_dir, name))["gemm"]
    return [(p, abs(p["ms"] / meas[key(p)] - 1)) for p in pred if meas.get(key(p))]


def errors(set_dir, name):
    return [(p["k"] % 8 != 0 or p["n"] % 8 != 0, e) for p, e in matched(set_dir, name)]


def stat(v):
    """n, median and p90 in %, or dashes for an empty class (the M = 1 probe is all aligned)"""
    if not v:
        return "%3d median   --  p90   -- " % 0
    return "%3d median %5.1f%% p90 %5.1f%%" % (len(v), 100 * pct(v, .5), 100 * pct(v, .9))


def line(label, e):
    a = [x for _, x in e]
    u = [x for un, x in e if un]
    return "%-40s all %s | unaligned %s" % (label, stat(a), stat(u))


def main():
    global SWEEP
    args = sys.argv[1:]
    if args[:1] == ["--sweep"] and len(args) > 1:
        SWEEP, args = args[1], args[2:]
    if "--" not in args:
        sys.exit(__doc__)
    i = args.index("--")
    names, dirs = args[:i], args[i + 1:]
    for name in names:
        pooled = []
        for d in dirs:
            e = errors(d, name)
            pooled += e
            print(line("%s %s" % (os.path.basename(os.path.normpath(d)), name), e))
        print(line("pooled " + name, pooled))


if __name__ == "__main__":
    main()
