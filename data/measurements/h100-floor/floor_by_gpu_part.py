import sys, statistics as st
sys.path.insert(0, "data/measurements/h100-floor")
from floor_cv import load, pct
rows = [r for r in load(sys.argv[1]) if 4 <= r["set"] <= 16 and r["how"] == sys.argv[2]]
edges = [0, .5, 1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10, 15, 20]
for lo, hi in zip(edges, edges[1:]):
    rr = [r for r in rows if lo <= r["gpu"] < hi]
    if len(rr) < 3: continue
    d = [r["meas"] - r["gpu"] for r in rr]
    q = [r["meas"] / r["pred"] for r in rr]
    print(f"gpu {lo:4.1f}-{hi:4.1f} n {len(rr):3d}  meas-gpu median {st.median(d):5.2f} p25 {pct(d,.25):5.2f} p75 {pct(d,.75):5.2f}  meas/pred {st.median(q):.3f}")
