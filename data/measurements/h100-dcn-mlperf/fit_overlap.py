#!/usr/bin/env python3
"""Chooses the eager coalescing optimizer's phase form and fits step_coalesce_sync_us and
step_coalesce_ns (costmodel/step_fit.c) on the FITTING half of the 18 first steps only
(cases.py halves: even index), as fit_coalesce.py did for the serial form:

  python3 data/measurements/h100-dcn-mlperf/fit_overlap.py build/cli/cdplan SYNC_US NS

SYNC_US and NS: the values the binary was built with. Per case the script asks cdplan for the
prediction and its sparse_optimizer GPU time, takes the optimizer phase out (26 tables x 20
host ops at the profile's per-op time, the GPU time, 26 syncs) and puts it back in three forms:
 F0 serial     host + GPU + n x sync (the model before 2026-12-05 22:15 UTC)
 F1 overlap    max(host, GPU) + n x sync (host and GPU overlap between the syncs)
 F2 per table  sum over tables of max(host, GPU) + n x sync
each with its own (sync, ns) grid-fitted (squared log error, fit half), and prints the score of
the check half, blind2, blind4 and profile5 (never fitted). The measured time of a first-set
case is the mean of dcn.json and dcn_repeat.json.
"""
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SETS = (("first", "job.json", ("dcn.json", "dcn_repeat.json")),
        ("blind2", "blind2_job.json", ("blind2.json",)),
        ("blind4", "blind4_job.json", ("blind4.json",)),
        ("profile5", "profile5_job.json", ("profile5.json",)))
OP_MS = 9.178399069751434e-3  # step_eager_op_us of the H100's profile (the H200 calibration)
GAP_MS = 1e-3  # queued kernels: ~1 us each (step.c step_add)


def rows(cdplan, s0, c0):
    out = []
    with tempfile.TemporaryDirectory() as d:
        for name, jobf, resf in SETS:
            cases = json.load(open(os.path.join(HERE, jobf)))["params"]["cases"]
            meas = {}
            for f in resf:
                for r in json.load(open(os.path.join(HERE, f)))["rows"]:
                    meas.setdefault(r["label"], []).append(r["step_ms"])
            for i, c in enumerate(cases):
                if c["label"] not in meas:
                    continue
                rc = {k: c["recipe"][k] for k in ("gpus", "batch_per_gpu", "precision",
                                                  "embedding_precision", "framework")}
                p = subprocess.run([cdplan, "step", "-", "--db", os.path.join(d, "p.db")],
                                   input=json.dumps({"hardware": "h100-sxm", "workload": c["workload"],
                                                     "recipe": rc}),
                                   capture_output=True, text=True, check=True)
                o = json.loads(p.stdout)
                kc = {k["class"]: k["ms"] for k in o["kernel_classes"]}
                B = rc["batch_per_gpu"]
                out.append({"set": name if name != "first" else ("fit" if i % 2 == 0 else "check"),
                            "id": c["label"], "m": statistics.mean(meas[c["label"]]),
                            "pred": o["step_ms"], "gpu_opt": kc.get("sparse_optimizer", 0),
                            "sgd": c["workload"]["optimizers"]["sparse"] == "sgd",
                            "L": [B * t["pooling"] for t in c["workload"]["tables"]]})
    return out


def model(r, form, s, c, s0, c0, built_form):
    if r["sgd"]:
        return r["pred"]
    L, n = r["L"], len(r["L"])
    h = 20 * n * OP_MS
    g0 = r["gpu_opt"]
    a = (g0 - n * 20 * GAP_MS) / sum(L)
    g = [20 * GAP_MS + x * (a + (c - c0) * 1e-6) for x in L]
    taken = {0: h + g0, 1: max(h, g0)}[built_form]
    rest = r["pred"] - taken - n * s0 * 1e-3
    opt = {0: h + sum(g), 1: max(h, sum(g)), 2: sum(max(20 * OP_MS, x) for x in g)}[form]
    return rest + opt + n * s * 1e-3


def main(argv):
    if len(argv) < 4:
        print(__doc__)
        return 2
    s0, c0 = float(argv[2]), float(argv[3])
    built = int(os.environ.get("BUILT_FORM", "1"))  # 1: the binary has the overlapping phase
    rs = rows(argv[1], s0, c0)
    fit = [r for r in rs if r["set"] == "fit"]
    for form in (0, 1, 2):
        best = min((sum(math.log(model(r, form, s, c, s0, c0, built) / r["m"]) ** 2 for r in fit),
                    s, c) for s in range(0, 801, 5) for c in [i / 100 for i in range(0, 601, 5)])
        _, s, c = best
        line = []
        for name in ("fit", "check", "blind2", "blind4", "profile5"):
            e = [abs(model(r, form, s, c, s0, c0, built) / r["m"] - 1) for r in rs if r["set"] == name]
            line.append("%s n=%d median %.1f %% max %.1f %%" % (name, len(e), 100 * statistics.median(e),
                                                                100 * max(e)))
        print("F%d sync %3.0f us  ns %.2f:  %s" % (form, s, c, " | ".join(line)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
