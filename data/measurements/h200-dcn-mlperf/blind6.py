#!/usr/bin/env python3
"""A blind set of eager MLPerf-shaped DCN steps on one H200 (issue 21, the sixth blind set of
the DCN step model, the first on this GPU kind since the H100 refits).

Shapes none of the earlier sets had (this folder's 18: batch 4096/16384/32768, rank full/512/128,
40M-row cap; the H100 sets: batch 5120-32768 at other values, ranks 512/384/320/256/224/192/128/96,
caps 20M/15M/10M/8M): batch 4608 / 9216 / 11264 / 13312 / 15360, cross rank 448 / 288 / 160 /
64 / full, two to four cross layers, six bf16 and two fp32, sparse row-wise Adagrad or SGD,
dense Adagrad or Adam, tables capped at 30M rows (154.2M rows x 128 fp32 = 78.9 GB: it fits the
141 GB H200 with row-wise state; torch's Adagrad, whose state is a second copy, would not).

  python3 blind6.py predict build/cli/cdplan > blind6_predictions.json   # before the run
  python3 blind6.py job > blind6_job.json
  python3 blind6.py rescale build/cli/cdplan > blind6_predictions_probe.json   # after the run
  python3 blind6.py score                                                # blind6.json

Predictions: cdplan step on hardware h200 at the model's default host cost, and (formula fixed
before the run, as for the H100's blind5) the same model at the run's own host:
recipe.host_op_us = K x host_probe.step_kernel_us with K = 0.344 (../h200-dcn-host/k_host.json,
fitted on H100 hosts only), and = host_probe.eager_op_us.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
WL = os.path.join(HERE, "..", "..", "workloads", "mlperf_dcnv2.json")
HW = "h200"
CAP = 30_000_000
PREFIX = "blind6"
GRID = [  # precision, rank (0 full), cross layers, batch, sparse opt, dense opt
    ("bf16", 448, 3, 4608, "rowwise_adagrad", "adagrad"),
    ("bf16", 160, 2, 9216, "rowwise_adagrad", "adam"),
    ("bf16", 0, 3, 11264, "rowwise_adagrad", "adagrad"),
    ("bf16", 64, 4, 13312, "rowwise_adagrad", "adagrad"),
    ("bf16", 288, 2, 15360, "sgd", "adam"),
    ("bf16", 0, 4, 4608, "sgd", "adagrad"),
    ("fp32", 160, 3, 9216, "rowwise_adagrad", "adagrad"),
    ("fp32", 0, 2, 13312, "rowwise_adagrad", "adam"),
]
K_PROBE = 0.344  # ../h200-dcn-host/k_host.json (fit_host.py, sets A and B)


def cases():
    out = []
    for prec, rank, layers, B, so, do in GRID:
        w = json.loads(json.dumps(json.load(open(WL))["workload"]))
        w.pop("cross_rank", None)
        if rank:
            w["cross_rank"] = rank
        w["cross_layers"] = layers
        w["optimizers"] = {"dense": do, "sparse": so}
        for t in w["tables"]:
            t["rows"] = min(t["rows"], CAP)
        cid = "b6-%s-%s-l%d-b%d-%s-%s" % (prec, "full" if not rank else "r%d" % rank, layers, B,
                                          so, do)
        w["name"] = "MLPerf DLRM-DCNv2 tables capped at %dM, %s" % (CAP // 1000000, cid)
        out.append({"id": cid, "workload": w,
                    "recipe": {"gpus": 1, "batch_per_gpu": B, "precision": prec,
                               "embedding_precision": "fp32", "framework": "pytorch_eager"}})
    return out


def predict(cdplan, host_op_us=None):
    out = []
    with tempfile.TemporaryDirectory() as d:
        for c in cases():
            rc = dict(c["recipe"], host_op_us=host_op_us) if host_op_us else c["recipe"]
            req = {"hardware": HW, "workload": c["workload"], "recipe": rc}
            p = subprocess.run([cdplan, "step", "-", "--db", os.path.join(d, "p.db")],
                               input=json.dumps(req), capture_output=True, text=True, check=True)
            r = json.loads(p.stdout)
            out.append({"id": c["id"], "step_ms": r["step_ms"], "gpu_ms": r.get("gpu_ms"),
                        "host_ms": r.get("host_ms"), "peak_memory_bytes": r["peak_memory_bytes"],
                        "fits": r.get("fits"), "calibration": r.get("calibration")})
    return {"hardware": HW, "row_cap": CAP, "what": "cdplan step, made before the device run",
            "predictions": out}


def rescale(cdplan):
    """After the run: the same model at the run's measured host (the formulas above)."""
    hp = json.load(open(os.path.join(HERE, PREFIX + ".json")))["host_probe"]
    out = {}
    for name, op in (("k_step_kernel", K_PROBE * hp["step_kernel_us"]),
                     ("eager_op", hp["eager_op_us"])):
        out[name] = dict(predict(cdplan, op), host_op_us=op)
    return {"what": "blind6 predictions at the run's host_probe (formulas committed before the run)",
            "host_probe": {k: hp[k] for k in ("eager_op_us", "step_kernel_us")}, **out}


def score():
    score_one(json.load(open(os.path.join(HERE, PREFIX + "_predictions.json")))["predictions"],
              "default host")
    probe = os.path.join(HERE, PREFIX + "_predictions_probe.json")
    if os.path.exists(probe):
        d = json.load(open(probe))
        for name in ("k_step_kernel", "eager_op"):
            score_one(d[name]["predictions"], "host_op_us %.2f us (%s)" % (d[name]["host_op_us"], name))


def score_one(preds, what):
    print("-- %s" % what)
    pred = {p["id"]: p for p in preds}
    rows = json.load(open(os.path.join(HERE, PREFIX + ".json")))["rows"]
    e, em = [], []
    for r in rows:
        p = pred[r["label"]]
        x = p["step_ms"] / r["step_ms"] - 1
        y = p["peak_memory_bytes"] / r["peak_memory_bytes"] - 1
        e.append(abs(x))
        em.append(abs(y))
        print("%-44s measured %8.2f ms  predicted %8.2f  %+6.1f %%   peak %+5.1f %%" % (
            r["label"], r["step_ms"], p["step_ms"], 100 * x, 100 * y))
    print("blind n=%d of %d step median %.1f %% max %.1f %%   peak median %.1f %% max %.1f %%" % (
        len(e), len(pred), 100 * statistics.median(e), 100 * max(e), 100 * statistics.median(em),
        100 * max(em)))


def main(argv):
    if len(argv) >= 3 and argv[1] == "predict":
        print(json.dumps(predict(argv[2]), indent=1))
    elif len(argv) >= 2 and argv[1] == "job":
        scale = int(argv[2]) if len(argv) > 2 else 1
        cs = cases()
        if scale > 1:  # a CPU check (CDPLAN_RUNNER_ALLOW_CPU=1): rows and batches / scale
            for c in cs:
                for t in c["workload"]["tables"]:
                    t["rows"] = max(1, t["rows"] // scale)
                c["recipe"]["batch_per_gpu"] //= scale
        print(json.dumps({"kind": "dlrm_step", "id": "h200-dcn-" + PREFIX,
                          "params": {"steps": 12 if scale == 1 else 2,
                                     "warmup": 4 if scale == 1 else 1, "seed": 0,
                                     "time_budget_s": 200,
                                     "cases": [{"label": c["id"], "workload": c["workload"],
                                                "recipe": c["recipe"]} for c in cs]}},
                         separators=(",", ":")))
    elif len(argv) >= 3 and argv[1] == "rescale":
        print(json.dumps(rescale(argv[2]), indent=1))
    elif len(argv) >= 2 and argv[1] == "score":
        score()
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
