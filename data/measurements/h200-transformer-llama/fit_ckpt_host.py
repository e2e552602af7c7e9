#!/usr/bin/env python3
"""Fits the profile's step_ckpt_host_mult (costmodel/step_fit.c) on the FITTING halves of
h200-transformer and h200-transformer-llama: the host time of an eager step with full
recompute, as a multiple of the plain step's per-op dispatch. For each fit case with
checkpointing "full", cdplan gives host_ms (divided by the multiplier the binary carries, K0,
to get the plain dispatch: 1 before the term existed, 3.73 since; the optimizer phase's few host
ops are not multiplied, so a rerun from a 3.73 binary gives 3.74) and gpu_ms; the step is their
soft maximum (p = step_overlap_p = 64, docs/step-model.md "Host and GPU"); the multiplier on a
grid minimises the sum of squared log errors. Check cases are never read.

  python3 data/measurements/h200-transformer-llama/fit_ckpt_host.py build/cli/cdplan [K0]
"""
import json
import math
import os
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.join(here, "..")
cdplan = sys.argv[1]
k0 = float(sys.argv[2]) if len(sys.argv) > 2 else 3.73
pts = []
with tempfile.TemporaryDirectory() as d:
    db = os.path.join(d, "p.db")
    for D in ("h200-transformer", "h200-transformer-llama"):
        cs = json.load(open(os.path.join(root, D, "cases.json")))["cases"]
        st = json.load(open(os.path.join(root, D, "steps.json")))["rows"]
        for c, r in zip(cs, st):
            if c["role"] != "fit" or c["recipe"].get("checkpointing") != "full":
                continue
            req = json.dumps({"hardware": "h200", "workload": c["workload"], "recipe": c["recipe"]})
            o = json.loads(subprocess.run([cdplan, "step", "-", "--db", db], input=req,
                                          capture_output=True, text=True, check=True).stdout)
            pts.append((c["id"], r["step_ms"], o["host_ms"] / k0, o["gpu_ms"]))


def step(host, gpu, p=64.0):
    m = max(host, gpu)
    return m * ((host / m) ** p + (gpu / m) ** p) ** (1.0 / p)


best = None
for i in range(100, 801):
    k = i / 100.0
    sse = sum(math.log(step(h * k, g) / m) ** 2 for _, m, h, g in pts)
    if best is None or sse < best[0]:
        best = (sse, k)
k = best[1]
print(json.dumps({"fit_cases": [p[0] for p in pts], "step_ckpt_host_mult": k,
                  "errors": {p[0]: round(step(p[2] * k, p[3]) / p[1] - 1, 4) for p in pts}},
                 indent=1))
