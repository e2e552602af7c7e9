#!/usr/bin/env python3
"""A second, blind set of MLPerf-shaped DCN steps on one H100 (issue 21): shapes none of the
18 first cases had, to check the model refitted on the first set's fitting half
(step_coalesce_sync_us, step_coalesce_ns; sync_opt; fp32 cross layers under autocast).

Knobs: batch 8192 or 24576 (the first set had 4096/16384/32768), cross rank 256 (first:
full, 512, 128) or full, two cross layers instead of three on half of them, sparse optimizer
row-wise Adagrad or torch's Adagrad (the first: row-wise only), dense Adam on some, tables
capped at 10M rows (first: 20M). Eight cases:

  python3 blind2.py predict build/cli/cdplan > blind2_predictions.json   # before the run
  python3 blind2.py job > blind2_job.json
  python3 blind2.py score                                                # after: blind2.json

BLIND_SET=3 (blind3_*.json, blind3.json): six steps with framework fused_triton (the runner's
Triton TBE, validate/gpu/fused_tbe.py) instead of eager EmbeddingBag, the "fused-embedding
steps" of issue 21: fp32/bf16, full rank or 512, batch 4096/16384/32768, sparse row-wise
Adagrad or SGD, tables capped at 20M rows.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
WL = os.path.join(HERE, "..", "..", "workloads", "mlperf_dcnv2.json")
GRID = [  # precision, rank (0 full), cross layers, batch, sparse opt, dense opt
    ("fp32", 256, 3, 8192, "rowwise_adagrad", "adagrad"),
    ("bf16", 256, 3, 24576, "rowwise_adagrad", "adagrad"),
    ("fp32", 0, 2, 24576, "adagrad", "adagrad"),
    ("bf16", 0, 2, 8192, "adagrad", "adam"),
    ("bf16", 256, 2, 8192, "rowwise_adagrad", "adam"),
    ("fp32", 256, 2, 24576, "adagrad", "adam"),
    ("bf16", 0, 3, 24576, "rowwise_adagrad", "adagrad"),
    ("fp32", 0, 3, 8192, "adagrad", "adagrad"),
]


GRID3 = [
    ("fp32", 0, 3, 4096, "rowwise_adagrad", "adagrad"),
    ("bf16", 512, 3, 16384, "rowwise_adagrad", "adagrad"),
    ("fp32", 512, 3, 32768, "sgd", "adagrad"),
    ("bf16", 0, 3, 32768, "rowwise_adagrad", "adagrad"),
    ("bf16", 512, 3, 4096, "sgd", "adagrad"),
    ("fp32", 0, 3, 16384, "rowwise_adagrad", "adagrad"),
]
# BLIND_SET=4 (added 2026-12-05 ~20:05 UTC, predictions committed before its run): eight
# eager MLPerf-shaped steps of shapes no earlier set had (batch 6144/12288/20480, rank
# 384/192/full), scored against the model of the session's last commit.
GRID4 = [
    ("bf16", 384, 3, 6144, "rowwise_adagrad", "adagrad"),
    ("fp32", 384, 3, 12288, "rowwise_adagrad", "adagrad"),
    ("bf16", 0, 3, 20480, "rowwise_adagrad", "adagrad"),
    ("fp32", 192, 2, 6144, "adagrad", "adam"),
    ("bf16", 192, 2, 12288, "adagrad", "adagrad"),
    ("fp32", 0, 2, 20480, "rowwise_adagrad", "adam"),
    ("bf16", 384, 2, 12288, "rowwise_adagrad", "adam"),
    ("fp32", 0, 3, 6144, "adagrad", "adagrad"),
]
# BLIND_SET=5 (added 2026-12-05 ~21:55 UTC, predictions committed before its run): eight
# eager steps of shapes no earlier set had (batch 5120/7168/10240/14336, rank 320/224/96/full,
# two to four cross layers, tables capped at 8M rows), bf16-heavy, scored against the model
# with the overlapping optimizer phase (costmodel/step.c step_finish). Also scored: the same
# model at the run's own host (`rescale`, the formula fixed before the run: recipe.host_op_us =
# K x host_probe.step_kernel_us, K = 0.344 from ../h200-dcn-host/k_host.json, and = the probe's
# eager_op_us), written to blind5_predictions_probe.json after the run.
GRID5 = [
    ("bf16", 320, 3, 5120, "rowwise_adagrad", "adagrad"),
    ("bf16", 96, 2, 10240, "rowwise_adagrad", "adam"),
    ("bf16", 0, 4, 7168, "rowwise_adagrad", "adagrad"),
    ("bf16", 224, 4, 14336, "adagrad", "adagrad"),
    ("bf16", 320, 2, 14336, "sgd", "adam"),
    ("bf16", 0, 2, 5120, "adagrad", "adam"),
    ("fp32", 96, 3, 10240, "rowwise_adagrad", "adagrad"),
    ("fp32", 0, 3, 7168, "sgd", "adagrad"),
]
# BLIND_SET=6 (added 2026-12-05 ~22:10 UTC, predictions committed before its run): the
# H200 sixth set's shapes (../h200-dcn-mlperf/blind6.py: batch 4608/9216/11264/13312/15360,
# rank 448/288/160/64/full, no earlier set had them) with tables capped at 12M rows to fit an
# 80 GB H100, run here when no H200 could be started; scored like blind5 (default host and the
# run's probe by the same formula).
GRID6 = [
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
SET = os.environ.get("BLIND_SET", "2")
PREFIX = "blind%s" % SET


def cases():
    out = []
    fused = SET == "3"
    grid = GRID3 if fused else {"4": GRID4, "5": GRID5, "6": GRID6}.get(SET, GRID)
    for prec, rank, layers, B, so, do in grid:
        w = json.loads(json.dumps(json.load(open(WL))["workload"]))
        w.pop("cross_rank", None)
        if rank:
            w["cross_rank"] = rank
        w["cross_layers"] = layers
        w["optimizers"] = {"dense": do, "sparse": so}
        cap = 20_000_000 if fused else {"5": 8_000_000, "6": 12_000_000}.get(SET, 10_000_000)
        for t in w["tables"]:
            t["rows"] = min(t["rows"], cap)
        cid = "b%s-%s-%s-l%d-b%d-%s-%s" % (SET, prec, "full" if not rank else "r%d" % rank, layers,
                                           B, so, do)
        w["name"] = "MLPerf DLRM-DCNv2 tables capped at %dM, %s" % (cap // 1000000, cid)
        out.append({"id": cid, "workload": w,
                    "recipe": {"gpus": 1, "batch_per_gpu": B, "precision": prec,
                               "embedding_precision": "fp32",
                               "framework": "fused_triton" if fused else "pytorch_eager"}})
    return out


def predict(cdplan, host_op_us=None):
    out = []
    with tempfile.TemporaryDirectory() as d:
        for c in cases():
            rc = dict(c["recipe"], host_op_us=host_op_us) if host_op_us else c["recipe"]
            req = {"hardware": "h100-sxm", "workload": c["workload"], "recipe": rc}
            p = subprocess.run([cdplan, "step", "-", "--db", os.path.join(d, "p.db")],
                               input=json.dumps(req), capture_output=True, text=True, check=True)
            r = json.loads(p.stdout)
            out.append({"id": c["id"], "step_ms": r["step_ms"], "gpu_ms": r.get("gpu_ms"),
                        "host_ms": r.get("host_ms"), "peak_memory_bytes": r["peak_memory_bytes"],
                        "calibration": r.get("calibration")})
    return {"hardware": "h100-sxm", "what": "cdplan step, made before the device run",
            "predictions": out}


def rescale(cdplan):
    """After the run: the same model at the run's measured host (the formulas above)."""
    hp = json.load(open(os.path.join(HERE, PREFIX + ".json")))["host_probe"]
    out = {}
    for name, op in (("k_step_kernel", K_PROBE * hp["step_kernel_us"]),
                     ("eager_op", hp["eager_op_us"])):
        out[name] = dict(predict(cdplan, op), host_op_us=op)
    return {"what": "blind%s predictions at the run's host_probe (formulas committed before the run)"
            % SET, "host_probe": {k: hp[k] for k in ("eager_op_us", "step_kernel_us")}, **out}


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
    print("blind n=%d step median %.1f %% max %.1f %%   peak median %.1f %% max %.1f %%" % (
        len(e), 100 * statistics.median(e), 100 * max(e), 100 * statistics.median(em), 100 * max(em)))


def main(argv):
    if len(argv) >= 3 and argv[1] == "predict":
        print(json.dumps(predict(argv[2]), indent=1))
    elif len(argv) >= 2 and argv[1] == "job":
        print(json.dumps({"kind": "dlrm_step", "id": "h100-dcn-" + PREFIX,
                          "params": {"steps": 12, "warmup": 4, "seed": 0, "time_budget_s": 200,
                                     "cases": [{"label": c["id"], "workload": c["workload"],
                                                "recipe": c["recipe"]} for c in cases()]}},
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
