#!/usr/bin/env python3
"""The thirty-first round's blind rule (README.md, "Thirty-first round"), fixed before any sweep of
sets 61-64: for each GPU swept (h100, h200), over its swept sets among 61-64, bf16 + fp16 kernel
rows of blind_kernel_16bit.json against the committed predictions.json (the shipped model: the
thirtieth round's table) and predictions_r31.json (its grid-binned table):

  - sets meeting all three selection targets (top-1 >= 0.96, worst >= 0.85, tau >= 0.75) with
    r31's picks: at least as many as with the shipped picks;
  - pooled top-1 geomean: r31 at least the shipped one minus 0.003;
  - pooled mean Kendall tau: r31 at least the shipped one minus 0.005.

r31 ships (the grid-binned hopper_awkrel in costmodel/kernel_family.c) only if every swept GPU
passes; otherwise the thirtieth round's table stays. GEMM (cuBLAS) times are the same in both files.

  cd data/measurements && python3 h100-awkfam/rule_r31.py h100 [h200]
"""
import os
import sys

SETS = (61, 62, 63, 64)
MEAS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(MEAS, "h100-awkfam"))
from fit_awkfam import met, score, swept  # noqa: E402


def gpu(g):
    per = swept(MEAS, g, SETS, ("predictions.json", "predictions_r31.json"))
    if not per["predictions.json"]:
        return None
    out = {}
    for r, sets in per.items():
        sc = [score(p) for _, p in sets]
        pooled = score([x for _, p in sets for x in p])
        out[r] = (met(sc), len(sc), pooled)
        each = " ".join("%d:%.3f/%.3f/%.3f" % ((s,) + x) for (s, _), x in zip(sets, sc))
        print("%s %-16s %s | met %d/%d, pooled %.4f/%.3f/%.3f" % ((g, r, each, met(sc), len(sc))
                                                                 + pooled))
    a, b = out["predictions.json"], out["predictions_r31.json"]
    ok = b[0] >= a[0] and b[2][0] >= a[2][0] - 0.003 and b[2][2] >= a[2][2] - 0.005
    print("%s: %s" % (g, "passes" if ok else "fails"))
    return ok


def main():
    res = [gpu(g) for g in sys.argv[1:] or ["h100"]]
    res = [r for r in res if r is not None]
    print("r31 %s" % ("ships" if res and all(res) else "stays off"))


if __name__ == "__main__":
    main()
