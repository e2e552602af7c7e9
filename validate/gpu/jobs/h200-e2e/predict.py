#!/usr/bin/env python3
"""Predict the step cases of dlrm_step.json (the job, or a result with rows) with
`cdplan step` on h200: each case becomes a step request whose tables carry the
runner's host_tables as per-table placement. Usage:
  predict.py CDPLAN JOB_OR_RESULT.json [--db DB] > predictions.json"""
import json, subprocess, sys

def requests(doc):
    if "rows" in doc:
        rows = doc["rows"]
        base_rows = doc.get("table_rows")
    else:
        p = doc["params"]
        rows = [dict({k: v for k, v in p.items() if k != "cases"}, **c) for c in p["cases"]]
        base_rows = p["table_rows"]
    for r in rows:
        trows = r.get("table_rows", base_rows)
        host = set(r.get("host_tables", []))
        if r.get("placement") == "host":
            host = set(range(len(trows)))
        tables = [{"name": "t%d" % i, "rows": n, "dim": r["dim"], "pooling": r.get("pooling", 1),
                   "placement": "host" if i in host else "hbm"} for i, n in enumerate(trows)]
        req = {"hardware": "h200", "calibration": "latest",
               "workload": {"kind": "dlrm", "dense_features": 13, "tables": tables,
                            "bottom_mlp": r["bottom"], "top_mlp": r["top"], "interaction": "dot",
                            "optimizers": {"dense": "adam", "sparse": "sgd"}},
               "recipe": {"gpus": 1, "batch_per_gpu": r["batch"], "precision": r["precision"],
                          "embedding_precision": "fp32", "framework": "pytorch_eager"}}
        if r.get("pad_interaction_to"):
            req["workload"]["pad_interaction_to"] = r["pad_interaction_to"]
        yield r, req

def main():
    cdplan, path = sys.argv[1], sys.argv[2]
    extra = sys.argv[3:]
    doc = json.load(open(path))
    out = []
    for r, req in requests(doc):
        p = subprocess.run([cdplan, "step", "-"] + extra, input=json.dumps(req), text=True,
                           capture_output=True, check=True)
        res = json.loads(p.stdout)
        out.append({"batch": r["batch"], "pooling": r.get("pooling", 1),
                    "host_tables": sorted(r.get("host_tables", [])),
                    "pred_step_ms": res["step_ms"], "pred_host_ms": res.get("host_ms"),
                    "pred_gpu_ms": res.get("gpu_ms"), "pred_peak_bytes": res["peak_memory_bytes"],
                    "meas_step_ms": r.get("step_ms"), "meas_peak_bytes": r.get("peak_mem_bytes"),
                    "calibration": res.get("calibration")})
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")

if __name__ == "__main__":
    main()
