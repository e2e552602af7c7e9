#!/usr/bin/env python3
"""The per-op host time each lent machine showed where no probe ran: for every host-bound
measured DCN step (the H200 set of ../h200-dcn-mlperf/dcn.json; the blind eager H100 sets 2, 4,
5 here), the recipe host_op_us at which the build given meets the measured step (bisection on
1-60 us). Feeds COST_HOST_PROBED_OP_US_LO/HI (costmodel/step.h). From the repository root:

  python3 data/measurements/h100-dcn-mlperf/host_implied.py build/cli/cdplan > data/measurements/h100-dcn-mlperf/host_implied.txt
"""
import importlib
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def step(cdplan, db, hw, c, op):
    rc = dict(c["recipe"], host_op_us=op) if op else c["recipe"]
    req = {"hardware": hw, "workload": c["workload"], "recipe": rc}
    return json.loads(subprocess.run([cdplan, "step", "-", "--db", db], input=json.dumps(req),
                                     capture_output=True, text=True, check=True).stdout)


def implied(cdplan, db, hw, c, m):
    a, b = 1.0, 60.0
    if not step(cdplan, db, hw, c, a)["step_ms"] < m < step(cdplan, db, hw, c, b)["step_ms"]:
        return None
    for _ in range(30):
        mid = (a + b) / 2
        if step(cdplan, db, hw, c, mid)["step_ms"] < m:
            a = mid
        else:
            b = mid
    return (a + b) / 2


def sets():
    sys.path.insert(0, os.path.join(HERE, "..", "h200-dcn-mlperf"))
    import cases as h200
    meas = {r["label"]: r["step_ms"] for r in
            json.load(open(os.path.join(HERE, "..", "h200-dcn-mlperf", "dcn.json")))["rows"]}
    yield "h200 set (2026-12-05 16:04 UTC)", "h200", [(c["id"], c, meas[c["id"]]) for c in h200.cases()
                                                       if c["id"] in meas]
    sys.path.insert(0, HERE)
    for s in ("2", "4", "5"):
        os.environ["BLIND_SET"] = s
        import blind2
        importlib.reload(blind2)
        meas = {r["label"]: r["step_ms"] for r in
                json.load(open(os.path.join(HERE, "blind%s.json" % s)))["rows"]}
        yield "h100 blind%s" % s, "h100-sxm", [(c["id"], c, meas[c["id"]]) for c in blind2.cases()]


def main(cdplan):
    with tempfile.TemporaryDirectory() as d:
        db = os.path.join(d, "p.db")
        for name, hw, rows in sets():
            vals = []
            for cid, c, m in rows:
                r = step(cdplan, db, hw, c, None)
                if not r["host_bound"]:
                    continue
                v = implied(cdplan, db, hw, c, m)
                if v:
                    vals.append(v)
                print("%-22s %-46s measured %7.2f predicted %7.2f implied host_op_us %s" % (
                    name, cid, m, r["step_ms"], "%.2f" % v if v else "-"))
            if vals:
                print("%-22s host-bound steps %d: implied %.2f-%.2f us" % (name, len(vals), min(vals), max(vals)))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "build/cli/cdplan")
