#!/usr/bin/env python3
"""The unaligned-GEMM error band every answer on a Hopper accelerator carries (api/provenance.c,
error_band.gemm_unaligned, gemm_unaligned_p90 and band_check_rows.gemm_unaligned): over the
blind awkward-shape sweeps of issue 25, each scored with the cuBLAS times committed before its
sweep (predictions.json, the model of that day), the rows whose K or N is not a multiple of 8,
|predicted / measured - 1| on the sweep's gemm_sweep time: median, p90 (linear interpolation, as
bench/kernel_awkward.c's pct()) and the row count. H100 (h100-sxm): data/measurements/
h100-awkwardN, N = 33.. (the sets swept after the H100 terms were first fitted); H200: the blind
sets h200-awkward2..7.

usage: awkward_band.py [--check CDPLAN]   (--check: the answers of a fresh database must carry
these figures, to the printed precision)"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from score_pred_gemm import pct, read_json  # noqa: E402  (the same files, the same percentile)

MEAS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "measurements")
H100_FIRST = 33


def key(r):
    return r["m"], r["n"], r["k"], r.get("layout") or "nn", r["dtype"]


def errors(folder):
    """|pred/meas - 1| of the unaligned rows of one swept set, against its committed picks."""
    d = os.path.join(MEAS, folder)
    sweep = os.path.join(d, "blind_gemm.json")
    if not os.path.exists(sweep):
        return []
    pred = {key(r): r["ms"] for r in read_json(os.path.join(d, "predictions.json"))["gemm"]}
    out = []
    for r in read_json(sweep)["rows"]:
        p = pred.get(key(r))
        if p and r.get("ms", 0) > 0 and (r["k"] % 8 or r["n"] % 8):
            out.append(abs(p / r["ms"] - 1))
    return out


def figures():
    h100 = [e for s in range(H100_FIRST, 1000) for e in errors("h100-awkward%d" % s)]
    h200 = [e for s in range(2, 8) for e in errors("h200-awkward%d" % s)]
    return {hw: {"median": round(pct(e, .5), 3), "p90": round(pct(e, .9), 3), "rows": len(e)}
            for hw, e in (("h100-sxm", h100), ("h200", h200))}


def check(cli, fig):
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "band.db")
        for hw, f in fig.items():
            req = {"hardware": hw, "ops": [{"op": "gemm", "m": 1024, "n": 479, "k": 264,
                                            "dtype": "bf16", "layout": "tn"}]}
            r = subprocess.run([cli, "--db", db, "estimate", "-"], input=json.dumps(req),
                               capture_output=True, text=True)
            if r.returncode != 0:
                print(f"{hw}: estimate failed: {r.stdout}{r.stderr}")
                bad += 1
                continue
            pv = json.loads(r.stdout)["provenance"]
            got = {"median": pv["error_band"].get("gemm_unaligned"),
                   "p90": pv["error_band"].get("gemm_unaligned_p90"),
                   "rows": pv["band_check_rows"].get("gemm_unaligned")}
            ok = got == f
            print(f"{hw:9s} answer {got} data {f} {'ok' if ok else 'MISMATCH'}")
            bad += not ok
    print("unaligned GEMM bands in sync" if not bad else f"{bad} band(s) out of sync")
    return 1 if bad else 0


if __name__ == "__main__":
    fig = figures()
    print(json.dumps({"bench": "awkward_band", **fig}))
    if len(sys.argv) > 2 and sys.argv[1] == "--check":
        sys.exit(check(sys.argv[2], fig))
