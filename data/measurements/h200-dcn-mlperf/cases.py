#!/usr/bin/env python3
"""MLPerf-shaped DLRM-DCNv2 steps on one H200 (issue 21): the cases, cdplan's predictions for
them, and the runner job that measures them.

The model is data/workloads/mlperf_dcnv2.json's (MLPerf Training DLRM-DCNv2: 26 tables at
Criteo-1TB row counts capped at 40M, dim 128, multi-hot pooling, bottom 512-256-128, three
cross layers over x0 = [x, 26 embeddings] (3456 wide), top 1024-1024-512-256-1, dense adagrad,
sparse row-wise adagrad), on one GPU with every table in HBM (204M rows x 128 fp32 = 104.5 GB:
it fits an H200's 141 GB, not an 80 GB H100). Knobs: precision fp32 (no TF32) or bf16
autocast; cross layers full rank (W 3456 x 3456) or low rank (cross_rank 512, MLPerf's, or
128: W = U V^T); batch 4096, 16384 or 32768. Tables stay fp32 (MLPerf's reference keeps fp32
tables). Plain PyTorch eager (framework pytorch_eager), runner kind dlrm_step.

Halves, fixed before the run: the cases in grid order (precision, rank, batch) alternate fit
(even index) and check (odd index); a correction, if one is needed, is fitted on the fit half
and scored on the check half only.

  python3 cases.py cases   > cases.json               # the 18 cases with their half
  python3 cases.py predict CDPLAN > predictions_prerun.json   # cdplan step on each (h200)
  python3 cases.py job [SCALE] > job.json              # runner job (SCALE divides the rows
                                                       # and batches: a CPU test, e.g. 1000)
  python3 cases.py job_repeat > job_repeat.json        # the same cases in reverse order

The H100 variant (../h100-dcn-mlperf/, for when no H200 is lent): DCN_HW=h100-sxm and
DCN_CAP=20000000 (tables capped at 20M rows: 53.3 GB of fp32 rows, which fits 80 GB) in the
environment of every command above; the cases, halves and knobs are otherwise the same.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
WL = os.path.join(HERE, "..", "..", "workloads", "mlperf_dcnv2.json")
PRECISIONS = ("fp32", "bf16")
HW = os.environ.get("DCN_HW", "h200")
CAP = int(os.environ.get("DCN_CAP", "0"))  # 0: the workload's own rows (40M cap)
RANKS = (0, 512, 128)  # 0: full rank
BATCHES = (4096, 16384, 32768)


def workload(rank, scale=1):
    w = json.load(open(WL))["workload"]
    w = json.loads(json.dumps(w))
    w["name"] = "MLPerf DLRM-DCNv2, 26 Criteo-1TB tables (40M cap), %s cross" % (
        "full-rank" if not rank else "rank-%d" % rank)
    if rank:
        w["cross_rank"] = rank
    else:
        w.pop("cross_rank", None)
    if CAP:
        w["name"] += ", rows capped at %dM" % (CAP // 1000000)
        for t in w["tables"]:
            t["rows"] = min(t["rows"], CAP)
    if scale > 1:
        for t in w["tables"]:
            t["rows"] = max(1, t["rows"] // scale)
    return w


def cases(scale=1):
    out, i = [], 0
    for prec in PRECISIONS:
        for rank in RANKS:
            for B in BATCHES:
                cid = "dcn-%s-%s-b%d" % (prec, "full" if not rank else "r%d" % rank, B)
                out.append({"id": cid, "half": "fit" if i % 2 == 0 else "check",
                            "precision": prec, "cross_rank": rank, "batch": B,
                            "workload": workload(rank, scale),
                            "recipe": {"gpus": 1, "batch_per_gpu": max(1, B // scale),
                                       "precision": prec, "embedding_precision": "fp32",
                                       "framework": "pytorch_eager"}})
                i += 1
    return out


def predict(cdplan):
    out = []
    with tempfile.TemporaryDirectory() as d:
        db = os.path.join(d, "p.db")
        for c in cases():
            req = {"hardware": HW, "workload": c["workload"], "recipe": c["recipe"]}
            p = subprocess.run([cdplan, "step", "-", "--db", db], input=json.dumps(req),
                               capture_output=True, text=True, check=True)
            r = json.loads(p.stdout)
            out.append({"id": c["id"], "half": c["half"], "step_ms": r["step_ms"],
                        "gpu_ms": r.get("gpu_ms"), "host_ms": r.get("host_ms"),
                        "peak_memory_bytes": r["peak_memory_bytes"], "fits": r.get("fits"),
                        "calibration": r.get("calibration"),
                        "kernel_classes": {k["class"]: round(k["ms"], 4)
                                           for k in r["kernel_classes"]}})
    return {"hardware": HW, "row_cap": CAP or None, "what": "cdplan step on each case of cases.py, made before "
            "the device run", "predictions": out}


def job(scale=1, steps=12, warmup=4):
    cs = cases(scale)
    return {"kind": "dlrm_step", "id": "%s-dcn-mlperf" % HW.split("-")[0],
            "params": {"steps": steps, "warmup": warmup, "seed": 0, "time_budget_s": 200,
                       "cases": [{"label": c["id"], "workload": c["workload"],
                                  "recipe": c["recipe"]} for c in cs]}}


def main(argv):
    if len(argv) < 2 or argv[1] not in ("cases", "predict", "job", "job_repeat"):
        print(__doc__)
        return 2
    if argv[1] == "cases":
        doc = {"workload_source": "data/workloads/mlperf_dcnv2.json", "cases": cases()}
    elif argv[1] == "predict":
        doc = predict(argv[2])
    elif argv[1] == "job_repeat":
        doc = job()
        doc["id"] += "-repeat"
        doc["params"]["cases"].reverse()
        doc["params"]["time_budget_s"] = 75
    else:
        scale = int(argv[2]) if len(argv) > 2 else 1
        doc = job(scale) if scale == 1 else job(scale, steps=2, warmup=1)
    if argv[1].startswith("job"):
        json.dump(doc, sys.stdout, separators=(",", ":"))
        sys.stdout.write("\n")
        return 0
    json.dump(doc, sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
