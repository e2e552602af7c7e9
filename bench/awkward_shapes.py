#!/usr/bin/env python3
"""bench/awkward_shapes.py: production-like awkward GEMMs (issue 25), seeded.

Reads the DLRM example workloads (data/workloads/*.json: dense features, bottom
MLP, interaction width, DCN cross layers, top MLP down to the N = 1 logit) and
writes every linear layer as the three GEMMs a training step runs, at several
per-GPU batches (PyTorch nn.Linear, weight W[out, in] row-major):
  forward  y = x W^T      M = batch, N = out, K = in     layout nt
  dgrad    dx = dy W      M = batch, N = in,  K = out    layout nn
  wgrad    dW = dy^T x    M = out,   N = in,  K = batch  layout tn
(layout: A then B, n = row-major as the GEMM reads it, t = stored transposed;
cost_gemm_op and cost_kproblem read it the same way).
Kept: the awkward ones -- K or N not a multiple of 16, M <= 64, N = 1, K <= 16.
A seeded shuffle picks `--count` of them and deals them alternately into a
fitting half and a blind half (the blind half is never fitted on); with
`--blind-only` all of them go to the blind half. `--exclude FILE` (repeatable:
an earlier problems.json) leaves out every shape (m, n, k, layout) it lists,
so a new blind set is disjoint from the earlier ones. `--stratify` draws the
picks round-robin over the alignment classes (layout; K resp. N not a multiple
of 16; M <= 64), each class shuffled by the seed and the classes visited in a
seeded order, so that every class the pool holds is in the set (a plain
shuffle of 18 from 161 left forward GEMMs with an unaligned K -- 14 of the
pool -- with one shape).
`--batches B1,B2,...` replaces the per-GPU batches of the pool (default: BATCHES,
which drew sets 1-8; the ninth set's are in h200-awkward9/README.md).
The pool is every DLRM example in data/workloads/; dlrm_mixed_dims_block.json
(concat, mixed dims, a dense block; added 2026-12-06 after the ninth set) joined it
then, so the commands of sets 1-9 write their problems.json byte for byte with
`--skip-workload dlrm_mixed_dims_block.json` (the tenth set's pool includes it).
Usage: awkward_shapes.py [--seed S] [--count N] [--exclude FILE]... [--blind-only]
                         [--stratify] [--batches B1,B2,...]
                         [--out FILE] [SOURCE_DIR]
"""
import argparse
import glob
import json
import os
import random

BATCHES = (24, 64, 100, 1000, 4096)


def dlrm_layers(w):
    """(in, out) of every linear layer of a DLRM workload, in order: bottom MLP,
    DCN cross layers, the dense block's GEMMs (their in and out; rows_per_sample
    is not modelled here), top MLP."""
    tables = sum(t.get("count", 1) for t in w["tables"])
    bottom = [w["dense_features"]] + list(w["bottom_mlp"])
    layers = list(zip(bottom[:-1], bottom[1:]))
    inter = w.get("interaction", "dot")
    if inter in ("dcn", "concat"):
        width = bottom[-1] + sum(t["dim"] * t.get("count", 1) for t in w["tables"])
        if inter == "dcn":
            layers += [(width, width)] * w.get("cross_layers", 1)
        width = w.get("pad_interaction_to") or width
    else:
        vec = tables + 1
        width = w.get("pad_interaction_to") or vec * (vec - 1) // 2 + bottom[-1]
    block = w.get("dense_block")
    if block:
        for g in block.get("gemms", []):
            layers += [(g["in"], g["out"])] * g.get("count", 1)
        width = block["out"]
    top = [width] + list(w["top_mlp"])
    return layers + list(zip(top[:-1], top[1:]))


def gemms(fin, fout, batch):
    return [dict(m=batch, n=fout, k=fin, layout="nt", pass_="forward"),
            dict(m=batch, n=fin, k=fout, layout="nn", pass_="dgrad"),
            dict(m=fout, n=fin, k=batch, layout="tn", pass_="wgrad")]


def awkward(g):
    return g["k"] % 16 or g["n"] % 16 or g["m"] <= 64 or g["n"] == 1 or g["k"] <= 16


def aclass(g):
    """The alignment class a GEMM belongs to (for --stratify)."""
    return (g["layout"], g["k"] % 16 != 0, g["n"] % 16 != 0, g["m"] <= 64)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=25)
    ap.add_argument("--count", type=int, default=40)
    ap.add_argument("--out", default=None)
    ap.add_argument("--exclude", action="append", default=[])
    ap.add_argument("--blind-only", action="store_true")
    ap.add_argument("--stratify", action="store_true")
    ap.add_argument("--batches", default=None,
                    help="comma-separated per-GPU batches replacing BATCHES")
    ap.add_argument("--skip-workload", action="append", default=[],
                    help="a data/workloads file name left out of the pool (repeatable)")
    ap.add_argument("src", nargs="?", default=os.path.join(os.path.dirname(__file__), ".."))
    a = ap.parse_args()
    batches = tuple(int(x) for x in a.batches.split(",")) if a.batches else BATCHES
    if any(b <= 0 for b in batches):
        ap.error("--batches: positive integers")
    seen, pool = set(), []
    for f in a.exclude:
        old = json.load(open(f))
        for g in old.get("fit", []) + old.get("blind", []):
            seen.add((g["m"], g["n"], g["k"], g["layout"]))
    excluded = len(seen)
    for f in sorted(glob.glob(os.path.join(a.src, "data", "workloads", "*.json"))):
        w = json.load(open(f)).get("workload", {})
        if w.get("kind") != "dlrm" or os.path.basename(f) in a.skip_workload:
            continue
        for fin, fout in dlrm_layers(w):
            for b in batches:
                for g in gemms(fin, fout, b):
                    key = (g["m"], g["n"], g["k"], g["layout"])
                    if awkward(g) and key not in seen and g["m"] * g["n"] * g["k"] <= 2 ** 36:
                        seen.add(key)
                        g["source"] = "%s %dx%d" % (os.path.basename(f), fin, fout)
                        pool.append(g)
    rng = random.Random(a.seed)
    rng.shuffle(pool)
    if a.stratify:
        cells = {}
        for g in pool:
            cells.setdefault(aclass(g), []).append(g)
        order = sorted(cells)
        rng.shuffle(order)
        pick = []
        while len(pick) < min(a.count, len(pool)):
            for c in order:
                if cells[c] and len(pick) < a.count:
                    pick.append(cells[c].pop(0))
    else:
        pick = pool[:a.count]
    out = {"seed": a.seed, "batches": list(batches), "pool": len(pool), "fit": [], "blind": []}
    if a.exclude:
        out["excluded"] = {"files": [os.path.basename(os.path.dirname(os.path.abspath(f))) + "/" +
                                     os.path.basename(f) for f in a.exclude],
                           "shapes": excluded}
    for i, g in enumerate(pick):
        g["pass"] = g.pop("pass_")
        out["fit" if i % 2 == 0 and not a.blind_only else "blind"].append(g)
    text = json.dumps(out, indent=1)
    if a.out:
        with open(a.out, "w") as fh:
            fh.write(text + "\n")
    else:
        print(text)


if __name__ == "__main__":
    main()
