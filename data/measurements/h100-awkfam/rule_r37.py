#!/usr/bin/env python3
"""The thirty-seventh round's blind rule, fixed before any sweep of sets 69-76: whether the
thirty-seventh round's candidate (predictions_r37.json: the shipped model built with
r37_candidate.patch, the awkward relative residual refitted on H100 sets 2-68 and H200 sets 2-7
with a second grid bin, the problem's size; fit_awkrel_r37.py) ships. Sets 69-72 (24fbd14) and
73-76 (24fc09b) were drawn, and this file and every set's predictions_r37.json written, before
any of them was swept.

  - The candidate is held to the thirtieth round's rule (rule_r30.py: sets meeting all three
    selection targets at least as many as the shipped picks; pooled top-1 geomean at least the
    shipped one minus 0.003; pooled mean tau at least the shipped one minus 0.005) over every
    swept set among 69-76, on every swept GPU.
  - It ships if it passes on every swept GPU and meets the targets on more sets than the
    shipped picks (all GPUs together), or on as many with a higher pooled top-1 geomean on the
    first GPU named.

  cd data/measurements && python3 h100-awkfam/rule_r37.py h100 [h200]
"""
import os
import sys

MEAS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(MEAS, "h100-awkfam"))
from fit_awkfam import met, score, swept  # noqa: E402

SETS = tuple(range(69, 77))
CANDS = ("predictions_r37.json",)


def main(sets=SETS, cands=CANDS, name="r37"):
    """rule_r38.py runs this with its own sets, candidate and name"""
    gpus = sys.argv[1:] or ["h100"]
    ok = {c: True for c in cands}
    nmet = {c: 0 for c in cands}
    top1 = {}
    nmet_base, top1_base = {}, None
    for g in gpus:
        per = swept(MEAS, g, sets, ("predictions.json",) + cands)
        if not per["predictions.json"]:
            continue
        res = {}
        for r, got in per.items():
            sc = [score(p) for _, p in got]
            pooled = score([x for _, p in got for x in p])
            res[r] = (met(sc), pooled)
            each = " ".join("%d:%.3f/%.3f/%.3f" % ((s,) + x) for (s, _), x in zip(got, sc))
            print("%s %-24s %s | met %d/%d, pooled %.4f/%.3f/%.3f"
                  % ((g, r, each, met(sc), len(sc)) + pooled))
        a = res["predictions.json"]
        nmet_base[g] = a[0]
        if top1_base is None:
            top1_base = a[1][0]
        for c in cands:
            b = res[c]
            good = b[0] >= a[0] and b[1][0] >= a[1][0] - 0.003 and b[1][2] >= a[1][2] - 0.005
            print("%s %s: %s" % (g, c, "passes" if good else "fails"))
            ok[c] = ok[c] and good
            nmet[c] += b[0]
            top1.setdefault(c, b[1][0])
    c = cands[0]
    if c not in top1:
        print("%s: no set swept" % name)
        return
    base_met = sum(nmet_base.values())
    wins = ok[c] and (nmet[c] > base_met or (nmet[c] == base_met and top1[c] > top1_base))
    print("%s: %s %s (%d sets met against %d)"
          % (name, c, "ships" if wins else "does not ship", nmet[c], base_met))


if __name__ == "__main__":
    main()
