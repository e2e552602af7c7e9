#!/usr/bin/env python3
"""The fortieth round's choice (withdrawn 2026-12-08, README.md; gemm.c of 1491067): leave-one-set-
out over H100 sets 2-68 and H200 sets 2-7 among the variants whose predictions are in
DIR/VARIANT/{h100,h200}_N.json (r40.sh writes them: off, and K > 0 / 64 / 128 / 256 with
M >= 1024). Each fold picks the variant with the least mean |log(pred/meas)| over the other sets'
unaligned rows (K or N not a multiple of 8, blind_gemm.json) and scores the left-out set with it;
the first variant named is the reference (the model without the round). Then each variant
in-sample on H100 sets 2-68, on sets 69-76 (not fitted, but looked at while the round was
found) and on H200 sets 2-7.

  python3 r40_loso.py DIR off k0 k64 k128 k256     (from data/measurements)"""
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from score_time import key  # noqa: E402  (a row's shape, layout and dtype, one copy)
from tstat import pct  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "h100-awkfam"))
from fit_awkfam import has_json, read_json  # noqa: E402



def errs(pdir, g, s):
    """[(|pred/meas - 1|, |log|)] of the unaligned rows of set s of GPU g, or None"""
    sweep, pf = "%s-awkward%d/blind_gemm.json" % (g, s), os.path.join(pdir, "%s_%d.json" % (g, s))
    if not has_json(sweep) or not os.path.exists(pf):
        return None
    with open(pf) as f:
        pred = {key(r): r["ms"] for r in json.load(f)["gemm"]}
    out = []
    for r in read_json(sweep)["rows"]:
        p = pred.get(key(r))
        if p and r.get("ms", 0) > 0 and (r["k"] % 8 or r["n"] % 8):
            out.append((abs(p / r["ms"] - 1), abs(math.log(p / r["ms"]))))
    return out


def met(e):
    return pct([a for a, _ in e], .5) <= .08 and pct([a for a, _ in e], .9) <= .20


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    d, tags = sys.argv[1], sys.argv[2:]
    fit = [("h100", s) for s in range(2, 69)] + [("h200", s) for s in range(2, 8)]
    E = {}
    for t in tags:
        for g, s in fit + [("h100", s) for s in range(69, 77)]:
            e = errs(os.path.join(d, t), g, s)
            if e:
                E[(t, g, s)] = e
    have = [x for x in fit if all((t,) + x in E for t in tags)]
    picks, left, ref, n_met, r_met = {}, [], [], 0, 0
    for x in have:
        def loss(t):
            rows = [l for y in have if y != x for _, l in E[(t,) + y]]
            return sum(rows) / len(rows)
        best = min(tags, key=loss)
        picks[best] = picks.get(best, 0) + 1
        left += E[(best,) + x]
        ref += E[(tags[0],) + x]
        n_met += met(E[(best,) + x])
        r_met += met(E[(tags[0],) + x])
    print("leave-one-set-out over %d sets (H100 2-68, H200 2-7): picks %s" % (len(have), picks))
    for name, e, m in (("left-out, chosen", left, n_met), ("left-out, " + tags[0], ref, r_met)):
        print("  %-22s unaligned %4d rows median %.1f %% p90 %.1f %%, sets meeting 8 / 20 %%: %d"
              % (name, len(e), 100 * pct([a for a, _ in e], .5), 100 * pct([a for a, _ in e], .9),
                 m))
    for t in tags:
        for label, xs in (("H100 2-68", [x for x in have if x[0] == "h100"]),
                          ("H100 69-76", [("h100", s) for s in range(69, 77)]),
                          ("H200 2-7", [x for x in have if x[0] == "h200"])):
            xs = [x for x in xs if (t,) + x in E]
            e = [v for x in xs for v in E[(t,) + x]]
            print("  %-5s %-10s %2d sets met %2d, unaligned median %.1f %% p90 %.1f %%, mean |log| %.4f"
                  % (t, label, len(xs), sum(met(E[(t,) + x]) for x in xs),
                     100 * pct([a for a, _ in e], .5), 100 * pct([a for a, _ in e], .9),
                     sum(l for _, l in e) / len(e)))


if __name__ == "__main__":
    main()
