#!/usr/bin/env python3
"""Scores predictions_prerun.json (committed before the run) against the H100 run (gemm.json,
memory_ops.json, dlrm_step.json here: the runner's results of validate/gpu/jobs/h200-extra/).

Per class: median and p90 of |predicted / measured - 1| (GEMM per dtype; embedding bag forward +
sparse backward; element-wise; DLRM step on HBM and with host tables), then the H200/H100 speed
ratio: measured (../h200-extra, same jobs on the H200) against predicted (cdplan on h200 and
h100-sxm, the h200 side from ../h200-extra's own rows run through the same estimate requests).

  python3 data/measurements/h100-check/score.py [CDPLAN [PREDICTIONS]]
  CDPLAN: for the H200 side of the ratios (default build/cli/cdplan); PREDICTIONS: another
  predictions file of predict.py's format (default the committed predictions_prerun.json)
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
H200 = os.path.join(HERE, "..", "h200-extra")


def load(d, name):
    p = os.path.join(d, name)
    return json.load(open(p)) if os.path.exists(p) else None


def stats(v):
    if not v:
        return "n=0"
    a = sorted(abs(x) for x in v)
    p90 = a[max(0, -(-9 * len(a) // 10) - 1)]
    return "n=%3d median %5.1f %%  p90 %5.1f %%  max %5.1f %%" % (
        len(a), 100 * statistics.median(a), 100 * p90, 100 * a[-1])


def gemm_key(r):
    return (r["m"], r["n"], r["k"], r["dtype"])


def mem_key(r):
    if r["op"] == "embedding_bag_sum" or r["op"] == "embedding_bag":
        return ("emb", r["rows"], r["dim"], r["dtype"], r["batch"], r["pooling"])
    return ("ew", r.get("name", r["op"]), r["numel"], r["dtype"])


def mem_meas(r):
    return r.get("fwd_bwd_sparse_ms") if r["op"].startswith("embedding_bag") else r.get("ms")


def step_key(c):
    return (c["batch"], c["precision"], c["dim"], c.get("pooling", 1),
            c.get("pad_interaction_to"), c.get("placement", "hbm"))


def h200_preds(exe, pred):
    """cdplan on the h200 for the same ops (for the predicted ratio)."""
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "p.db")
        for key, kf in (("gemm", gemm_key), ("memory_ops", mem_key)):
            ops = pred[key]
            for i in range(0, len(ops), 200):
                chunk = ops[i:i + 200]
                req = [{k: v for k, v in o.items() if k not in ("name", "pred_ms", "bound")}
                       for o in chunk]
                p = subprocess.run([exe, "estimate", "-", "--db", db], capture_output=True,
                                   text=True, input=json.dumps({"hardware": "h200", "ops": req}),
                                   check=True)
                for o, r in zip(chunk, json.loads(p.stdout)["results"]):
                    out[(key, kf(o))] = r["ms"]
    return out


def main():
    exe = sys.argv[1] if len(sys.argv) > 1 else "build/cli/cdplan"
    pred = (json.load(open(sys.argv[2])) if len(sys.argv) > 2
            else load(HERE, "predictions_prerun.json"))
    have = {n: load(HERE, n + ".json") for n in ("gemm", "memory_ops", "dlrm_step")}
    ref = {n: load(H200, n + ".json") for n in ("gemm", "memory_ops", "dlrm_step")}
    p200 = h200_preds(exe, pred) if os.path.exists(exe) else {}
    print("H100 SXM check, predictions: %s" % (
        os.path.basename(sys.argv[2]) if len(sys.argv) > 2
        else "predictions_prerun.json (committed before the run)"))
    ratio_err = []
    # GEMM
    meas = {gemm_key(r): r["ms"] for r in (have["gemm"] or {}).get("rows", []) if r.get("ms")}
    m200 = {gemm_key(r): r["ms"] for r in (ref["gemm"] or {}).get("rows", []) if r.get("ms")}
    by = {}
    for p in pred["gemm"]:
        k = gemm_key(p)
        if k in meas:
            by.setdefault(p["dtype"], []).append(p["pred_ms"] / meas[k] - 1)
            if k in m200 and ("gemm", k) in p200:
                ratio_err.append(("gemm " + p["dtype"],
                                  (p200[("gemm", k)] / p["pred_ms"]) / (m200[k] / meas[k]) - 1))
    for dt, v in sorted(by.items()):
        print("  gemm %-5s %s" % (dt, stats(v)))
    print("  gemm all   %s" % stats([x for v in by.values() for x in v]))
    # memory ops
    meas = {mem_key(r): mem_meas(r) for r in (have["memory_ops"] or {}).get("rows", [])}
    m200 = {mem_key(r): mem_meas(r) for r in (ref["memory_ops"] or {}).get("rows", [])}
    emb, ew = [], []
    for p in pred["memory_ops"]:
        k = mem_key(p)
        if meas.get(k):
            (emb if k[0] == "emb" else ew).append(p["pred_ms"] / meas[k] - 1)
            if m200.get(k) and ("memory_ops", k) in p200:
                ratio_err.append((k[0], (p200[("memory_ops", k)] / p["pred_ms"]) /
                                  (m200[k] / meas[k]) - 1))
    print("  embedding bag fwd+bwd %s" % stats(emb))
    print("  element-wise          %s" % stats(ew))
    # DLRM steps
    meas = {}
    for r in (have["dlrm_step"] or {}).get("rows", []):
        if r.get("step_ms_median"):
            meas[step_key(r)] = (r["step_ms_median"], r.get("peak_mem_bytes"))
    hbm, host, mem = [], [], []
    for p in pred["dlrm_step"]:
        k = step_key(p["case"])
        if k in meas:
            e = p["pred_step_ms"] / meas[k][0] - 1
            (host if k[5] == "host" else hbm).append(e)
            if meas[k][1]:
                mem.append(p["pred_peak_mem_bytes"] / meas[k][1] - 1)
            print("    step %-40s pred %8.2f ms  meas %8.2f ms  %+6.1f %%" % (
                str(k), p["pred_step_ms"], meas[k][0], 100 * e))
    print("  dlrm step (hbm)  %s" % stats(hbm))
    print("  dlrm step (host) %s" % stats(host))
    print("  dlrm peak memory %s" % stats(mem))
    for cls in sorted({c for c, _ in ratio_err}):
        print("  H200/H100 ratio, %-12s %s" % (cls, stats([e for c, e in ratio_err if c == cls])))
    print("  H200/H100 ratio, all          %s" % stats([e for _, e in ratio_err]))


if __name__ == "__main__":
    main()
