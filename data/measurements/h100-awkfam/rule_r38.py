#!/usr/bin/env python3
"""The thirty-eighth round's blind rule, fixed before any sweep of sets 71 and 77-80: whether the
thirty-eighth round's candidate (predictions_r38.json: the shipped model built with
r38_candidate.patch, the awkward relative residual refitted on H100 sets 2-70 and 72-76 and H200
sets 2-7 with a second grid bin, the problem's size, at one K step only; fit_awkrel_r38.py)
ships. Set 71 (24fbd14, cut off unswept on 12-08) and sets 77-80 (b8ab0d9) were drawn, and this
file and every set's predictions_r38.json written, before any of them was swept.

  - The candidate is held to the thirtieth round's rule (rule_r30.py: sets meeting all three
    selection targets at least as many as the shipped picks; pooled top-1 geomean at least the
    shipped one minus 0.003; pooled mean tau at least the shipped one minus 0.005) over every
    swept set among 71 and 77-80, on every swept GPU.
  - It ships if it passes on every swept GPU and meets the targets on more sets than the
    shipped picks (all GPUs together), or on as many with a higher pooled top-1 geomean on the
    first GPU named.

  cd data/measurements && python3 h100-awkfam/rule_r38.py h100 [h200]
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rule_r37  # noqa: E402  (the same rule, run on this round's sets and candidate)

SETS = (71, 77, 78, 79, 80)
CANDS = ("predictions_r38.json",)


if __name__ == "__main__":
    rule_r37.main(SETS, CANDS, "r38")
