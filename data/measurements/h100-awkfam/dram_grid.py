#!/usr/bin/env python3
"""Twenty-seventh round's grid (README.md): kernel_dram_eff x kernel_dram_q over the swept
awkward sets (H100 2-28, H200 2-7), every measured bf16 / fp16 config priced by
`kernel_awkward --configs` under AWK_KP. Prints per grid point and GPU the pooled top-1 geomean /
worst / mean tau, the sets under 0.96 geomean and under 0.85 worst, and the per-config
|log(pred / meas)| median and p90 (all configs; and those the (1, 0) model priced DRAM-heavy,
DRAM time >= 0.5 x SM time); then the two-fold choice by set parity.

  python3 data/measurements/h100-awkfam/dram_grid.py [BUILD_DIR]   (from the repository root)
"""
import collections
import math
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "h100-gemm-time"))
from fit_awkfam import kendall  # noqa: E402
from tstat import pct  # noqa: E402

EFFS = ("1", "0.85", "0.75", "0.65")
QS = ("0", "4")
SETS = range(2, 29)


def dump(build, kp):
    """{(gpu, set, m, n, k, layout, dtype): [(config, meas, pred, sm, dram)]}"""
    out = collections.OrderedDict()
    env = dict(os.environ, AWK_KP=kp)
    for g in ("h100", "h200"):
        for s in SETS:
            d = f"data/measurements/{g}-awkward{s}"
            if not (os.path.exists(f"{d}/blind_kernel_16bit.json") or os.path.exists(f"{d}/blind_kernel_16bit.json.gz")):
                continue
            cmd = [f"{build}/bench/kernel_awkward"] + (["--hw", "h100-sxm"] if g == "h100" else [])
            txt = subprocess.run(cmd + ["--blind-dir", d, "--configs"], env=env, text=True,
                                 capture_output=True, check=True).stdout
            key = None
            for line in txt.splitlines():
                t = line.split()
                if line.startswith("shape "):
                    key = (g, s) + tuple(t[1:6]) if t[5] in ("bf16", "fp16") else None
                elif key and line.startswith("  ") and " sm " in line:
                    kv = {t[i]: float(t[i + 1]) for i in range(5, len(t) - 1)
                          if t[i] in ("meas", "pred", "sm", "dram")}
                    cfg = line.split(" eff ")[0].strip()  # "BMxBNxBK wW sS kK"
                    out.setdefault(key, []).append((cfg, kv["meas"], kv["pred"], kv["sm"],
                                                    kv["dram"]))
    return out


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    grid = {(e, q): dump(build, f"kernel_dram_eff={e},kernel_dram_q={q}") for e in EFFS for q in QS}
    base = grid[("1", "0")]
    heavy = {(k, c[0]) for k, cf in base.items() for c in cf if c[4] >= 0.5 * c[3]}
    effs = {}
    for g, sh in grid.items():
        effs[g] = {k: math.log(min(c[1] for c in cf) / min(cf, key=lambda c: c[2])[1])
                   for k, cf in sh.items()}
        for gpu in ("h100", "h200"):
            ks = [k for k in sh if k[0] == gpu]
            le = [effs[g][k] for k in ks]
            tau = sum(kendall([c[2] for c in sh[k]], [c[1] for c in sh[k]]) for k in ks) / len(ks)
            per = collections.defaultdict(list)
            for k in ks:
                per[k[1]].append(effs[g][k])
            e_all = [abs(math.log(c[2] / c[1])) for k in ks for c in sh[k]]
            e_hv = [abs(math.log(c[2] / c[1])) for k in ks for c in sh[k] if (k, c[0]) in heavy]
            print("eff %-4s q %s %s n %4d top1 %.4f worst %.3f tau %.4f | sets geo<0.96 %d "
                  "worst<0.85 %d | config |log err| all %.3f / %.3f, DRAM-heavy (%d) %.3f / %.3f"
                  % (g[0], g[1], gpu, len(ks), math.exp(sum(le) / len(le)), math.exp(min(le)), tau,
                     sum(sum(v) / len(v) < math.log(0.96) for v in per.values()),
                     sum(min(v) < math.log(0.85) for v in per.values()),
                     pct(e_all, 0.5), pct(e_all, 0.9), len(e_hv), pct(e_hv, 0.5), pct(e_hv, 0.9)))

    def geo(g, sel):
        v = [x for k, x in effs[g].items() if sel(k)]
        return math.exp(sum(v) / len(v)), math.exp(min(v))

    for name, par in (("odd", 1), ("even", 0)):
        fit = {g: geo(g, lambda k: k[1] % 2 == par) for g in grid}
        pick = max(grid, key=lambda g: (fit[g][0], g == ("1", "0")))
        ho, hb = geo(pick, lambda k: k[1] % 2 != par), geo(("1", "0"), lambda k: k[1] % 2 != par)
        print("two-fold: fitted on %s sets -> eff %s q %s (top1 %.4f); held-out top1 %.4f / "
              "worst %.3f against (1, 0) %.4f / %.3f" % ((name,) + pick + (fit[pick][0],) + ho + hb))


if __name__ == "__main__":
    main()
