#!/usr/bin/env python3
"""The probe-to-model factor for set C's predictions (issue 21, host speed per machine),
fitted on sets A and B only (both already measured; set C never is before its predictions
are committed).

Model (docs/step-model.md, "Host speed per machine"): recipe.host_op_us = K x the run's probe
step_kernel_us (host_probe.py: a 25-kernel training step's host time per kernel, per-step costs
included), and a given host_op_us scales the profile's other host terms (step_coalesce_sync_us,
step_host_fixed_us) by host_op_us / the profile's per-op time. K minimises the sum of squared
log step errors over the eager rows of dcn_host.json, dcn_repeat.json (set A) and
dcn_host_b.json, dcn_repeat_b.json (set B), each row with its own job's probe; golden-section
search on log K. Fused rows are reported, not fitted (their host is under-counted: README).

    python3 fit_host.py CDPLAN > k_host.json
"""
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
FILES = (("a", "dcn_host.json"), ("a", "dcn_repeat.json"), ("b", "dcn_host_b.json"),
         ("b", "dcn_repeat_b.json"))


def load_cases(s):
    os.environ["BLIND_SET"] = s
    import importlib  # noqa: PLC0415
    sys.path.insert(0, HERE)
    import cases  # noqa: PLC0415
    importlib.reload(cases)
    return {c["id"]: c for c in cases.cases()}


def rows():
    out = []
    for s, f in FILES:
        by = load_cases(s)
        res = json.load(open(os.path.join(HERE, f)))
        hp = res["host_probe"]
        probe = hp.get("step_kernel_us", hp["eager_op_us"])  # set A's probe: the first figure
        for r in res["rows"]:
            out.append({"file": f, "id": r["label"], "ms": r["step_ms"], "probe": probe,
                        "case": by[r["label"]]})
    return out


def step(cdplan, db, c, op):
    rc = dict(c["recipe"], host_op_us=op)
    p = subprocess.run([cdplan, "step", "-", "--db", db], capture_output=True, text=True,
                       input=json.dumps({"hardware": "h100-sxm", "workload": c["workload"],
                                         "recipe": rc}), check=True)
    return json.loads(p.stdout)["step_ms"]


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    cdplan = argv[1]
    rs = rows()
    eager = [r for r in rs if "-eager-" in r["id"]]
    with tempfile.TemporaryDirectory() as d:
        db = os.path.join(d, "p.db")

        def loss(lk):
            return sum(math.log(step(cdplan, db, r["case"], math.exp(lk) * r["probe"]) / r["ms"])
                       ** 2 for r in eager)
        a, b = math.log(0.05), math.log(2.0)
        g = (math.sqrt(5) - 1) / 2
        c1, c2 = b - g * (b - a), a + g * (b - a)
        f1, f2 = loss(c1), loss(c2)
        for _ in range(25):
            if f1 < f2:
                b, c2, f2 = c2, c1, f1
                c1 = b - g * (b - a)
                f1 = loss(c1)
            else:
                a, c1, f1 = c1, c2, f2
                c2 = a + g * (b - a)
                f2 = loss(c2)
        k = math.exp((a + b) / 2)
        out = []
        for r in rs:
            p = step(cdplan, db, r["case"], k * r["probe"])
            out.append({"file": r["file"], "id": r["id"], "measured_ms": r["ms"],
                        "probe_step_kernel_us": r["probe"], "host_op_us": k * r["probe"],
                        "predicted_ms": p, "error": p / r["ms"] - 1})
    e = [abs(o["error"]) for o in out if "-eager-" in o["id"]]
    f = [abs(o["error"]) for o in out if "-fused-" in o["id"]]
    print(json.dumps({"what": __doc__.split("\n")[0], "K": k,
                      "fit_eager_median_error": statistics.median(e), "fit_eager_max_error": max(e),
                      "fused_median_error": statistics.median(f), "rows": out}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
