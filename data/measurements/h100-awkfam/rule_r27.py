#!/usr/bin/env python3
"""The twenty-seventh round's blind rule (README.md, "Twenty-seventh round"), fixed before any
sweep of sets 29-30: for each GPU given (h100, h200), pooled over its swept sets 29 and 30,
bf16 + fp16 kernel rows of blind_kernel_16bit.json against the committed predictions_r26.json
(kernel_dram_eff 1, kernel_dram_q 0) and predictions_r27.json (0.85, 4):

  - moved: configs whose price moved by more than 2 % between the two files; their median
    |log(pred / meas)| must fall;
  - all configs: the median and the p90 of |log(pred / meas)| may each rise by at most 0.005;
  - selection: mean Kendall tau may fall by at most 0.005 (top-1 picks are identical in the
    two files; top-1 geomean and worst are printed).

r27 stays only if every swept GPU passes; otherwise kernel_dram_eff goes back to 1 and
kernel_dram_q to 0 (costmodel/kernel_space.c).

  cd data/measurements && python3 h100-awkfam/rule_r27.py h100 [h200]
"""
import json
import math
import os
import sys

SETS = (29, 30)
MEAS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(MEAS, "h100-awkfam"))
sys.path.insert(0, os.path.join(MEAS, "h100-gemm-time"))
from fit_awkfam import score, swept  # noqa: E402
from tstat import pct  # noqa: E402


def gpu(g):
    per = swept(MEAS, g, SETS, ("predictions_r26.json", "predictions_r27.json"))
    probs = {r: [x for _, p in per[f"predictions_{r}.json"] for x in p] for r in ("r26", "r27")}
    if not probs["r26"]:
        return None
    old = {(p, c): (pr, me) for p, cf in probs["r26"] for c, pr, me in cf}
    new = {(p, c): (pr, me) for p, cf in probs["r27"] for c, pr, me in cf}
    keys = sorted(old.keys() & new.keys())
    moved = [k for k in keys if abs(new[k][0] / old[k][0] - 1) > 0.02]

    def err(tab, ks):
        return [abs(math.log(tab[k][0] / tab[k][1])) for k in ks]

    ok = True
    print(f"{g}: {len(probs['r26'])} problems, {len(keys)} configs, {len(moved)} moved > 2 %")
    a, b = err(old, moved), err(new, moved)
    if moved:
        print("  moved  median |log err| %.4f -> %.4f" % (pct(a, 0.5), pct(b, 0.5)))
        ok &= pct(b, 0.5) < pct(a, 0.5)
    a, b = err(old, keys), err(new, keys)
    for q, name in ((0.5, "median"), (0.9, "p90")):
        print("  all    %-6s |log err| %.4f -> %.4f" % (name, pct(a, q), pct(b, q)))
        ok &= pct(b, q) <= pct(a, q) + 0.005
    so, sn = score(probs["r26"]), score(probs["r27"])
    print("  selection top1 %.4f -> %.4f, worst %.3f -> %.3f, tau %.4f -> %.4f" % (
        so[0], sn[0], so[1], sn[1], so[2], sn[2]))
    ok &= sn[2] >= so[2] - 0.005
    print(f"  {g}: {'PASS' if ok else 'FAIL'}")
    return ok


def main():
    gpus = sys.argv[1:] or ["h100"]
    res = [r for r in (gpu(g) for g in gpus) if r is not None]
    if not res:
        sys.exit("no swept set")
    print("r27 " + ("stays" if all(res) else "goes: kernel_dram_eff 1, kernel_dram_q 0"))


if __name__ == "__main__":
    main()
