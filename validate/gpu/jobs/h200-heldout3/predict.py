#!/usr/bin/env python3
"""Rank the runner's default kernel_sweep configs for every shape of the given
kernel_sweep jobs with `cdplan kernels select` on h200 (no calibration: the
shipped parameters and family corrections), and print the model's choice and
top five per shape as JSON -- written before the sweep runs. Usage:
  predict.py CDPLAN JOB.json [JOB.json ...] > predictions.json"""
import json, os, subprocess, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from runner import default_kernel_configs  # noqa: E402  (stdlib-only at import time)


def main():
    cdplan, jobs = sys.argv[1], sys.argv[2:]
    cands = [{"block_m": c["bm"], "block_n": c["bn"], "block_k": c["bk"], "num_warps": c["warps"],
              "num_stages": c["stages"], "group_m": c["group_m"]} for c in default_kernel_configs()]
    out = []
    for path in jobs:
        p = json.load(open(path))["params"]
        for dt in p["dtypes"]:
            for s in p["shapes"]:
                req = {"hardware": "h200", "calibration": "none", "top": 5, "candidates": cands,
                       "problems": [{"m": s["m"], "n": s["n"], "k": s["k"], "dtype": dt}]}
                r = subprocess.run([cdplan, "kernels", "select", "-"], input=json.dumps(req),
                                   text=True, capture_output=True, check=True)
                res = json.loads(r.stdout)["results"][0]
                out.append({"m": s["m"], "n": s["n"], "k": s["k"], "dtype": dt,
                            "chosen": res["chosen"], "top5": res["ranked"][:5]})
    json.dump({"candidates": len(cands), "predictions": out}, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
