#!/usr/bin/env python3
"""A blind set of MLPerf-shaped DCN steps for issue 21's host-speed work: does the runner's host
probe (validate/gpu/host_probe.py, recorded in every dlrm_step result as host_probe) make
host-bound steps predictable per host?

Twelve cases, none measured before (the earlier sets: h100-dcn-mlperf's 18-case grid, blind2,
blind3, fused_fit; h200-dcn-mlperf): tables capped at 15M rows (40.5 GB of fp32 rows: fits an
80 GB H100; earlier caps 10M, 20M, 40M), cross rank full, 384 or 192 (earlier: full, 512, 256,
128), two, three or four cross layers.
  8 fused DCN steps (framework fused_triton: the runner's Triton TBE), fp32 and bf16, batch
    4096 to 16384, sparse row-wise Adagrad or SGD (fused), dense Adagrad or Adam;
  4 eager DCN steps (pytorch_eager), bf16, batch 4096 (host-bound: the kind of case that missed
    by ~26 % on the H200), sparse row-wise Adagrad or SGD.

  python3 cases.py predict CDPLAN > predictions.json    # before the run: the model at its
                                                         # default host cost (h100-sxm)
  python3 cases.py job > job.json                        # the runner job
  python3 cases.py job_repeat > job_repeat.json          # the six b4096 cases again, in
      # reverse order, under torch.profiler afterwards (GPU busy vs wall: how host-bound), with
      # its own probes: the second probe pair of the same host
  python3 cases.py rescale CDPLAN dcn_host.json > predictions_probe.json
      # after the run: the same model (the predictions' commit) with the probe's host_op_us
      # (and triton_launch_us for fused cases) put in every recipe: the probe-scaled predictions
  python3 cases.py score                                 # both against dcn_host.json

Set B (BLIND_SET=b in the environment of every command; files predictions_b*.json, job_b.json,
dcn_host_b.json), made after set A's run: eight fresh cases, the probe's second version
(validate/gpu/host_probe.py: the marginal per-op time). Its predictions, committed before its
run: at the default host cost (predict), with host_op_us = the probe's eager_op_us (rescale:
predictions_b_probe.json), and with host_op_us = K1 x the probe's step_kernel_us (rescale_k:
predictions_b_probek.json), K1 fitted on set A's eager rows only (`python3 cases.py fit_k1
CDPLAN > k1.json`).

Set C (BLIND_SET=c; files *_c*), made after set B's run: ten fresh cases; the model now scales
its other host terms (coalesce sync, fixed per step) with a given host_op_us; predictions
committed before its run: default (predict), host_op_us = the probe's eager_op_us (rescale),
host_op_us = K x the probe's step_kernel_us (rescale_k), K from fit_host.py on sets A and B
(k_host.json).

The rescale is a formula fixed before the run: recipe.host_op_us = result host_probe.eager_op_us
(the mean of the probes before and after the cases), recipe.triton_launch_us =
host_probe.triton_launch_us; nothing is fitted on these cases. DCN_HW picks the hardware
(default h100-sxm).
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
WL = os.path.join(HERE, "..", "..", "workloads", "mlperf_dcnv2.json")
HW = os.environ.get("DCN_HW", "h100-sxm")
CAP = 15_000_000
GRID = [  # framework, precision, rank (0 full), cross layers, batch, sparse opt, dense opt
    ("fused_triton", "fp32", 0, 2, 4096, "rowwise_adagrad", "adagrad"),
    ("fused_triton", "bf16", 0, 4, 8192, "rowwise_adagrad", "adam"),
    ("fused_triton", "fp32", 384, 3, 12288, "sgd", "adagrad"),
    ("fused_triton", "bf16", 384, 2, 4096, "rowwise_adagrad", "adagrad"),
    ("fused_triton", "bf16", 192, 3, 16384, "sgd", "adam"),
    ("fused_triton", "fp32", 192, 4, 8192, "rowwise_adagrad", "adagrad"),
    ("fused_triton", "bf16", 0, 3, 12288, "sgd", "adagrad"),
    ("fused_triton", "fp32", 384, 3, 16384, "rowwise_adagrad", "adam"),
    ("pytorch_eager", "bf16", 384, 3, 4096, "rowwise_adagrad", "adagrad"),
    ("pytorch_eager", "bf16", 0, 2, 4096, "sgd", "adam"),
    ("pytorch_eager", "bf16", 192, 4, 4096, "rowwise_adagrad", "adam"),
    ("pytorch_eager", "bf16", 0, 4, 4096, "rowwise_adagrad", "adagrad"),
]

# Set B (BLIND_SET=b; files *_b*): made after the first run, when the probe's first figure
# (per kernel of a 25-kernel step, per-step costs included) turned out not to be the model's
# per-op quantity; fresh shapes again: tables capped at 12M rows, rank 320 / 96 / full, one to
# three cross layers, batch 4096 / 6144; host-bound mostly.
GRID_B = [
    ("pytorch_eager", "bf16", 320, 3, 4096, "rowwise_adagrad", "adagrad"),
    ("pytorch_eager", "bf16", 0, 2, 6144, "sgd", "adagrad"),
    ("pytorch_eager", "fp32", 96, 3, 4096, "sgd", "adam"),
    ("pytorch_eager", "bf16", 96, 1, 4096, "rowwise_adagrad", "adam"),
    ("pytorch_eager", "bf16", 320, 2, 6144, "rowwise_adagrad", "adagrad"),
    ("fused_triton", "bf16", 96, 3, 4096, "sgd", "adagrad"),
    ("fused_triton", "bf16", 0, 2, 6144, "rowwise_adagrad", "adam"),
    ("fused_triton", "fp32", 320, 2, 4096, "rowwise_adagrad", "adagrad"),
]
# Set C (BLIND_SET=c; files *_c*): made after set B's run, when the model scaled its other host
# terms with a given host_op_us and K was fitted on sets A and B (fit_host.py, k_host.json);
# fresh shapes again: tables capped at 18M rows, rank 448 / 160 / 64 / full, one to four cross
# layers, batch 3072 to 8192.
GRID_C = [
    ("pytorch_eager", "bf16", 448, 2, 4096, "rowwise_adagrad", "adam"),
    ("pytorch_eager", "bf16", 64, 4, 3072, "sgd", "adagrad"),
    ("pytorch_eager", "fp32", 160, 1, 4096, "rowwise_adagrad", "adagrad"),
    ("pytorch_eager", "bf16", 0, 1, 5120, "rowwise_adagrad", "sgd"),
    ("pytorch_eager", "fp32", 64, 2, 3072, "sgd", "adam"),
    ("pytorch_eager", "bf16", 160, 3, 8192, "sgd", "adam"),
    ("pytorch_eager", "bf16", 448, 4, 3072, "rowwise_adagrad", "adagrad"),
    ("fused_triton", "bf16", 64, 2, 3072, "rowwise_adagrad", "adagrad"),
    ("fused_triton", "bf16", 448, 1, 5120, "sgd", "adam"),
    ("fused_triton", "fp32", 160, 3, 4096, "sgd", "adagrad"),
]
# Set D (BLIND_SET=d; files *_d*): made after set C's run, when the model counted fused_triton's
# per-table views, zero fills and casts (costmodel/step_fused.c, from the set-A profile); fresh
# shapes again: tables capped at 16M rows, rank 288 / 224 / 32 / full, one to four cross layers,
# batch 3072-16384; nine fused steps (the check of step_fused.c), two eager.
GRID_D = [
    ("fused_triton", "bf16", 224, 3, 3072, "sgd", "adagrad"),
    ("fused_triton", "fp32", 288, 2, 6144, "rowwise_adagrad", "adam"),
    ("fused_triton", "bf16", 0, 1, 4096, "rowwise_adagrad", "sgd"),
    ("fused_triton", "fp32", 0, 3, 10240, "sgd", "adam"),
    ("fused_triton", "bf16", 288, 4, 16384, "rowwise_adagrad", "adagrad"),
    ("fused_triton", "fp32", 32, 1, 3072, "rowwise_adagrad", "sgd"),
    ("fused_triton", "bf16", 32, 2, 8192, "sgd", "adam"),
    ("fused_triton", "fp32", 224, 4, 14336, "rowwise_adagrad", "adagrad"),
    ("fused_triton", "bf16", 0, 2, 12288, "rowwise_adagrad", "adam"),
    ("pytorch_eager", "bf16", 224, 2, 4096, "rowwise_adagrad", "adam"),
    ("pytorch_eager", "fp32", 0, 1, 3072, "sgd", "adagrad"),
]
SET = os.environ.get("BLIND_SET", "a")
SFX = "" if SET == "a" else "_" + SET
if SET == "b":
    GRID, CAP = GRID_B, 12_000_000
if SET == "c":
    GRID, CAP = GRID_C, 18_000_000
if SET == "d":
    GRID, CAP = GRID_D, 16_000_000


def cases(scale=1):
    out = []
    for fw, prec, rank, layers, B, so, do in GRID:
        w = json.loads(json.dumps(json.load(open(WL))["workload"]))
        w.pop("cross_rank", None)
        if rank:
            w["cross_rank"] = rank
        w["cross_layers"] = layers
        w["optimizers"] = {"dense": do, "sparse": so}
        for t in w["tables"]:
            t["rows"] = max(1, min(t["rows"], CAP) // scale)
        cid = "h%s-%s-%s-%s-l%d-b%d-%s-%s" % (SFX.lstrip("_"), "fused" if fw == "fused_triton" else "eager", prec,
                                            "full" if not rank else "r%d" % rank, layers, B, so,
                                            do)
        w["name"] = "MLPerf DLRM-DCNv2 tables capped at %dM, %s" % (CAP // 1000000, cid)
        out.append({"id": cid, "workload": w,
                    "recipe": {"gpus": 1, "batch_per_gpu": max(1, B // scale), "precision": prec,
                               "embedding_precision": "fp32", "framework": fw}})
    return out


def predict(cdplan, probe=None):
    """cdplan step on every case; probe: {"eager_op_us", "triton_launch_us"} put in the
    recipes (host_op_us, triton_launch_us)."""
    out = []
    with tempfile.TemporaryDirectory() as d:
        for c in cases():
            rc = dict(c["recipe"])
            if probe:
                rc["host_op_us"] = probe["eager_op_us"]
                if rc["framework"] == "fused_triton" and probe.get("triton_launch_us"):
                    rc["triton_launch_us"] = probe["triton_launch_us"]
            req = {"hardware": HW, "workload": c["workload"], "recipe": rc}
            p = subprocess.run([cdplan, "step", "-", "--db", os.path.join(d, "p.db")],
                               input=json.dumps(req), capture_output=True, text=True, check=True)
            r = json.loads(p.stdout)
            out.append({"id": c["id"], "step_ms": r["step_ms"], "gpu_ms": r.get("gpu_ms"),
                        "host_ms": r.get("host_ms"), "host_op_us": r.get("host_op_us"),
                        "host_op_source": r.get("host_op_source"),
                        "peak_memory_bytes": r["peak_memory_bytes"], "fits": r.get("fits"),
                        "calibration": r.get("calibration")})
    return {"hardware": HW, "row_cap": CAP, "probe": probe,
            "what": "cdplan step on each case of cases.py" + (
                ", host_op_us/triton_launch_us from the run's host probe" if probe else
                ", default host cost, made before the device run"), "predictions": out}


def job(scale=1):
    steps, warm = (12, 4) if scale == 1 else (2, 1)
    return {"kind": "dlrm_step", "id": "%s-dcn-host%s" % (HW.split("-")[0], SFX),
            "params": {"steps": steps, "warmup": warm, "seed": 0, "time_budget_s": 150,
                       "cases": [{"label": c["id"], "workload": c["workload"],
                                  "recipe": c["recipe"]} for c in cases(scale)]}}


def _load(name):
    return json.load(open(os.path.join(HERE, name)))


def _step_ms(cdplan, db, c, op_us):
    rc = dict(c["recipe"], host_op_us=op_us)
    p = subprocess.run([cdplan, "step", "-", "--db", db], capture_output=True, text=True,
                       input=json.dumps({"hardware": HW, "workload": c["workload"], "recipe": rc}),
                       check=True)
    return json.loads(p.stdout)["step_ms"]


def implied(cdplan, c, ms, db):
    """The host_op_us at which the model's step equals the measured ms (bisection on a log
    scale over 0.1-200 us); None where no value in that range reaches it (GPU-bound)."""
    lo, hi = 0.1, 200.0
    if _step_ms(cdplan, db, c, lo) > ms or _step_ms(cdplan, db, c, hi) < ms:
        return None
    for _ in range(30):
        mid = (lo * hi) ** 0.5
        lo, hi = (mid, hi) if _step_ms(cdplan, db, c, mid) < ms else (lo, mid)
    return (lo * hi) ** 0.5


def fit_k1(cdplan):
    """K1 = the median over set A's eager rows (both jobs) of implied host_op_us / the job's
    probe step_kernel_us (the probe's first figure): the probe-to-model factor, fitted on set
    A only, for set B's second rescale."""
    by = {c["id"]: c for c in cases()}
    ratios, rows = [], []
    with tempfile.TemporaryDirectory() as d:
        db = os.path.join(d, "p.db")
        for name in ("dcn_host.json", "dcn_repeat.json"):
            res = _load(name)
            hp = res["host_probe"]
            probe = hp.get("step_kernel_us", hp["eager_op_us"])  # set A: the first figure
            for r in res["rows"]:
                if "-eager-" not in r["label"]:
                    continue
                op = implied(cdplan, by[r["label"]], r["step_ms"], db)
                rows.append({"file": name, "id": r["label"], "step_ms": r["step_ms"],
                             "implied_op_us": op, "probe_step_kernel_us": probe})
                if op:
                    ratios.append(op / probe)
    return {"what": "K1 = median(implied host_op_us / probe step_kernel_us) over set A's eager "
            "rows; set B's probek rescale uses host_op_us = K1 x its probe's step_kernel_us",
            "K1": statistics.median(ratios), "rows": rows}


def score(result=None):
    result = result or "dcn_host%s.json" % SFX
    res = _load(result)
    rows = {r["label"]: r for r in res["rows"]}
    hp = res.get("host_probe", {})
    print("host probe: eager_op_us %s, triton_launch_us %s (start %s, end %s)" % (
        _f(hp.get("eager_op_us")), _f(hp.get("triton_launch_us")),
        _f(hp.get("start", {}).get("eager_op_us")), _f(hp.get("end", {}).get("eager_op_us"))))
    for name in ("predictions%s.json" % SFX, "predictions%s_probe.json" % SFX,
                 "predictions%s_probek.json" % SFX):
        if not os.path.exists(os.path.join(HERE, name)):
            continue
        pred = {p["id"]: p for p in _load(name)["predictions"]}
        print("== %s" % name)
        groups = {"all": [], "fused": [], "eager": []}
        for cid, r in rows.items():
            p = pred[cid]
            x = p["step_ms"] / r["step_ms"] - 1
            y = p["peak_memory_bytes"] / r["peak_memory_bytes"] - 1
            groups["all"].append((abs(x), abs(y)))
            groups["fused" if "-fused-" in cid else "eager"].append((abs(x), abs(y)))
            print("%-46s measured %7.2f ms  predicted %7.2f (host %6.2f, gpu %6.2f)  %+6.1f %%"
                  "   peak %+5.1f %%" % (cid, r["step_ms"], p["step_ms"], p["host_ms"],
                                          p["gpu_ms"], 100 * x, 100 * y))
        for g, v in groups.items():
            if v:
                e = [a for a, _ in v]
                print("  %-5s n=%2d step median %5.1f %%  max %5.1f %%   peak median %4.1f %%" % (
                    g, len(v), 100 * statistics.median(e), 100 * max(e),
                    100 * statistics.median([b for _, b in v])))
    for cid in (c["id"] for c in cases()):
        if cid not in rows:
            print("not measured: %s" % cid)


def _f(v):
    return "%.2f" % v if isinstance(v, (int, float)) else "-"


def main(argv):
    cmd = argv[1] if len(argv) > 1 else ""
    if cmd == "predict" and len(argv) >= 3:
        doc = predict(argv[2])
    elif cmd == "rescale" and len(argv) >= 4:
        hp = json.load(open(argv[3]))["host_probe"]
        doc = predict(argv[2], {"eager_op_us": hp["eager_op_us"],
                                "triton_launch_us": hp.get("triton_launch_us")})
    elif cmd == "rescale_k" and len(argv) >= 4:
        hp = json.load(open(argv[3]))["host_probe"]
        k1 = _load("k_host.json")["K"] if SET == "c" else _load("k1.json")["K1"]
        doc = predict(argv[2], {"eager_op_us": k1 * hp["step_kernel_us"],
                                "triton_launch_us": hp.get("triton_launch_us")})
        doc["what"] += " (host_op_us = K1 %.4f x probe step_kernel_us %.2f)" % (
            k1, hp["step_kernel_us"])
    elif cmd == "implied" and len(argv) >= 4:
        # the quantity check: per row, the host_op_us at which the model (this commit's)
        # meets the measured step, beside the job's probe figures
        res, by = json.load(open(argv[3])), {c["id"]: c for c in cases()}
        hp = res["host_probe"]
        with tempfile.TemporaryDirectory() as d:
            rows = [{"id": r["label"], "step_ms": r["step_ms"],
                     "implied_op_us": implied(argv[2], by[r["label"]], r["step_ms"],
                                              os.path.join(d, "p.db"))} for r in res["rows"]]
        doc = {"result": os.path.basename(argv[3]),
               "probe": {k: hp.get(k) for k in ("eager_op_us", "step_kernel_us",
                                                "iter_fixed_us", "triton_launch_us")},
               "rows": rows}
    elif cmd == "fit_k1" and len(argv) >= 3:
        doc = fit_k1(argv[2])
    elif cmd == "job":
        json.dump(job(int(argv[2]) if len(argv) > 2 else 1), sys.stdout, separators=(",", ":"))
        sys.stdout.write("\n")
        return 0
    elif cmd == "job_repeat":
        j = job()
        j["id"] += "-repeat"
        keep = ("-b4096-",) if SET != "d" else ("-b3072-", "-b4096-", "-b6144-")
        j["params"]["cases"] = [c for c in j["params"]["cases"]
                                if any(k in c["label"] for k in keep)][::-1]
        j["params"]["time_budget_s"] = 60
        j["params"]["profile"] = True
        json.dump(j, sys.stdout, separators=(",", ":"))
        sys.stdout.write("\n")
        return 0
    elif cmd == "score":
        score(*argv[2:3])
        return 0
    else:
        print(__doc__)
        return 2
    print(json.dumps(doc, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
