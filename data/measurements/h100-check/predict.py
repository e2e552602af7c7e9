#!/usr/bin/env python3
"""Predictions for the H100 check (README.md here), made with `cdplan` before any run.

The jobs are the H200 second set's (validate/gpu/jobs/h200-extra/: gemm.json, memory_ops.json,
dlrm_step.json), run unchanged on one H100 SXM; every shape was measured on the H200 too
(data/measurements/h200-extra/), so each row also gives a measured H200/H100 ratio.

usage: predict.py CDPLAN > predictions_prerun.json   (run from the repository root)
"""
import copy
import json
import os
import subprocess
import sys
import tempfile

HW = "h100-sxm"
ROOT = os.getcwd()
JOBS = os.path.join(ROOT, "validate/gpu/jobs/h200-extra")


def cdplan(exe, args, doc, db):
    p = subprocess.run([exe, *args, "-", "--db", db], input=json.dumps(doc), capture_output=True,
                       text=True, check=False)
    if p.returncode:
        raise SystemExit(f"cdplan {' '.join(args)} failed: {p.stderr.strip()}")
    return json.loads(p.stdout)


def gemm_ops():
    j = json.load(open(os.path.join(JOBS, "gemm.json")))["params"]
    return [{"op": "gemm", "m": s["m"], "n": s["n"], "k": s["k"], "dtype": d}
            for s in j["shapes"] for d in j["dtypes"]]


def memory_ops():
    """The memory_ops runner's grid, in its order (validate/gpu/memory_ops.py)."""
    j = json.load(open(os.path.join(JOBS, "memory_ops.json")))["params"]
    ops = []
    for g in j["embedding_bag"]:
        for rows in g["rows"]:
            for dim in g["dim"]:
                for dt in g["dtype"]:
                    for b in g["batch"]:
                        for p in g["pooling"]:
                            ops.append({"op": "embedding_bag", "rows": rows, "dim": dim, "dtype": dt,
                                        "batch": b, "pooling": p, "pass": "fwd_bwd"})
    kinds = {"add": "add", "gelu": "gelu", "layernorm_1024": "layernorm", "softmax_1024": "softmax"}
    e = j["elementwise"]
    for op in e["ops"]:
        for n in e["numel"]:
            for dt in e["dtype"]:
                ops.append({"op": "elementwise", "kind": kinds[op], "numel": n, "dtype": dt,
                            "name": op})
    return ops


def step_docs():
    tmpl = json.load(open(os.path.join(ROOT, "data/workloads/dlrm_h200_step.json")))
    j = json.load(open(os.path.join(JOBS, "dlrm_step.json")))["params"]
    docs = []
    for c in j["cases"]:
        d = copy.deepcopy(tmpl)
        d["hardware"] = HW
        w, r = d["workload"], d["recipe"]
        w["name"] = f"h100 check case {len(docs)}"
        w["bottom_mlp"], w["top_mlp"] = c["bottom"], c["top"]
        if c.get("pad_interaction_to"):
            w["pad_interaction_to"] = c["pad_interaction_to"]
        for t in w["tables"]:
            t["dim"], t["pooling"] = c["dim"], c.get("pooling", j.get("pooling", 1))
            if c.get("placement") == "host":
                t["placement"] = "host"
        r["batch_per_gpu"], r["precision"] = c["batch"], c["precision"]
        docs.append((c, d))
    return docs


def main():
    exe = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "p.db")
        out = {"hardware": HW, "made_with": "cdplan estimate/step, shipped calibration",
               "gemm": [], "memory_ops": [], "dlrm_step": []}
        for key, ops in (("gemm", gemm_ops()), ("memory_ops", memory_ops())):
            for i in range(0, len(ops), 200):
                chunk = ops[i:i + 200]
                req = [{k: v for k, v in o.items() if k != "name"} for o in chunk]
                res = cdplan(exe, ["estimate"], {"hardware": HW, "ops": req}, db)["results"]
                for o, r in zip(chunk, res):
                    out[key].append({**o, "pred_ms": r["ms"], "bound": r["bound"]})
        for c, d in step_docs():
            r = cdplan(exe, ["step"], d, db)
            s = r.get("step", r)
            out["dlrm_step"].append({"case": c, "pred_step_ms": s.get("step_ms"),
                                     "pred_peak_mem_bytes": s.get("peak_memory_bytes",
                                                                  s.get("memory_bytes"))})
    json.dump(out, sys.stdout, indent=1)


if __name__ == "__main__":
    main()
