#!/usr/bin/env python3
"""The model's register estimate against Triton's compiled counts (twelfth round, issue 25).

Reads `build/bench/kernel_select --compile-regs` on stdin: one `ccregs` line per config of
data/measurements/h200-compile/compile_info.json that compiled and that the model deems feasible
(dtype, class, tile, warps, stages, the model's estimate and blocks per SM, the compiler's
n_regs, spill bytes and shared bytes). Prints, for configs the compiler did not spill:

- per dtype and class: compiled / estimate (geo-mean, min, max);
- per dtype: the geo-mean ratio (the kernel_reg_occ scale) and a least-squares line;
- bf16: a structural fit compiled = c0 + c1 acc + c2 vec + c3 sc (accumulator registers, the
  64-bit pointers of cp.async copies, elements of element-by-element operand tiles per thread);
- per dtype: how many configs get other blocks per SM (from registers and shared memory, as
  costmodel/kernel.c counts them) than the compiler's count gives, under each estimate.

Usage: build/bench/kernel_select --compile-regs | python3 bench/compile_regs_fit.py
"""
import math
import sys

SMEM_PER_SM, REGS_PER_SM = 233472, 65536  # data/hardware/h200.json


def parse(lines):
    rows = []
    for line in lines:
        t = line.split()
        if not t or t[0] != "ccregs":
            continue
        rows.append({"dt": t[1], "cls": t[2], "bm": int(t[4]), "bn": int(t[5]), "bk": int(t[6]),
                     "w": int(t[7]), "s": int(t[8]), "model": int(t[10]), "occ": int(t[12]),
                     "comp": int(t[14]), "spill": int(t[16]), "shared": float(t[18])})
    return rows


def lstsq(x, y):
    """Least squares by the normal equations (Gauss-Jordan); x: rows of features."""
    k = len(x[0])
    a = [[sum(r[i] * r[j] for r in x) for j in range(k)] + [sum(r[i] * v for r, v in zip(x, y))]
         for i in range(k)]
    for i in range(k):
        p = a[i][i]
        a[i] = [v / p for v in a[i]]
        for m in range(k):
            if m != i:
                f = a[m][i]
                a[m] = [u - f * v for u, v in zip(a[m], a[i])]
    return [a[i][k] for i in range(k)]


def feats(r):
    """bf16 (2-byte, 8 elements per 16-byte copy): 1, acc, vec, sc per thread."""
    thr = r["w"] * 32
    ea, eb = r["bm"] * r["bk"] / thr, r["bk"] * r["bn"] / thr
    a_sc = r["cls"] in ("k_unaligned", "both_unaligned")
    b_sc = r["cls"] in ("n_unaligned", "both_unaligned")
    vec = (0 if a_sc else 2 * ea / 8) + (0 if b_sc else 2 * eb / 8)
    sc = (ea if a_sc else 0) + (eb if b_sc else 0)
    return [1.0, r["bm"] * r["bn"] / thr, vec, sc]


def blocks(r, regs):
    thr = r["w"] * 32
    alloc = math.ceil(min(regs, 255) / 8) * 8
    return min(REGS_PER_SM // (alloc * thr), int(SMEM_PER_SM // (r["shared"] + 1024)),
               64 // r["w"], 32)


def geo(v):
    return math.exp(sum(math.log(x) for x in v) / len(v))


def main():
    rows = parse(sys.stdin)
    ok = [r for r in rows if r["comp"] < 255]  # 255: at the cap (spilling)
    print("compiled / estimate, configs compiled without spilling")
    for dt in ("bf16", "tf32", "fp8"):
        for cls in ("aligned", "k_unaligned", "n_unaligned", "both_unaligned"):
            q = [r["comp"] / r["model"] for r in ok if r["dt"] == dt and r["cls"] == cls]
            if q:
                print(f"  {dt:5s} {cls:15s} {len(q):4d}  geo {geo(q):.3f}  min {min(q):.2f}  "
                      f"max {max(q):.2f}")
    scale = {}
    for dt in ("bf16", "tf32", "fp8"):
        d = [r for r in ok if r["dt"] == dt]
        scale[dt] = geo([r["comp"] / r["model"] for r in d])
        c0, c1 = lstsq([[1.0, r["model"]] for r in d], [r["comp"] for r in d])
        rms = math.sqrt(sum((scale[dt] * r["model"] - r["comp"]) ** 2 for r in d) / len(d))
        print(f"{dt}: {len(d)} configs, scale (geo-mean) {scale[dt]:.3f} (rms {rms:.1f} registers);"
              f" line {c0:.1f} + {c1:.3f} x estimate")
    d = [r for r in ok if r["dt"] == "bf16"]
    c = lstsq([feats(r) for r in d], [r["comp"] for r in d])
    pred = [sum(a * b for a, b in zip(feats(r), c)) for r in d]
    rms = math.sqrt(sum((p - r["comp"]) ** 2 for p, r in zip(pred, d)) / len(d))
    print(f"bf16 structural: {c[0]:.2f} + {c[1]:.3f} acc + {c[2]:.3f} vec + {c[3]:.3f} sc "
          f"(rms {rms:.1f} registers)")
    for dt in ("bf16", "tf32", "fp8"):
        d = [r for r in rows if r["dt"] == dt]
        est = sum(r["occ"] != blocks(r, r["comp"]) for r in d)
        sc = sum(blocks(r, scale[dt] * r["model"]) != blocks(r, r["comp"]) for r in d)
        line = f"{dt}: blocks per SM unlike the compiler's count: estimate {est}, scaled {sc}"
        if dt == "bf16":
            st = sum(blocks(r, sum(a * b for a, b in zip(feats(r), c))) != blocks(r, r["comp"])
                     for r in d)
            line += f", structural {st}"
        print(f"{line} (of {len(d)} compiled)")


if __name__ == "__main__":
    main()
