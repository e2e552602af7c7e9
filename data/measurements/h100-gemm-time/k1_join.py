#!/usr/bin/env python3
"""Twenty-eighth round (issue 25): cuBLAS time of a K = 1 GEMM (an outer product: the dgrad of
a one-column input, M x N x 1 nn).

The shipped model prices every tiled GEMM as launch + sqrt(t_compute^2 + t_memory^2) + drain
(costmodel/gemm.c). At K = 1 an unaligned kernel's tile is one element-wise C store (the
compute side) of the same bytes the memory side writes, and there is no main loop for the
drain to follow. Forms tried on the K = 1 rows (M, N > 1) of the awkward cuBLAS sweeps:
  shipped     launch + sqrt(c^2 + m^2) + drain
  sqrt        launch + sqrt(c^2 + m^2)
  max+drain   launch + max(c, m) + drain
  max         launch + max(c, m)
The form is chosen on H100 sets 2-28 (least median + p90 of |pred/meas - 1|, 16-bit and tf32
together); H100 sets 29-36 (swept, not fitted) and the H200 sets 2-7 are scored after.

    CDPLAN_OFF=/tmp/build_off/cli/cdplan python3 data/measurements/h100-gemm-time/k1_join.py

(from the repository root). The forms are rebuilt from the terms (compute, memory, launch, drain)
of the kernel the shipped model picks, so CDPLAN_OFF must be a cdplan built with the round off
(cmake -S . -B /tmp/build_off -DCMAKE_C_FLAGS=-DGEMM_K1_JOIN=0, target cdplan); "built" is
build/cli/cdplan as it is (the round in: it also re-picks the kernel under the new join).
"""
import json
import math
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tstat import pct  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
MEAS = os.path.join(ROOT, "data", "measurements")


def rows_of(gpu, s):
    d = os.path.join(MEAS, f"{gpu}-awkward{s}")
    if not os.path.exists(os.path.join(d, "blind_gemm.json")):
        return []
    cmd = [os.path.join(ROOT, "build", "bench", "kernel_awkward"), "--blind-dir", d, "--verbose"]
    if gpu == "h100":
        cmd[1:1] = ["--hw", "h100-sxm"]
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT).stdout
    rows = {}
    for line in out.splitlines():
        p = line.split()
        if len(p) >= 10 and p[0] == "gemm" and p[4] == "1" and p[5] == "nn":
            m, n = int(p[2]), int(p[3])
            if m > 1 and n > 1:
                rows[(p[1], m, n)] = float(p[7])
    return [(s, dt, m, n, ms) for (dt, m, n), ms in rows.items()]


def estimate(binary, rows, hw, db):
    ops = [{"op": "gemm", "m": m, "n": n, "k": 1, "dtype": dt, "layout": "nn"} for _, dt, m, n, _ in rows]
    p = subprocess.run([binary, "estimate", "-", "--hw", hw, "--db", db],
                       input=json.dumps({"ops": ops}), capture_output=True, text=True, check=True)
    return json.loads(p.stdout)["results"]


def terms(rows, hw, db):
    off = estimate(os.environ.get("CDPLAN_OFF", os.path.join(ROOT, "build", "cli", "cdplan")), rows, hw, db)
    on = estimate(os.path.join(ROOT, "build", "cli", "cdplan"), rows, hw, db)
    return [dict(a["terms"], shipped_ms=a["ms"], built_ms=b["ms"]) for a, b in zip(off, on)]


FORMS = {
    "shipped": lambda t: t["shipped_ms"],
    "sqrt": lambda t: t["launch_ms"] + math.hypot(t["compute_ms"], t["memory_ms"]),
    "max+drain": lambda t: t["launch_ms"] + max(t["compute_ms"], t["memory_ms"]) + t["drain_ms"],
    "max": lambda t: t["launch_ms"] + max(t["compute_ms"], t["memory_ms"]),
    "built": lambda t: t["built_ms"],
}


def stats(data, form):
    e = [abs(FORMS[form](t) / ms - 1) for (_, _, _, _, ms), t in data]
    return pct(e, 0.5), pct(e, 0.9), len(e)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "k1.db")
        h100 = [r for s in range(2, 37) for r in rows_of("h100", s)]
        h200 = [r for s in range(2, 8) for r in rows_of("h200", s)]
        h100 = list(zip(h100, terms(h100, "h100-sxm", db)))
        h200 = list(zip(h200, terms(h200, "h200", db)))
    groups = [("H100 sets 2-28 (fit)", [x for x in h100 if x[0][0] <= 28]),
              ("H100 sets 29-32", [x for x in h100 if 29 <= x[0][0] <= 32]),
              ("H100 sets 33-36", [x for x in h100 if x[0][0] >= 33]),
              ("H200 sets 2-7", h200)]
    fit = groups[0][1]
    best = min((f for f in FORMS if f != "built"), key=lambda f: sum(stats(fit, f)[:2]))
    print("K = 1 nn cuBLAS rows, |pred/meas - 1| median / p90 (n); chosen on H100 sets 2-28: %s" % best)
    for name, data in groups:
        for dts, label in ((("bf16", "fp16"), "16-bit"), (("tf32",), "tf32")):
            sub = [x for x in data if x[0][1] in dts]
            if sub:
                print("  %-22s %-6s " % (name, label) +
                      "  ".join("%s %.1f / %.1f %%" % (f, 100 * stats(sub, f)[0], 100 * stats(sub, f)[1])
                                for f in FORMS) + "  (n %d)" % len(sub))


if __name__ == "__main__":
    main()
