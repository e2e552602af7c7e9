#!/usr/bin/env python3
"""The eager kernels' achieved bandwidths, from the fitting half's torch.profiler tops
(steps_profile_fit.json; the check half was never profiled), as fractions of the H200's
4.8 TB/s (data/hardware/h200.json). These are the profile defaults step_copy_eff,
step_bcast_eff, step_softmax_1k and step_softmax_2k (costmodel/step_fit.c):

  python3 data/measurements/h200-transformer/eager_rates.py

Bytes per call, b (a) s^2 scores of 2 bytes (bf16), the runner's unfused core
(validate/gpu/transformer_step.py): masked_fill_ (in place, after masked_fill's clone) reads
and writes each score (4 B; the broadcast s x s bool mask stays in L2); softmax_warp_forward
reads and writes each (4 B); the scale (AUnaryFunctor mul) and the clone (Memcpy DtoD) 4 B.
"""
import json
import os
import statistics

HBM = 4.8e12
here = os.path.dirname(os.path.abspath(__file__))
rows = json.load(open(os.path.join(here, "steps_profile_fit.json")))["rows"]
rate = {"bcast": [], "sm1k": [], "sm2k": [], "copy": []}
for r in rows:
    w, rc = r["workload"], r["recipe"]
    if w["attention"] != "unfused":
        continue
    S = rc["batch_per_gpu"] * w["heads"] * w["seq_len"] ** 2
    for k in r["profile"]["top"]:
        per = k["ms"] / k["count"] * 1e-3
        n = k["name"]
        if "masked_fill" in n:
            rate["bcast"].append(4 * S / per)
        elif "softmax_warp_forward" in n:
            rate["sm1k" if w["seq_len"] <= 1024 else "sm2k"].append(4 * S / per)
        elif "Memcpy DtoD" in n or "AUnaryFunctor" in n:
            rate["copy"].append(4 * S / per)
out = {k: {"n": len(v), "median_GBps": round(statistics.median(v) / 1e9, 1),
           "of_hbm": round(statistics.median(v) / HBM, 3)} for k, v in rate.items()}
print(json.dumps(out, indent=1))
