#!/usr/bin/env python3
"""The ninth round's cuBLAS term on the H100 sweep of the ninth set: on the bf16 rows the
term moves (more than 2 % between predictions.json, term on, and predictions_term_off.json),
measured (blind_gemmbl.json, backlog-timed, and blind_gemm.json) against both predictions.
Both prediction files were committed before the sweep. From this folder: python3 term_check.py"""
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "h100-awkfam"))
from fit_awkfam import read_json  # noqa: E402  (predictions.json is kept as its gzip -n copy)


def load(f, key="gemm"):
    return {(g["m"], g["n"], g["k"], g["layout"], g["dtype"]): g["ms"] for g in read_json(f)[key]}


on, off = load("predictions.json"), load("predictions_term_off.json")
meas = {f: {(r["m"], r["n"], r["k"], r["layout"], r["dtype"]): r["ms"]
            for r in json.load(open(f))["rows"]} for f in ("blind_gemmbl.json", "blind_gemm.json")}
print("%-24s %9s %9s %9s %9s %8s %8s" % ("shape (bf16)", "on us", "off us", "gemmbl", "gemm",
                                         "on err", "off err"))
e_on, e_off = [], []
for k in on:
    if k[4] != "bf16" or abs(on[k] / off[k] - 1) <= 0.02:
        continue
    m = meas["blind_gemmbl.json"][k]
    e_on.append(abs(on[k] / m - 1))
    e_off.append(abs(off[k] / m - 1))
    print("%-24s %9.2f %9.2f %9.2f %9.2f %+7.1f%% %+7.1f%%" % (
        "%dx%dx%d %s" % k[:4], on[k] * 1e3, off[k] * 1e3, m * 1e3,
        meas["blind_gemm.json"][k] * 1e3, 100 * (on[k] / m - 1), 100 * (off[k] / m - 1)))
print("n=%d |err| vs gemmbl: term on median %.1f %% max %.1f %%, off median %.1f %% max %.1f %%" % (
    len(e_on), 100 * statistics.median(e_on), 100 * max(e_on), 100 * statistics.median(e_off),
    100 * max(e_off)))
