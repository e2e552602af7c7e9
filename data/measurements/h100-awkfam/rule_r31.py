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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rule_r30 import main  # noqa: E402  (the same rule, other sets and candidate)

if __name__ == "__main__":
    main((61, 62, 63, 64), "predictions_r31.json", "r31")
