#!/usr/bin/env python3
"""Per (GPU, M, N, layout, K <= 512 or not), the awkward-sweep rows whose cuBLAS time differs
between two prediction folders (r41_grid.sh), and their mean |log(pred/meas)| in each.
  python3 r41_changed.py DIR_A DIR_B      (from data/measurements)"""
import json
import math
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "h100-awkfam"))
from fit_awkfam import has_json, read_json  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from score_time import key  # noqa: E402  (a row's shape, layout and dtype, one copy)



def main():
    a, b = sys.argv[1], sys.argv[2]
    groups = defaultdict(lambda: [0, 0.0, 0.0])
    for g, sets in (("h100", range(2, 77)), ("h200", range(2, 8))):
        for s in sets:
            sweep = "%s-awkward%d/blind_gemm.json" % (g, s)
            pa, pb = ("%s/%s_%d.json" % (d, g, s) for d in (a, b))
            if not has_json(sweep) or not os.path.exists(pa):
                continue
            with open(pa) as f:
                ta = {key(r): r["ms"] for r in json.load(f)["gemm"]}
            with open(pb) as f:
                tb = {key(r): r["ms"] for r in json.load(f)["gemm"]}
            for r in read_json(sweep)["rows"]:
                k = key(r)
                if k not in ta or abs(ta[k] / tb[k] - 1) < 1e-6:
                    continue
                v = groups[(g, k[0], k[1], k[3], "K<=512" if k[2] <= 512 else "K>512")]
                v[0] += 1
                v[1] += abs(math.log(ta[k] / r["ms"]))
                v[2] += abs(math.log(tb[k] / r["ms"]))
    for c, (n, ea, eb) in sorted(groups.items()):
        print("%s rows %d mean |log| %.3f -> %.3f" % (c, n, ea / n, eb / n))


if __name__ == "__main__":
    main()
