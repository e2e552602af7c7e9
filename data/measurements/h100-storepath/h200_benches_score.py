#!/usr/bin/env python3
"""Eighteenth round (issue 25, candidate W): clause (4) of the ship rule (docs/kernels.md) from
the H200 benches' outputs, the shipped model's (*_base.txt, copied from ../h100-mempath/: the same
model and data) and W's with the refitted H200 calibration (*_W.txt), all run from the repository
root with no --hw:
  costmodel_accuracy: GEMM cv median / p90, all and tf32 (each no worse by more than 0.3 point);
  kernel_awkward: every `rN gemmbl unaligned` line the bench prints (no p90 worse by more than
    1 point; their median of medians no worse by more than 0.3 point);
  published_gemm: every per-accelerator fit-only figure and the fit-only ratio median (no worse by
    more than 0.3 point), the fit-only worst ratio (no worse).
Usage: h200_benches_score.py   (from this folder or anywhere)"""
import json
import os
import re
import statistics

HERE = os.path.dirname(os.path.abspath(__file__))


def read(name, tag):
    return open(os.path.join(HERE, "h200_%s_%s.txt" % (name, tag))).read()


def js(text, bench):
    for line in text.splitlines():
        if line.startswith('{"bench":"%s"' % bench):
            return json.loads(line)
    raise SystemExit("no JSON line for " + bench)


ok = True
print("costmodel_accuracy, GEMM cv median / p90 % (base -> W):")
cb, cw = (js(read("costmodel_accuracy", t), "costmodel_accuracy") for t in ("base", "W"))
for dt in ("all", "tf32"):
    b = next(c["cv"] for c in cb["classes"] if c["class"] == "gemm" and c["dtype"] == dt)
    w = next(c["cv"] for c in cw["classes"] if c["class"] == "gemm" and c["dtype"] == dt)
    d = [100 * (w[i] - b[i]) for i in (0, 1)]
    good = max(d) <= 0.3 + 1e-9
    ok &= good
    print("  %-4s %.2f / %.2f -> %.2f / %.2f  (%+.2f / %+.2f points) %s" % (
        dt, 100 * b[0], 100 * b[1], 100 * w[0], 100 * w[1], d[0], d[1], "ok" if good else "WORSE"))

LINE = re.compile(r"^(r\d+) gemmbl unaligned\s+(\d+)\s+median\s+([\d.]+)%\s+p90\s+([\d.]+)%", re.M)
kb, kw = (LINE.findall(read("kernel_awkward", t)) for t in ("base", "W"))
print("kernel_awkward, gemmbl unaligned lines, median / p90 % (base -> W):")
for b, w in zip(kb, kw):
    dp = float(w[3]) - float(b[3])
    ok &= dp <= 1 + 1e-9
    print("  %-3s (%s rows) %s / %s -> %s / %s  p90 %+.1f" % (b[0], b[1], b[2], b[3], w[2], w[3], dp))
mb, mw = (statistics.median(float(x[2]) for x in k) for k in (kb, kw))
ok &= mw - mb <= 0.3 + 1e-9
print("  median of medians %.2f -> %.2f (%+.2f points)" % (mb, mw, mw - mb))

pb, pw = (js(read("published_gemm", t), "published_gemm") for t in ("base", "W"))
print("published_gemm, fit-only figures % (base -> W):")
for k in sorted(pb):
    if not (k.endswith("_fit_only") or k == "ratio_median_fit_only"):
        continue
    d = 100 * (pw[k] - pb[k])
    good = d <= (0 if k.startswith("ratio_worst") else 0.3) + 1e-9
    ok &= good
    print("  %-26s %.2f -> %.2f (%+.2f) %s" % (k, 100 * pb[k], 100 * pw[k], d, "ok" if good else "WORSE"))
print("clause 4:", "passes" if ok else "FAILS")
