#!/usr/bin/env python3
"""Would a per-host launch floor, measured by a probe on the host, help? Emulated over the
H100 sets without device time: each set's probe = its own aligned launch-bound rows (predicted
GPU part under 2 us, K and N multiples of 8), its floor their median (measured - GPU part);
scored: the same set's unaligned gemm_sweep rows, against the shipped 4.5 us.
Usage (repository root): probe_emul.py ROWS.txt (kernel_awkward --hw h100-sxm --gemm-rows)."""
import sys, statistics as st
sys.path.insert(0, "data/measurements/h100-floor")
from floor_cv import load, pct, errs
rows = load(sys.argv[1])
thr = 2.0
PB, PA = [], []
for s in range(2, 17):
    rr = [r for r in rows if r["set"] == s and r["how"] == "sweep"]
    if not rr: continue
    probe = [r["meas"] - r["gpu"] for r in rr if not r["un"] and r["gpu"] < thr]
    un = [r for r in rr if r["un"]]
    if len(probe) < 3:
        print(s, "probe rows", len(probe)); continue
    L = st.median(probe)
    b = errs(un, None); a = errs(un, L)
    if s >= 4: PB += b; PA += a
    print(f"set {s:2d} probe rows {len(probe):2d} floor {L:.2f}  unal {len(un)}  shipped {pct(b,.5)*100:5.1f}/{pct(b,.9)*100:5.1f}  probe {pct(a,.5)*100:5.1f}/{pct(a,.9)*100:5.1f}")
print(f"pooled 4-16 {len(PB)} shipped {pct(PB,.5)*100:.1f}/{pct(PB,.9)*100:.1f} probe {pct(PA,.5)*100:.1f}/{pct(PA,.9)*100:.1f}")
