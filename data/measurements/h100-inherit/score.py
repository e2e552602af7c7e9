#!/usr/bin/env python3
"""Score the committed predictions of this folder against the H100 run (gemm.json):
median / p90 / max of |pred/meas - 1| per dtype, for the inherited-terms model (of record,
predictions.json) and the model before it (predictions_no_inherit.json).

  python3 score.py > score.txt
"""
import json
import os
import statistics

HERE = os.path.dirname(os.path.abspath(__file__))


def stats(v):
    v = sorted(abs(x) for x in v)
    if not v:
        return "n=  0"
    p90 = v[min(len(v) - 1, int(round(0.9 * (len(v) - 1))))]
    return "n=%3d median %5.1f %%  p90 %5.1f %%  max %5.1f %%" % (
        len(v), 100 * statistics.median(v), 100 * p90, 100 * v[-1])


def main():
    meas = {(r["m"], r["n"], r["k"], r["dtype"]): r["ms"]
            for r in json.load(open(os.path.join(HERE, "gemm.json")))["rows"] if r.get("ms")}
    for name in ("predictions.json", "predictions_no_inherit.json"):
        pred = json.load(open(os.path.join(HERE, name)))["gemm"]
        by, allv = {}, []
        for p in pred:
            k = (p["m"], p["n"], p["k"], p["dtype"])
            if k not in meas:
                continue
            e = p["pred_ms"] / meas[k] - 1
            by.setdefault(p["dtype"], []).append(e)
            cls = "aligned8" if p["n"] % 8 == 0 and p["k"] % 8 == 0 else "unaligned"
            by.setdefault(cls, []).append(e)
            allv.append(e)
        print(name)
        for key in ("bf16", "fp16", "tf32", "fp32", "fp8", "aligned8", "unaligned"):
            print("  %-9s %s" % (key, stats(by.get(key, []))))
        print("  %-9s %s" % ("all", stats(allv)))


if __name__ == "__main__":
    main()
