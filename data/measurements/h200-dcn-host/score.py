#!/usr/bin/env python3
"""Score this folder's sets: measured steps against every committed prediction file of the set.

    python3 score.py            # set A: score.txt
    python3 score.py b          # set B: score_b.txt
    python3 score.py c          # set C, once dcn_host_c.json is here

The scoring itself is cases.py's `score` (per case, median and max |error| over all, fused and
eager rows, peak memory), run with BLIND_SET set to the set.
"""
import os
import sys

if __name__ == "__main__":
    os.environ["BLIND_SET"] = sys.argv[1] if len(sys.argv) > 1 else "a"
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import cases  # noqa: E402

    cases.score()
