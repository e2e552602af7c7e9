#!/usr/bin/env python3
"""Twenty-sixth round (issue 25): fit GEMM_GEMV_TN_US / GEMM_GEMV_TN_K0 on m1_tn_rows.txt.

    python3 fit_gemv_tn.py > fit_gemv_tn.txt      (run in this folder)

Each row's new price is its committed prediction plus us * log2(K / K0) for K > K0. The grid
(us 0-3 by 0.05, K0 16-512) is searched on the rows of sets 5-24 only, 16-bit and tf32 together,
for the least median + p90 of |pred/meas - 1|; sets 25-28 are scored after, never fitted.
"""
import math

from tstat import pct


def load():
    rows = []
    for line in open("m1_tn_rows.txt"):
        p = line.split()
        if len(p) == 7 and p[0].isdigit():
            rows.append((int(p[0]), p[1], int(p[2]), int(p[3]), float(p[4]), float(p[5])))
    return rows


def score(rows, us, k0, dtypes):
    e = [abs((pr + (us * math.log2(k / k0) * 1e-3 if k > k0 else 0)) / m - 1)
         for _, dt, _, k, m, pr in rows if dt in dtypes]
    return pct(e, 0.5), pct(e, 0.9), len(e)


def main():
    rows = load()
    fit = [r for r in rows if r[0] <= 24]
    chk = [r for r in rows if r[0] >= 25]
    both = ("bf16", "fp16", "tf32")
    grid = [(score(fit, us, k0, both), us, k0) for us in [x * 0.05 for x in range(61)]
            for k0 in (16, 32, 48, 64, 96, 128, 160, 192, 256, 320, 384, 512)]
    grid.sort(key=lambda g: g[0][0] + g[0][1])
    print("grid on sets 5-24 (16-bit + tf32), best five by median + p90:")
    for (m, p, n), us, k0 in grid[:5]:
        print(f"  us {us:.2f} K0 {k0:4d}  fit {100 * m:.1f} / {100 * p:.1f} % ({n} rows)")
    _, us, k0 = grid[0]
    print(f"chosen: {us:.2f} us per doubling of K past {k0}")
    for name, d in (("16-bit", ("bf16", "fp16")), ("tf32", ("tf32",))):
        b, a = score(chk, 0, k0, d), score(chk, us, k0, d)
        print(f"sets 25-28 {name:6s} ({a[2]} rows): {100 * b[0]:.1f} / {100 * b[1]:.1f} -> "
              f"{100 * a[0]:.1f} / {100 * a[1]:.1f} %")


if __name__ == "__main__":
    main()
