#!/usr/bin/env python3
"""blind6_ranges.json: the H100 fallback of the sixth set, host_sensitivity ranges made before
its run (repository root: python3 data/measurements/h100-dcn-mlperf/blind6_ranges.py >
data/measurements/h100-dcn-mlperf/blind6_ranges.json)."""
import json, os, subprocess, sys, tempfile
os.environ["BLIND_SET"] = "6"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import blind2
out = []
with tempfile.TemporaryDirectory() as d:
    for c in blind2.cases():
        req = {"hardware": "h100-sxm", "workload": c["workload"], "recipe": c["recipe"]}
        r = json.loads(subprocess.run(["build/cli/cdplan", "step", "-", "--db", d + "/p.db"], input=json.dumps(req), capture_output=True, text=True, check=True).stdout)
        out.append({"id": c["id"], "step_ms": r["step_ms"], "host_bound": r["host_bound"], "host_op_us": r["host_op_us"],
                     "host_op_us_range": r["host_sensitivity"]["host_op_us_range"], "step_ms_range": r["host_sensitivity"]["step_ms_range"]})
print(json.dumps({"hardware": "h100-sxm", "what": "cdplan step's host_sensitivity.step_ms_range (main 5737dbe) for the sixth blind set's H100 fallback, made before its run; claim: each host-bound step's measurement lies inside", "predictions": out}, indent=1))
