#!/usr/bin/env python3
"""The thirty-third round's blind rule, fixed before any sweep of sets 61-68: which of the
thirty-first round's candidate (predictions_r31.json), the thirty-second's (predictions_r32.json),
the two together (predictions_r3132.json: the shipped model built with r31_candidate.patch and
then r32_candidate.patch) and the thirty-fifth's (predictions_r35.json: r32's kernel.c with r31's
table form refitted under it, r35_candidate.patch) ships. Sets 65-68 were drawn and all files
written for sets 61-68 before any of them was swept (r35's added, with this line, still before
any sweep).

  - Each candidate is held to the thirtieth round's rule (rule_r30.py: sets meeting all three
    selection targets at least as many as the shipped picks; pooled top-1 geomean at least the
    shipped one minus 0.003; pooled mean tau at least the shipped one minus 0.005) over every
    swept set among 61-68, on every swept GPU.
  - Of those that pass, the one meeting the targets on the most sets (all GPUs together) ships;
    a tie goes to the higher pooled top-1 geomean of the first GPU named. None passing: nothing
    ships.

rule_r31.py and rule_r32.py (sets 61-64 only) are still printed for the record; this rule
decides.

  cd data/measurements && python3 h100-awkfam/rule_r33.py h100 [h200]
"""
import os
import sys

MEAS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(MEAS, "h100-awkfam"))
from fit_awkfam import met, score, swept  # noqa: E402

SETS = tuple(range(61, 69))
CANDS = ("predictions_r31.json", "predictions_r32.json", "predictions_r3132.json",
         "predictions_r35.json")


def main():
    gpus = sys.argv[1:] or ["h100"]
    ok = {c: True for c in CANDS}
    nmet = {c: 0 for c in CANDS}
    top1 = {}
    for g in gpus:
        per = swept(MEAS, g, SETS, ("predictions.json",) + CANDS)
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
        for c in CANDS:
            b = res[c]
            good = b[0] >= a[0] and b[1][0] >= a[1][0] - 0.003 and b[1][2] >= a[1][2] - 0.005
            print("%s %s: %s" % (g, c, "passes" if good else "fails"))
            ok[c] = ok[c] and good
            nmet[c] += b[0]
            top1.setdefault(c, b[1][0])
    live = [c for c in CANDS if ok[c] and c in top1]
    if not live:
        print("r33: nothing ships")
        return
    best = max(live, key=lambda c: (nmet[c], top1[c]))
    print("r33: %s ships (%d sets met)" % (best, nmet[best]))


if __name__ == "__main__":
    main()
