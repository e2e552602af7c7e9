#!/usr/bin/env python3
"""cdplan's predictions for cases.json, written before the cases run (truth discipline):

  python3 data/measurements/h200-transformer/predict.py build/cli/cdplan > predictions_prerun.json

predict() is also the Llama cases' (../h200-transformer-llama/predict.py).
"""
import json
import os
import subprocess
import sys
import tempfile


def predict(cdplan, cases_path, model):
    """Prints `cdplan step` on every case of cases_path as the predictions file, labelled model."""
    cases = json.load(open(cases_path))["cases"]
    out = []
    with tempfile.TemporaryDirectory() as d:
        db = os.path.join(d, "p.db")
        for c in cases:
            req = json.dumps({"hardware": "h200", "workload": c["workload"], "recipe": c["recipe"]})
            p = subprocess.run([cdplan, "step", "-", "--db", db], input=req, capture_output=True,
                               text=True, check=False)
            if p.returncode:
                out.append({"id": c["id"], "error": p.stderr.strip()[-300:]})
                continue
            r = json.loads(p.stdout)
            out.append({"id": c["id"], "role": c["role"], "step_ms": r["step_ms"],
                        "peak_memory_bytes": r["peak_memory_bytes"], "memory": r["memory"],
                        "calibration": r["calibration"]})
    print(json.dumps({"hardware": "h200", "model": model, "predictions": out}, indent=1))


if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    predict(sys.argv[1], os.path.join(here, "cases.json"), "datasheet defaults (no calibration)")
