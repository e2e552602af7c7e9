#!/usr/bin/env python3
"""A measured run of a blind set's job scored through cdplan's own mini route (recipe
host_mini_batch + host_mini_step_ms, costmodel/step.c cost_step_host_mini) and at the default
host. A rerun of a seen set on another lent host; not a blind score. From this folder:

  BLIND_SET=7 python3 score_rerun.py ../../../build/cli/cdplan blind7_run2.json
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

import blind7


def main(cdplan, path):
    res = json.load(open(path))
    hw = blind7.hw_of(res)
    cases = {c["id"]: c for c in blind7.cases()}
    e_d, e_m = [], []
    print("device: %s (cdplan hardware %s), probe step_kernel_us %.2f" % (
        res["device"].get("name"), hw, res["host_probe"]["step_kernel_us"]))
    with tempfile.TemporaryDirectory() as d:
        db = os.path.join(d, "p.db")
        for r in res["rows"]:
            c = cases[r["label"]]
            hm = r["host_mini"]
            out = []
            for rc in (c["recipe"], dict(c["recipe"], host_mini_batch=hm["batch"],
                                         host_mini_step_ms=hm["step_ms"])):
                p = subprocess.run([cdplan, "step", "-", "--db", db], capture_output=True,
                                   text=True, check=True,
                                   input=json.dumps({"hardware": hw, "workload": c["workload"],
                                                     "recipe": rc}))
                out.append(json.loads(p.stdout))
            x, y = out[0]["step_ms"] / r["step_ms"] - 1, out[1]["step_ms"] / r["step_ms"] - 1
            e_d.append(abs(x))
            e_m.append(abs(y))
            print("%-46s measured %7.2f  default %+6.1f %%  mini %+6.1f %% (host_op_us %.2f)" % (
                r["label"], r["step_ms"], 100 * x, 100 * y, out[1]["host_op_us"]))
    print("n=%d default median %.1f %% max %.1f %% | mini median %.1f %% max %.1f %%" % (
        len(e_d), 100 * statistics.median(e_d), 100 * max(e_d), 100 * statistics.median(e_m),
        100 * max(e_m)))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
