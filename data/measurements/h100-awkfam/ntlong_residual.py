#!/usr/bin/env python3
"""After sets 29-32: a residual per config for long-K (K > 128) GEMMs whose K is not a multiple of 16,
nt only ("ntlong") or every layout ("ntlong-all"), beside the short-K table refitted on sets 4-28
("short"); leave-one-set-out over H100 sets 4-28, then fitted on all of them and scored on sets 29-32
(swept before, not blind) and the H200 sets 3-7. Measured, not built (README.md).

  python3 data/measurements/h100-awkfam/ntlong_residual.py   (from the repository root)
"""
import math, os, sys, tempfile
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fit_awkfam as F
SETS = list(range(4, 29)); CHECK = [29, 30, 31, 32]; H200 = [3, 4, 5, 6, 7]
def key_of(form, prob, c):
    if prob[2] <= 128:
        return ('s',) + c + (prob[3],)
    if form in ('ntlong', 'ntlong-all') and prob[3] == 'nt' and prob[2] % 16:
        return ('l',) + c
    if form == 'ntlong-all' and prob[2] % 16:
        return ('l', prob[3]) + c
    return None
F.key_of = key_of
def geo(sc): return math.exp(sum(math.log(a[0]) for a in sc) / len(sc))
with tempfile.TemporaryDirectory() as tmp:
    h100 = {s: F.load("h100", s, tmp) for s in SETS + CHECK}
    h200 = {s: F.load("h200", s, tmp) for s in H200}
for near in (1.2, None):
  for w in (0.5, 1.0):
    for form in ('short', 'ntlong', 'ntlong-all'):
        lo = []
        for s in SETS:
            t, _ = F.fit([p for u in SETS if u != s for p in h100[u]], form, near)
            lo.append(F.score(h100[s], t, form, w))
        t, _ = F.fit([p for s in SETS for p in h100[s]], form, near)
        ck = [F.score(h100[s], t, form, w) for s in CHECK]
        hh = [F.score(h200[s], t, form, w) for s in H200]
        print("near %s w %.1f %-10s LOSO met %2d/25 geo %.4f worst %.3f tau %.3f | 29-32 met %d geo %.4f %s | H200 met %d geo %.4f"
              % (near, w, form, F.met(lo), geo(lo), min(a[1] for a in lo), sum(a[2] for a in lo)/len(lo),
                 F.met(ck), geo(ck), ' '.join(F.fmt(x) for x in ck), F.met(hh), geo(hh)))
