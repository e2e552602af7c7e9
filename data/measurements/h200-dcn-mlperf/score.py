#!/usr/bin/env python3
"""Scores predictions_prerun.json (cdplan step, committed before the run) against the device
run: dcn.json (runner dlrm_step, job.json) and, where it got that far, dcn_repeat.json (the
same cases in reverse order). Measured step time of a case = the mean of its runs' step_ms
(each the mean of 12 timed steps after 4 warm-up steps, wall clock around a device
synchronize); the error is predicted / measured - 1. Prints every case, then the median and
max absolute error over all cases, each half (fit / check: cases.py) and each precision, and
the peak memory error (torch.cuda.max_memory_allocated). Target (issue 21): median <= 10 %,
max <= 20 %.

  python3 data/measurements/h200-dcn-mlperf/score.py [--json]
"""
import json
import os
import statistics
import sys

HERE = os.environ.get("DCN_DIR") or os.path.dirname(os.path.abspath(__file__))


def load(name):
    p = os.path.join(HERE, name)
    return json.load(open(p)) if os.path.exists(p) else None


def measured():
    runs = {}
    for name in ("dcn.json", "dcn_repeat.json"):
        d = load(name)
        for r in (d or {}).get("rows", []):
            runs.setdefault(r["label"], []).append(r)
    return runs


def score():
    pred = load("predictions_prerun.json")["predictions"]
    runs = measured()
    rows = []
    for p in pred:
        rs = runs.get(p["id"])
        if not rs:
            rows.append({"id": p["id"], "half": p["half"], "measured": None})
            continue
        ms = statistics.mean(r["step_ms"] for r in rs)
        peak = statistics.mean(r["peak_memory_bytes"] for r in rs if r["peak_memory_bytes"])
        rows.append({"id": p["id"], "half": p["half"], "runs_ms": [r["step_ms"] for r in rs],
                     "measured_ms": ms, "predicted_ms": p["step_ms"],
                     "err": p["step_ms"] / ms - 1, "measured_peak": peak,
                     "predicted_peak": p["peak_memory_bytes"],
                     "peak_err": p["peak_memory_bytes"] / peak - 1})
    return rows


def summary(rows, sel):
    e = [abs(r["err"]) for r in rows if r.get("measured_ms") and sel(r)]
    m = [abs(r["peak_err"]) for r in rows if r.get("measured_ms") and sel(r)]
    if not e:
        return None
    return {"n": len(e), "median": statistics.median(e), "max": max(e),
            "peak_median": statistics.median(m), "peak_max": max(m)}


def main():
    rows = score()
    groups = {"all": lambda r: True, "fit half": lambda r: r["half"] == "fit",
              "check half": lambda r: r["half"] == "check",
              "fp32": lambda r: "-fp32-" in r["id"], "bf16": lambda r: "-bf16-" in r["id"]}
    summ = {k: summary(rows, f) for k, f in groups.items()}
    if "--json" in sys.argv:
        json.dump({"rows": rows, "summary": summ}, sys.stdout, indent=1)
        return 0
    for r in rows:
        if r.get("measured_ms") is None:
            print("%-24s %-5s not measured" % (r["id"], r["half"]))
            continue
        print("%-24s %-5s measured %8.2f ms (%s)  predicted %8.2f  %+6.1f %%   peak %.1f / %.1f GB"
              " %+5.1f %%" % (r["id"], r["half"], r["measured_ms"],
                              ", ".join("%.2f" % x for x in r["runs_ms"]), r["predicted_ms"],
                              100 * r["err"], r["measured_peak"] / 1e9, r["predicted_peak"] / 1e9,
                              100 * r["peak_err"]))
    for k, s in summ.items():
        if s:
            print("%-10s n=%2d  step median %.1f %%  max %.1f %%   peak median %.1f %%  max %.1f %%"
                  % (k, s["n"], 100 * s["median"], 100 * s["max"], 100 * s["peak_median"],
                     100 * s["peak_max"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
