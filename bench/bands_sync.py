#!/usr/bin/env python3
"""The GEMM error band every answer carries (api/provenance.c) must be the
check median bench/published_gemm prints for that accelerator: the fit-only
calibration's where a fresh database prices it with a per-architecture
calibration (arch_bands), the datasheet model's where it ships none
(gemm_bands). Runs the bench, then `cdplan estimate` for each accelerator
with published check rows on a fresh database, and compares.

usage: bands_sync.py PUBLISHED_GEMM_BENCH CDPLAN"""
import json
import os
import subprocess
import sys
import tempfile

bench, cli = sys.argv[1], sys.argv[2]
out = subprocess.run([bench], capture_output=True, text=True, check=True).stdout
figures = json.loads([l for l in out.splitlines() if l.startswith('{"bench":"published_gemm"')][-1])
bad = 0
with tempfile.TemporaryDirectory() as tmp:
    db = os.path.join(tmp, "bands.db")
    for hw in ("h100-sxm", "b200", "gb200", "mi300x", "mi325x", "mi350x", "mi355x"):
        req = {"hardware": hw, "ops": [{"op": "gemm", "m": 4096, "n": 4096, "k": 4096, "dtype": "bf16"}]}
        r = subprocess.run([cli, "--db", db, "estimate", "-"], input=json.dumps(req),
                           capture_output=True, text=True)
        if r.returncode != 0:
            print(f"{hw}: estimate failed: {r.stdout}{r.stderr}")
            bad += 1
            continue
        pv = json.loads(r.stdout)["provenance"]
        band = pv["error_band"]["gemm"]
        which = "fit_only" if "calibration_arch" in pv else "datasheet"
        want = figures[f"{hw}_{which}"]
        ok = band is not None and abs(band - want) <= 0.0006
        print(f"{hw:9s} answer band {band} bench {which} {want:.4f} {'ok' if ok else 'MISMATCH'}")
        bad += not ok
print("bands in sync" if bad == 0 else f"{bad} band(s) out of sync with bench/published_gemm")
sys.exit(1 if bad else 0)
