#!/usr/bin/env python3
"""The thirty-second round's blind rule (README.md, "Thirty-second round"), fixed before any sweep
of sets 61-64: the thirtieth round's rule (rule_r30.py) with predictions_r32.json (the shipped
model with r32_candidate.patch applied) as the candidate against predictions.json, for each GPU
swept among sets 61-64. r32 ships only if every swept GPU passes. It is judged on its own, not
against the thirty-first round's candidate; should both pass, the combination is checked on fresh
sets before it ships.

  cd data/measurements && python3 h100-awkfam/rule_r32.py h100 [h200]
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rule_r30 import main  # noqa: E402  (the same rule, other sets and candidate)

if __name__ == "__main__":
    main((61, 62, 63, 64), "predictions_r32.json", "r32")
