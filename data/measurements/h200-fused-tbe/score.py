#!/usr/bin/env python3
"""Scores predictions_prerun.json against tbe.json (the device run): per case the measured
pass (forward + backward + optimizer, CUDA events, median) against cdplan's GPU time of the
embedding classes, and the fused/eager speed-up measured and predicted.

  python3 data/measurements/h200-fused-tbe/score.py
  TBE_DIR=data/measurements/h100-fused-tbe python3 data/measurements/h200-fused-tbe/score.py
"""
import json
import os
import statistics

here = os.environ.get("TBE_DIR") or os.path.dirname(os.path.abspath(__file__))
pred = json.load(open(os.path.join(here, "predictions_prerun.json")))["predictions"]
meas = json.load(open(os.path.join(here, "tbe.json")))
print("check (Triton vs float64 reference): max rel err %s; fused_tbe_seg variant %s" % (
    meas.get("check_max_rel_err"), meas.get("check_seg_max_rel_err")))
key = lambda r: (r["framework"], r["optimizer"], r["batch"])  # noqa: E731
m = {key(r): r for r in meas["rows"] if "ms" in r}
errs = {"eager": [], "fused_triton": []}
for p in pred:
    r = m.get(key(p))
    if not r:
        print("%-12s %-15s B=%6d  not measured" % key(p))
        continue
    e = p["emb_gpu_ms"] / r["ms"] - 1
    errs[p["framework"]].append(abs(e))
    print("%-12s %-15s B=%6d  measured %8.2f ms  predicted %8.2f  %+6.1f%%" % (
        key(p) + (r["ms"], p["emb_gpu_ms"], 100 * e)))
# the variant (fused_tbe_seg.py, added after the predictions) against the same predictions
errs["fused_triton_seg"] = []
for p in pred:
    r = m.get(("fused_triton_seg",) + key(p)[1:]) if p["framework"] == "fused_triton" else None
    if r:
        e = p["emb_gpu_ms"] / r["ms"] - 1
        errs["fused_triton_seg"].append(abs(e))
        print("%-16s %-15s B=%6d  measured %8.2f ms  predicted %8.2f  %+6.1f%%" % (
            ("fused_triton_seg",) + key(p)[1:] + (r["ms"], p["emb_gpu_ms"], 100 * e)))
for fw, e in errs.items():
    if e:
        print("%s: n=%d median %.1f%% max %.1f%%" % (fw, len(e), 100 * statistics.median(e),
                                                     100 * max(e)))
for B in (16384, 65536):
    a, b = m.get(("eager", "sgd", B)), m.get(("fused_triton", "sgd", B))
    pa = [p for p in pred if key(p) == ("eager", "sgd", B)]
    pb = [p for p in pred if key(p) == ("fused_triton", "sgd", B)]
    if a and b and pa and pb:
        print("B=%d SGD fused speed-up: measured %.2fx, predicted %.2fx" % (
            B, a["ms"] / b["ms"], pa[0]["emb_gpu_ms"] / pb[0]["emb_gpu_ms"]))
