#!/usr/bin/env python3
"""Issue 25, nineteenth round: fit and check the awkward-sweep residual.

Per 16-bit Triton config of the awkward sweeps, the shipped model's error
ln(predicted / measured) minus its problem's median error (what selection
sees: only the ranking within a problem matters), medianed over the
configs within NEAR x of their problem's best measured time and grouped by
a key of the tile shape. Fitted on the blind H100 sets 4-16; the form (key,
band, weight) is chosen by leave-one-set-out over those 13 sets (sets meeting
all three selection targets, then the geomean); sets 17-21 and the H200
sets 2-7 are scored after, never fitted.

  python3 data/measurements/h100-awkfam/fit_awkfam.py [--table]

Runs build/bench/kernel_awkward --predict with AWK_FAM_W=0 (the model
without the residual) for each set's jobs; --table prints the C table of
costmodel/kernel_family.c (hopper_awk) for the chosen form. fit_awkfam.txt
beside this file is its output at main 7e7d74c, where the table was fitted;
later rounds change the model under the residual (the twentieth: an A of
one row), so a run now prints entries up to 0.002 away and the table keeps
the fitted values.
"""
import gzip
import json
import math
import os
import subprocess
import sys
import tempfile
from collections import defaultdict

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
MEAS = os.path.join(ROOT, "data", "measurements")
FIT_SETS = list(range(4, 17))
CHECK_SETS = list(range(17, 22))
H200_SETS = [2, 3, 4, 5, 6, 7]
TARGET = (0.96, 0.85, 0.75)


def predict(gpu, s, tmp, env=None):
    """Set s's jobs priced for gpu by build/bench/kernel_awkward --predict, with env (default:
    AWK_FAM_W=0, the model without the residual) added to the environment"""
    out = os.path.join(tmp, f"{gpu}_{s}.json")
    cmd = [os.path.join(ROOT, "build", "bench", "kernel_awkward"), "--jobs",
           os.path.join(MEAS, f"h200-awkward{s}", "jobs"), "--predict", out]
    if gpu == "h100":
        cmd[1:1] = ["--hw", "h100-sxm"]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, cwd=ROOT,
                   env=dict(os.environ, **(env if env is not None else {"AWK_FAM_W": "0"})))
    with open(out) as f:
        return json.load(f)["selection"]


def join(selection, rows):
    """A predictions file's "selection" against a sweep's measured rows, bf16/fp16 problems only:
    [(problem key, [(config, predicted ms, measured ms)])] over the configs both hold."""
    pm = {}
    for p in selection:
        for c in p["ranked"]:
            pm[(p["m"], p["n"], p["k"], p["layout"], p["dtype"], c["bm"], c["bn"], c["bk"],
                c["warps"], c["stages"], c["split_k"])] = c["ms"]
    out = []
    for r in rows:
        if r["dtype"] not in ("bf16", "fp16"):
            continue
        prob = (r["m"], r["n"], r["k"], r.get("layout", "nn"), r["dtype"])
        cf = []
        for c in r["configs"]:
            if c.get("ms") is None:
                continue
            key = prob + (c["bm"], c["bn"], c["bk"], c["warps"], c["stages"], c.get("split_k", 1))
            if key in pm:
                cf.append((key[5:], pm[key], c["ms"]))
        if cf:
            out.append((prob, cf))
    return out


def swept(meas, gpu, sets, files):
    """Each swept set among sets of gpu (meas/GPU-awkwardS/blind_kernel_16bit.json) joined
    with each committed predictions file named in files: {file: [(set, problems)]}; a set not
    swept is said so and left out"""
    out = {f: [] for f in files}
    for s in sets:
        d = os.path.join(meas, f"{gpu}-awkward{s}")
        sweep = os.path.join(d, "blind_kernel_16bit.json")
        if not has_json(sweep):
            print(f"{gpu} set {s}: not swept")
            continue
        rows = read_json(sweep)["rows"]
        for name in files:
            out[name].append((s, join(read_json(os.path.join(d, name))["selection"], rows)))
    return out


def has_json(path):
    """Whether a committed JSON file is there, plain or as its gzip -n copy (path + ".gz")"""
    return os.path.exists(path) or os.path.exists(path + ".gz")


def read_json(path):
    """A committed JSON file, or its gzip -n copy (path + ".gz") where only that is kept"""
    if os.path.exists(path):
        with open(path) as f:
            return json.load(f)
    with gzip.open(path + ".gz", "rt") as f:
        return json.load(f)


def load(gpu, s, tmp):
    """Set s of gpu under the model without the residual, as join() gives it."""
    rows = read_json(os.path.join(MEAS, f"{gpu}-awkward{s}", "blind_kernel_16bit.json"))["rows"]
    return join(predict(gpu, s, tmp), rows)


def key_of(form, prob, c):
    short = prob[2] <= 128
    if form.endswith("@shortk"):  # only K <= 128 has an entry
        return key_of(form[:-7], prob, c) if short else None
    return {"cfg": c, "tile": (c[0], c[1], c[3]), "cfg+layout": c + (prob[3],),
            "cfg+shortk": c + (short,), "tile+shortk": (c[0], c[1], c[3], short)}[form]


def fit(probs, form, near):
    groups = defaultdict(list)
    for prob, cf in probs:
        best = min(m for _, _, m in cf)
        res = sorted(math.log(p / m) for _, p, m in cf)
        mid = res[len(res) // 2]
        for c, p, m in cf:
            k = key_of(form, prob, c)
            if k is not None and (near is None or m <= near * best):
                groups[k].append(math.log(p / m) - mid)
    return {k: sorted(v)[len(v) // 2] for k, v in groups.items()}, groups


def kendall(x, y):
    conc = disc = 0
    for i in range(len(x)):
        for j in range(i + 1, len(x)):
            a, b = x[i] - x[j], y[i] - y[j]
            if a == 0 or b == 0:
                continue
            if (a > 0) == (b > 0):
                conc += 1
            else:
                disc += 1
    return (conc - disc) / (conc + disc) if conc + disc else 0.0


def score(probs, table=None, form=None, w=1.0):
    """top-1 geomean, worst, mean tau, as bench/kernel_sweep.c ks_evaluate"""
    le = tau = 0.0
    worst = 1.0
    for prob, cf in probs:
        pr = [p * math.exp(-w * table.get(key_of(form, prob, c), 0.0)) if table else p
              for c, p, _ in cf]
        me = [m for _, _, m in cf]
        i = min(range(len(cf)), key=lambda j: pr[j])
        eff = min(me) / me[i]
        le += math.log(eff)
        worst = min(worst, eff)
        tau += kendall(pr, me)
    return math.exp(le / len(probs)), worst, tau / len(probs)


def met(scores):
    return sum(all(a >= t for a, t in zip(sc, TARGET)) for sc in scores)


def fmt(sc):
    return "%.3f/%.3f/%.3f" % sc


def main():
    with tempfile.TemporaryDirectory() as tmp:
        h100 = {s: load("h100", s, tmp) for s in FIT_SETS + CHECK_SETS}
        h200 = {s: load("h200", s, tmp) for s in H200_SETS}
    forms = []
    print("leave-one-set-out over H100 sets %d-%d (sets meeting all three targets, geomean)"
          % (FIT_SETS[0], FIT_SETS[-1]))
    base = [score(h100[s]) for s in FIT_SETS]
    gb = math.exp(sum(math.log(a[0]) for a in base) / len(base))
    print("  shipped (no residual)         met %2d/13 geo %.4f" % (met(base), gb))
    for form in ("cfg", "tile", "cfg+layout", "cfg+shortk", "tile+shortk", "cfg@shortk",
                 "tile@shortk"):
        for near in (None, 1.5, 1.2):
            for w in (0.5, 1.0):
                lo = []
                for s in FIT_SETS:
                    t, _ = fit([p for u in FIT_SETS if u != s for p in h100[u]], form, near)
                    lo.append(score(h100[s], t, form, w))
                g = math.exp(sum(math.log(a[0]) for a in lo) / len(lo))
                forms.append((met(lo), g, form, near, w))
                print("  %-12s near %-4s w %.1f   met %2d/13 geo %.4f worst %.3f"
                      % (form, near, w, met(lo), g, min(a[1] for a in lo)))
    # Forms with entries at K > 128 cost the standard-shape selection that
    # the family table was fitted for (bench/kernel_select on the H200's
    # held-out sweeps: tile+shortk at 1.2 / 1: held-all tau 0.790 -> 0.752,
    # top-1 0.969 -> 0.956); there the H200 fit set covers the main loop,
    # while K <= 128 (one or two K steps) it holds one shape. So the choice
    # is among the K <= 128 forms.
    forms = sorted((f for f in forms if f[2].endswith("@shortk")), key=lambda f: (f[0], f[1]),
                   reverse=True)
    _, _, form, near, w = forms[0]
    print("chosen: %s near %s w %.1f" % (form, near, w))
    table, groups = fit([p for s in FIT_SETS for p in h100[s]], form, near)
    print("scored, never fitted (shipped -> with the residual), bf16+fp16 top-1 / worst / tau:")
    for name, sets, d in (("H100", CHECK_SETS, h100), ("H200", H200_SETS, h200)):
        a = [score(d[s]) for s in sets]
        b = [score(d[s], table, form, w) for s in sets]
        for s, x, y in zip(sets, a, b):
            print("  %s set %2d  %s -> %s" % (name, s, fmt(x), fmt(y)))
        print("  %s sets meeting all three targets: %d -> %d of %d" % (name, met(a), met(b), len(sets)))
    if "--table" in sys.argv:
        for k in sorted(table):  # cfg keys: BLOCK_M, _N, _K, warps, stages, split_k
            print("    {%s, %.3f}, /* %d configs */"
                  % (", ".join(str(x) for x in k), table[k], len(groups[k])))


if __name__ == "__main__":
    main()
