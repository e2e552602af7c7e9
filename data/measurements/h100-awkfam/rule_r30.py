#!/usr/bin/env python3
"""The thirtieth round's blind rule (README.md, "Thirtieth round"), fixed before any sweep of
sets 53-56: for each GPU swept (h100, h200), over its swept sets among 53-56, bf16 + fp16 kernel
rows of blind_kernel_16bit.json against the committed predictions.json (the shipped model,
kernel_awk_rel 0) and predictions_r30.json (kernel_awk_rel 1):

  - sets meeting all three selection targets (top-1 >= 0.96, worst >= 0.85, tau >= 0.75) with
    r30's picks: at least as many as with the shipped picks;
  - pooled top-1 geomean: r30 at least the shipped one minus 0.003;
  - pooled mean Kendall tau: r30 at least the shipped one minus 0.005.

r30 ships (kernel_awk_rel 1, costmodel/kernel_space.c) only if every swept GPU passes; otherwise
it stays off. GEMM (cuBLAS) times are the same in both files.

  cd data/measurements && python3 h100-awkfam/rule_r30.py h100 [h200]
"""
import os
import sys

SETS = (53, 54, 55, 56)
MEAS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(MEAS, "h100-awkfam"))
from fit_awkfam import met, score, swept  # noqa: E402


def gpu(g, sets=SETS, cand="predictions_r30.json"):
    per = swept(MEAS, g, sets, ("predictions.json", cand))
    if not per["predictions.json"]:
        return None
    out = {}
    for r, got in per.items():
        sc = [score(p) for _, p in got]
        pooled = score([x for _, p in got for x in p])
        out[r] = (met(sc), len(sc), pooled)
        each = " ".join("%d:%.3f/%.3f/%.3f" % ((s,) + x) for (s, _), x in zip(got, sc))
        print("%s %-16s %s | met %d/%d, pooled %.4f/%.3f/%.3f" % ((g, r, each, met(sc), len(sc))
                                                                 + pooled))
    a, b = out["predictions.json"], out[cand]
    ok = b[0] >= a[0] and b[2][0] >= a[2][0] - 0.003 and b[2][2] >= a[2][2] - 0.005
    print("%s: %s" % (g, "passes" if ok else "fails"))
    return ok


def main(sets=SETS, cand="predictions_r30.json", name="r30"):
    """The rule for one round: its candidate predictions file against predictions.json on its
    sets (rule_r31.py reuses it for the thirty-first round's)."""
    res = [gpu(g, sets, cand) for g in sys.argv[1:] or ["h100"]]
    res = [r for r in res if r is not None]
    print("%s %s" % (name, "ships" if res and all(res) else "stays off"))


if __name__ == "__main__":
    main()
