#!/usr/bin/env python3
"""Fused-step check for costmodel/step_fused.c: every row of sets A, B, C (job and repeat)
predicted by one cdplan build, at the default host cost ("def") and with the run's probe
(the committed rescale formula: host_op_us = probe eager_op_us, triton_launch_us = probe's;
for set A the probe's eager_op_us is the first version's per-kernel figure, not the model's
quantity: README "Set A"). Prints per row and per (set, mode, kind): median and max |error|,
and over sets A + B's fused rows at the default host cost the median and the RMS of
log(predicted / measured), the quantity STEP_FUSED_SERIAL_US was fitted on: the constant
was set to each grid value, rebuilt, and this script run (fit_fused.json records the grid).
Set C's rows are the check, never fitted; set D's are blind (predictions_d.json).

  python3 fit_fused.py CDPLAN [-v]
"""
import importlib
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    cd, verbose = argv[1], "-v" in argv
    sys.path.insert(0, HERE)
    res, logs = {}, []
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "p.db")
        for s, sfx in (("a", ""), ("b", "_b"), ("c", "_c")):
            os.environ["BLIND_SET"] = s
            import cases  # noqa: PLC0415
            importlib.reload(cases)
            by = {c["id"]: c for c in cases.cases()}
            for f in ("dcn_host%s.json" % sfx, "dcn_repeat%s.json" % sfx):
                d = json.load(open(os.path.join(HERE, f)))
                hp = d["host_probe"]
                for r in d["rows"]:
                    c, kind = by[r["label"]], "fused" if "-fused-" in r["label"] else "eager"
                    for mode in ("def", "probe"):
                        rc = dict(c["recipe"])
                        if mode == "probe":
                            rc["host_op_us"] = hp["eager_op_us"]
                            if kind == "fused" and hp.get("triton_launch_us"):
                                rc["triton_launch_us"] = hp["triton_launch_us"]
                        req = {"hardware": cases.HW, "workload": c["workload"], "recipe": rc}
                        p = subprocess.run([cd, "step", "-", "--db", db], input=json.dumps(req),
                                           capture_output=True, text=True, check=True)
                        o = json.loads(p.stdout)
                        e = o["step_ms"] / r["step_ms"] - 1
                        res.setdefault((s, mode, kind), []).append(abs(e))
                        if mode == "def" and s in "ab" and kind == "fused":
                            logs.append(math.log(o["step_ms"] / r["step_ms"]))
                        if verbose or (kind == "fused" and mode == "def"):
                            print("%-18s %-5s %-52s meas %6.2f pred %6.2f host %5.2f gpu %6.2f"
                                  " %+6.1f %%" % (f, mode, r["label"], r["step_ms"], o["step_ms"],
                                                   o["host_ms"], o["gpu_ms"], 100 * e))
    for k, v in sorted(res.items()):
        print("set %s %-5s %-5s n=%2d median %5.1f %%  max %5.1f %%" % (
            k + (len(v), 100 * statistics.median(v), 100 * max(v))))
    ab = res[("a", "def", "fused")] + res[("b", "def", "fused")]
    print("sets A+B fused, default host: n=%d median %.1f %%, RMS log %.4f, mean log %+.4f" % (
        len(ab), 100 * statistics.median(ab), (sum(x * x for x in logs) / len(logs)) ** 0.5,
        sum(logs) / len(logs)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
