#!/usr/bin/env python3
"""Thirty-fourth round (measured on the swept sets, not kept): one share of a one-step tile's
time that stops overlapping across resident blocks, on top of r31 + r32 (both candidates
applied, then onestep_grid.patch, which adds kernel_onestep_fix (default 0 = r32) and
kernel_onestep_epi (default 1 = the epilogue as shipped)). For each grid value, every fit set
(H100 2-32, H200 2-7: the residual tables' 37) and H100 sets 33-60 is predicted through AWK_KP
and scored; then leave-one-set-out over the fit sets picks the value by sets met, then pooled
top-1. Output: onestep_grid.txt.

  python3 onestep_grid.py BUILD_ROOT [VALUES [KP_NAME]]
"""
import json, os, subprocess, sys, math
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fit_awkfam import join, read_json, score, met
M = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
B = sys.argv[1] if len(sys.argv) > 1 else '/tmp/wt34'
FS = [float(x) for x in (sys.argv[2] if len(sys.argv) > 2 else '0,0.05,0.1,0.15,0.2,0.3,0.5,1').split(',')]
KP = sys.argv[3] if len(sys.argv) > 3 else 'kernel_onestep_fix'
fit = [('h100', s) for s in range(2, 33)] + [('h200', s) for s in range(2, 8)]
ev = [('h100', s) for s in range(33, 61)]
TMP = os.environ.get('TMPDIR', '/tmp') + '/onestep_grid'
os.makedirs(TMP, exist_ok=True)
def sc(f, g, s):
    out = f'{TMP}/{KP}_{f}_{g}_{s}.json'
    if not os.path.exists(out):
        env = dict(os.environ, AWK_KP=f'{KP}={f}')
        cmd = [B + '/build/bench/kernel_awkward'] + (['--hw', 'h100-sxm'] if g == 'h100' else []) + ['--jobs', f'{M}/h200-awkward{s}/jobs', '--predict', out]
        subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    rows = read_json(f'{M}/{g}-awkward{s}/blind_kernel_16bit.json')['rows']
    return join(json.load(open(out))['selection'], rows)
res = {}
for f in FS:
    res[f] = {k: sc(f, *k) for k in fit + ev}
def summ(f, keys):
    per = [score(res[f][k]) for k in keys]
    pooled = score([x for k in keys for x in res[f][k]])
    return met(per), len(per), pooled, min(p[1] for p in per)
for f in FS:
    a = summ(f, fit); b = summ(f, ev)
    print('f %-5g fit met %d/%d geo %.4f tau %.3f | 33-60 met %d/%d geo %.4f worst %.3f tau %.3f' % (f, a[0], a[1], a[2][0], a[2][2], b[0], b[1], b[2][0], b[3], b[2][2]))
# leave-one-set-out over the fit sets: choose f by met count then pooled geomean on the others
loso = 0
for k in fit:
    others = [x for x in fit if x != k]
    best = max(FS, key=lambda f: (summ(f, others)[0], summ(f, others)[2][0]))
    loso += met([score(res[best][k])])
print('LOSO fit sets met', loso, 'of', len(fit))
