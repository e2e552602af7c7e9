#!/usr/bin/env python3
"""Does a step's host_sensitivity.step_ms_range (api/step.c) hold the measured step? The
blind eager sets 2, 4 and 5 (lent H100s, default host figure: no recipe host_op_us), priced by
the build given, each measured step against its range. Run from the repository root:

  python3 data/measurements/h100-dcn-mlperf/host_range.py build/cli/cdplan > data/measurements/h100-dcn-mlperf/host_range.txt
"""
import importlib
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def main(cdplan):
    n = inside = hb_n = hb_in = 0
    err = []
    for s in ("2", "4", "5"):
        os.environ["BLIND_SET"] = s
        import blind2
        importlib.reload(blind2)
        rows = {r["label"]: r for r in json.load(open(os.path.join(HERE, "blind%s.json" % s)))["rows"]}
        with tempfile.TemporaryDirectory() as d:
            for c in blind2.cases():
                req = {"hardware": "h100-sxm", "workload": c["workload"], "recipe": c["recipe"]}
                r = json.loads(subprocess.run([cdplan, "step", "-", "--db", os.path.join(d, "p.db")],
                                              input=json.dumps(req), capture_output=True, text=True,
                                              check=True).stdout)
                m = rows[c["id"]]["step_ms"]
                err.append(abs(r["step_ms"] / m - 1))
                lo, hi = r["host_sensitivity"]["step_ms_range"]
                ok = lo <= m <= hi
                out = 0.0 if ok else (lo / m - 1 if m < lo else m / hi - 1)
                n += 1
                inside += ok
                hb_n += r["host_bound"]
                hb_in += ok and r["host_bound"]
                print("%-44s measured %7.2f  predicted %7.2f  range %7.2f-%7.2f  %s  %s" % (
                    c["id"], m, r["step_ms"], lo, hi, "host-bound" if r["host_bound"] else "gpu-bound ",
                    "inside" if ok else "outside by %.1f %%" % (100 * out)))
    print("inside the range: %d of %d steps; host-bound: %d of %d" % (inside, n, hb_in, hb_n))
    print("step at the default host figure: median |pred/meas - 1| %.3f, max %.3f (n=%d)" % (
        statistics.median(err), max(err), len(err)))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "build/cli/cdplan")
