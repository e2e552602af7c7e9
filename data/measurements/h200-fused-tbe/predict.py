#!/usr/bin/env python3
"""cdplan's predictions for tbe_bench.py's cases, written before they ran: the GPU time of the
embedding kernel classes (embedding_fwd + embedding_bwd + sparse_optimizer) of a one-GPU DLRM
step with these tables (the MLPs are minimal and not counted), and the host dispatch of the step:

  python3 data/measurements/h200-fused-tbe/predict.py build/cli/cdplan [ROW_CAP] > predictions_prerun.json

TBE_HW (default h200) names the catalog accelerator: TBE_HW=h100-sxm wrote
../h100-fused-tbe/predictions_prerun.json.
"""
import json
import os
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
cdplan = sys.argv[1]
cap = int(sys.argv[2]) if len(sys.argv) > 2 else 2_000_000
hw = os.environ.get("TBE_HW", "h200")
tables = json.load(open(os.path.join(here, "tables.json")))["tables"]
out = []
with tempfile.TemporaryDirectory() as d:
    db = os.path.join(d, "p.db")
    for B in (16384, 65536):
        for fw, opt in (("eager", "sgd"), ("fused_triton", "sgd"), ("fused_triton", "rowwise_adagrad")):
            w = {"kind": "dlrm", "dense_features": 13, "bottom_mlp": [128], "top_mlp": [1],
                 "interaction": "dot",
                 "tables": [{"name": "t%d" % i, "rows": min(t["rows"], cap), "dim": t["dim"],
                             "pooling": t["pooling"]} for i, t in enumerate(tables)],
                 "optimizers": {"dense": "adam", "sparse": opt}}
            r = {"gpus": 1, "batch_per_gpu": B, "precision": "fp32", "embedding_precision": "fp32",
                 "framework": "pytorch_eager" if fw == "eager" else fw}
            req = json.dumps({"hardware": hw, "workload": w, "recipe": r})
            p = subprocess.run([cdplan, "step", "-", "--db", db], input=req, capture_output=True,
                               text=True, check=True)
            res = json.loads(p.stdout)
            cl = {k["class"]: k for k in res["kernel_classes"]}
            emb = sum(cl[k]["ms"] for k in ("embedding_fwd", "embedding_bwd", "sparse_optimizer")
                      if k in cl)
            out.append({"framework": fw, "optimizer": opt, "batch": B, "emb_gpu_ms": emb,
                        "emb_kernels": sum(cl[k]["kernels"] for k in
                                           ("embedding_fwd", "embedding_bwd", "sparse_optimizer")
                                           if k in cl),
                        "step_host_ms": cl.get("host_dispatch", {}).get("ms")})
print(json.dumps({"hardware": hw, "row_cap": cap, "predictions": out}, indent=1))
