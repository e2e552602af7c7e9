#!/usr/bin/env python3
"""Leave-one-set-out choice of one grid value from per-set selection summaries.

Input lines (splitk_us_grid.sh): GRIDVALUE SET blind bf16+fp16 N top1 G worst W tau T ...
Each fold picks the value with the most other sets meeting all three targets (top-1 >= 0.96,
worst >= 0.85, tau >= 0.75), ties broken by their pooled top-1 + 0.5 tau; the left-out set is
scored at that value, and compared with the first grid value (the shipped model).

  python3 loso_sets.py splitk_us_grid.txt
"""
import collections
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fit_awkfam import met  # noqa: E402


def pooled(rows):
    """(sets meeting all three, shape-weighted top-1 geomean, mean tau) of (g, w, tau, n) rows"""
    n = sum(r[3] for r in rows)
    return (met([r[:3] for r in rows]), math.exp(sum(math.log(r[0]) * r[3] for r in rows) / n),
            sum(r[2] * r[3] for r in rows) / n)


def main():
    res = collections.defaultdict(dict)
    with open(sys.argv[1]) as f:
        for line in f:
            t = line.split()
            res[float(t[0])][t[1]] = (float(t[6]), float(t[8]), float(t[10]), int(t[4]))
    grid = sorted(res)
    names = sorted(res[grid[0]])
    for d in grid:
        ok, geo, tau = pooled(list(res[d].values()))
        print(d, 'sets meeting all three %d/%d pooled top1 %.4f tau %.4f' % (ok, len(names), geo, tau))
    chosen, left_out = [], []
    for n in names:
        def rank(d):
            ok, geo, tau = pooled([res[d][u] for u in names if u != n])
            return ok, geo + 0.5 * tau
        d = max(grid, key=rank)
        chosen.append(d)
        left_out.append((n, res[grid[0]][n], res[d][n]))
    print('chosen per fold', collections.Counter(chosen))
    base = pooled([b for _, b, _ in left_out])
    loso = pooled([c for _, _, c in left_out])
    print('left-out meeting all three: base', base[0], 'LOSO', loso[0])
    print('left-out pooled top1 %.4f -> %.4f, tau %.4f -> %.4f' % (base[1], loso[1], base[2], loso[2]))
    for n, b, c in left_out:
        if b != c:
            print(' %-8s %.3f/%.3f/%.3f -> %.3f/%.3f/%.3f' % ((n,) + b[:3] + c[:3]))


if __name__ == '__main__':
    main()
