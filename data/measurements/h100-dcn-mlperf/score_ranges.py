#!/usr/bin/env python3
"""Scores committed host_sensitivity ranges (blind6_ranges*.json) on a measured runner result:
score_ranges.py RANGES.json MEASURED.json. Each step: inside its step_ms_range or not;
the claim is about host-bound steps (the range covers the host's speed only). host_range.py
scores with score() too."""
import json
import sys


def score(preds, measured, title):
    """preds: [{id, step_ms, host_bound, step_ms_range}], measured: {id: step_ms}."""
    n = inside = hb = hb_in = 0
    for p in preds:
        if p["id"] not in measured:
            print("%-46s not measured" % p["id"])
            continue
        m = measured[p["id"]]
        lo, hi = p["step_ms_range"]
        ok = lo <= m <= hi
        n += 1
        inside += ok
        hb += p["host_bound"]
        hb_in += ok and p["host_bound"]
        print("%-46s measured %7.2f  predicted %7.2f  range %7.2f-%7.2f  %s  %s" % (
            p["id"], m, p["step_ms"], lo, hi, "host-bound" if p["host_bound"] else "gpu-bound ",
            "inside" if ok else "outside by %.1f %%" % (100 * ((lo / m - 1) if m < lo else (m / hi - 1)))))
    print("%s: inside the range %d of %d steps; host-bound %d of %d" % (title, inside, n, hb_in, hb))


def main(rng, meas):
    rows = {r["label"]: r["step_ms"] for r in json.load(open(meas))["rows"]}
    score(json.load(open(rng))["predictions"], rows, rng.split("/")[-1])


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
