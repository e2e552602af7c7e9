#!/usr/bin/env python3
"""Issue 25: score the risk-averse picks of risk_picks_33_36.json against the sweeps of sets
33-36, beside the plain picks (the shipped model's), and apply the rule written before the sweep:

  RULE (committed 2026-12-07 before any sweep of sets 33-36): the risk-averse pick goes into the
  C selector only if, on the H100 sweeps of sets 33-36 (bf16 + fp16, pooled), its top-1 geomean
  is at least the plain pick's, its worst is at least the plain pick's, and no fewer sets have
  a worst of 0.85 or more. Otherwise it stays measured, not built.

  python3 data/measurements/h100-awkfam/score_risk.py [GPU]   (default h100)
"""
import json
import math
import os
import sys
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
MEAS = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from fit_awkfam import has_json, read_json  # noqa: E402


def main():
    gpu = sys.argv[1] if len(sys.argv) > 1 else "h100"
    with open(os.path.join(HERE, "risk_picks_33_36.json")) as f:
        picks = [p for p in json.load(f)["picks"] if p["gpu"] == gpu]
    eff = {"plain": defaultdict(list), "risk": defaultdict(list)}
    for s in sorted({p["set"] for p in picks}):
        path = os.path.join(MEAS, f"{gpu}-awkward{s}", "blind_kernel_16bit.json")
        if not has_json(path):
            print("set %d: no %s sweep" % (s, gpu))
            continue
        rows = read_json(path)["rows"]
        meas = {}
        for r in rows:
            key = (r["m"], r["n"], r["k"], r.get("layout", "nn"), r["dtype"])
            meas[key] = {(c["bm"], c["bn"], c["bk"], c["warps"], c["stages"], c.get("split_k", 1)): c["ms"]
                         for c in r["configs"] if c.get("ms") is not None}
        for p in picks:
            if p["set"] != s:
                continue
            m = meas.get((p["m"], p["n"], p["k"], p["layout"], p["dtype"]))
            if not m:
                continue
            best = min(m.values())
            for kind in ("plain", "risk"):
                t = m.get(tuple(p[kind]))
                if t is not None:
                    eff[kind][s].append(best / t)
    res = {}
    for kind in ("plain", "risk"):
        allv = [x for v in eff[kind].values() for x in v]
        if not allv:
            print("no sweeps scored")
            return
        g = math.exp(sum(map(math.log, allv)) / len(allv))
        per = {s: (math.exp(sum(map(math.log, v)) / len(v)), min(v)) for s, v in sorted(eff[kind].items())}
        ok = sum(w >= 0.85 for _, w in per.values())
        res[kind] = (g, min(allv), ok)
        print("%-5s pooled top-1 %.4f worst %.3f, sets with worst >= 0.85: %d of %d; %s"
              % (kind, g, min(allv), ok, len(per),
                 ", ".join("set %d %.3f/%.3f" % (s, a, b) for s, (a, b) in per.items())))
    a, b = res["plain"], res["risk"]
    keep = b[0] >= a[0] and b[1] >= a[1] and b[2] >= a[2]
    print("rule: risk-averse pick %s" % ("goes in" if keep else "stays out (measured, not built)"))


if __name__ == "__main__":
    main()
