#!/usr/bin/env python3
"""Seventeenth round, clause 3 to more digits: the h100-check GEMM rows (189, never fitted)
under two predict.py outputs (the shipped model, then M with the refitted calibration),
median / p90 of |pred/meas - 1| (score.py's nearest-rank p90) to three decimals, and the rows
whose error moves most.
Usage: check_gemm_rows.py BASE_PREDICTIONS CAND_PREDICTIONS [NAME]   (from the repository root;
NAME: the candidate, M by default; the eighteenth round ran it with W)."""
import json
import os
import statistics
import sys

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "h100-check")


def stats(v):
    a = sorted(abs(x) for x in v)
    return 100 * statistics.median(a), 100 * a[max(0, -(-9 * len(a) // 10) - 1)]


meas = {(r["m"], r["n"], r["k"], r["dtype"]): r["ms"]
        for r in json.load(open(os.path.join(HERE, "gemm.json")))["rows"] if r.get("ms")}
P = [{(p["m"], p["n"], p["k"], p["dtype"]): p["pred_ms"] for p in json.load(open(f))["gemm"]}
     for f in sys.argv[1:3]]
LABEL = sys.argv[3] if len(sys.argv) > 3 else "M"
keys = [k for k in P[0] if k in meas]
e = [{k: P[i][k] / meas[k] - 1 for k in keys} for i in (0, 1)]
for dt in ("bf16", "fp16", "fp32", "tf32", "fp8", None):
    ks = [k for k in keys if dt is None or k[3] == dt]
    (m0, p0), (m1, p1) = stats([e[0][k] for k in ks]), stats([e[1][k] for k in ks])
    print("gemm %-4s n=%3d  %6.3f / %6.3f -> %6.3f / %6.3f %%   signed median %+.1f -> %+.1f %%" % (
        dt or "all", len(ks), m0, p0, m1, p1, 100 * statistics.median(e[0][k] for k in ks),
        100 * statistics.median(e[1][k] for k in ks)))
mv = sorted(keys, key=lambda k: abs(e[1][k]) - abs(e[0][k]))
print("largest |error| rises (m n k dtype: base -> %s):" % LABEL)
for k in mv[::-1][:12]:
    print("  %6d %6d %6d %-5s %+6.1f -> %+6.1f %%" % (*k, 100 * e[0][k], 100 * e[1][k]))
print("largest |error| falls:")
for k in mv[:8]:
    print("  %6d %6d %6d %-5s %+6.1f -> %+6.1f %%" % (*k, 100 * e[0][k], 100 * e[1][k]))
n_up = sum(abs(e[1][k]) > abs(e[0][k]) + 1e-12 for k in keys)
n_dn = sum(abs(e[1][k]) < abs(e[0][k]) - 1e-12 for k in keys)
print("rows with |error| up %d, down %d, unchanged %d" % (n_up, n_dn, len(keys) - n_up - n_dn))
