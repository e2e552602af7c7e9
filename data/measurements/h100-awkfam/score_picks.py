#!/usr/bin/env python3
"""Score committed picks on a swept set: bf16 + fp16 top-1 geomean / worst / mean Kendall tau,
as bench/kernel_sweep.c ks_evaluate does, from a predictions file's ranked configs (the model's
times as committed) and the sweep's measured configs.

  python3 data/measurements/h100-awkfam/score_picks.py SWEEP.json PREDICTIONS.json [...]
"""
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fit_awkfam import kendall  # noqa: E402


def score(sweep, preds):
    with open(sweep) as f:
        rows = json.load(f)["rows"]
    with open(preds) as f:
        sel = json.load(f)["selection"]
    pm = {}
    for p in sel:
        for c in p["ranked"]:
            pm[(p["m"], p["n"], p["k"], p["layout"], p["dtype"], c["bm"], c["bn"], c["bk"],
                c["warps"], c["stages"], c["split_k"])] = c["ms"]
    le = tau = 0.0
    worst, n = 1.0, 0
    for r in rows:
        if r["dtype"] not in ("bf16", "fp16"):
            continue
        prob = (r["m"], r["n"], r["k"], r.get("layout", "nn"), r["dtype"])
        pr, me = [], []
        for c in r["configs"]:
            key = prob + (c["bm"], c["bn"], c["bk"], c["warps"], c["stages"], c.get("split_k", 1))
            if c.get("ms") is None or key not in pm:
                continue
            pr.append(pm[key])
            me.append(c["ms"])
        if not pr:
            continue
        i = min(range(len(pr)), key=lambda j: pr[j])
        eff = min(me) / me[i]
        le += math.log(eff)
        worst = min(worst, eff)
        tau += kendall(pr, me)
        n += 1
    return n, math.exp(le / n), worst, tau / n


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    for p in sys.argv[2:]:
        n, g, w, t = score(sys.argv[1], p)
        print("%-60s %3d  top1 %.3f worst %.3f tau %.3f" % (p, n, g, w, t))


if __name__ == "__main__":
    main()
