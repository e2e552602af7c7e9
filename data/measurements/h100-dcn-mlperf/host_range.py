#!/usr/bin/env python3
"""Does a step's host_sensitivity.step_ms_range (api/step.c) hold the measured step? The
blind eager sets 2, 4 and 5 (lent H100s, default host figure: no recipe host_op_us), priced by
the build given, each measured step against its range (score_ranges.score). Run from the
repository root:

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
from score_ranges import score  # noqa: E402


def main(cdplan):
    preds, measured, err = [], {}, []
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
                measured[c["id"]] = m = rows[c["id"]]["step_ms"]
                err.append(abs(r["step_ms"] / m - 1))
                preds.append({"id": c["id"], "step_ms": r["step_ms"], "host_bound": r["host_bound"],
                              "step_ms_range": r["host_sensitivity"]["step_ms_range"]})
    score(preds, measured, "blind sets 2, 4, 5")
    print("step at the default host figure: median |pred/meas - 1| %.3f, max %.3f (n=%d)" % (
        statistics.median(err), max(err), len(err)))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "build/cli/cdplan")
