#!/usr/bin/env python3
"""Fits step_coalesce_sync_us and step_coalesce_ns (costmodel/step_fit.c) on the FITTING half
of these 18 steps only, and scores the check half:

  DCN_HW=h100-sxm DCN_CAP=20000000 python3 data/measurements/h200-dcn-mlperf/cases.py \
      predict build/cli/cdplan > /tmp/pred.json
  python3 data/measurements/h100-dcn-mlperf/fit_coalesce.py /tmp/pred.json [SYNC_US NS]

SYNC_US and NS are the values the predictions were made with (the shipped defaults, 225 and
2.47): both terms are additive in these steps (every table in HBM, eager, row-wise Adagrad:
the optimizer phase is serial), so the script takes them out, grid-searches the pair that
minimizes the squared log error over the fit half (the measured time of a case is the mean of
dcn.json and dcn_repeat.json), and prints every case with the fitted pair.
"""
import json
import math
import os
import statistics
import sys

here = os.path.dirname(os.path.abspath(__file__))
pred = json.load(open(sys.argv[1]))["predictions"]
s0 = float(sys.argv[2]) * 1e-3 if len(sys.argv) > 2 else 0.225  # ms per table
c0 = float(sys.argv[3]) * 1e-6 if len(sys.argv) > 3 else 2.47e-6  # ms per lookup
cases = {c["label"]: c for c in json.load(open(os.path.join(here, "job.json")))["params"]["cases"]}
meas = [{r["label"]: r["step_ms"] for r in json.load(open(os.path.join(here, f)))["rows"]}
        for f in ("dcn.json", "dcn_repeat.json")]
rows = []
for p in pred:
    w, rc = cases[p["id"]]["workload"], cases[p["id"]]["recipe"]
    n = len(w["tables"])
    lookups = rc["batch_per_gpu"] * sum(t["pooling"] for t in w["tables"])
    base = p["step_ms"] - n * s0 - lookups * c0
    rows.append((p["id"], p["half"], base, n, lookups, statistics.mean(m[p["id"]] for m in meas)))
fit = [r for r in rows if r[1] == "fit"]
best = min((sum(math.log((b + n * s / 1e3 + L * c / 1e6) / m) ** 2 for _, _, b, n, L, m in fit),
            s, c) for s in range(0, 2001, 5) for c in [i / 100 for i in range(0, 401)])
_, s, c = best
print("fitted on %d fit rows: step_coalesce_sync_us %.0f, step_coalesce_ns %.2f" % (len(fit), s, c))
err = {"fit": [], "check": []}
for lab, half, b, n, L, m in rows:
    q = b + n * s / 1e3 + L * c / 1e6
    err[half].append(abs(q / m - 1))
    print("%-24s %-5s measured %8.2f  predicted %8.2f  %+6.1f %%" % (lab, half, m, q, 100 * (q / m - 1)))
for h, e in err.items():
    print("%-5s n=%d median %.1f %% max %.1f %%" % (h, len(e), 100 * statistics.median(e), 100 * max(e)))
