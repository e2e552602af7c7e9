#!/bin/bash
# ENV="KX_G=0.5 KX_NT=1" bash data/measurements/h100-awkfam/sc_overlap_grid.sh LABEL
# (from the repository root, with sc_overlap_g.patch applied and build/bench/kernel_awkward
# rebuilt): H100 sets 2-44, bf16 + fp16 selection scored by fit_awkfam.py's score / met,
# fit 2-32 and check 33-44.
lab=$1; tmp=$(mktemp)
for s in $(seq 2 44); do D=data/measurements/h100-awkward$s; [ -f $D/blind_kernel_16bit.json ] || continue
  env $ENV build/bench/kernel_awkward --hw h100-sxm --blind-dir $D --configs 2>/dev/null | awk -v G=h100 -v S=$s '/^shape/{sh=$2" "$3" "$4" "$5" "$6; next} /^  .* sm /{print G, S, sh, $0}'
done > $tmp
python3 - $tmp "$lab" <<'PY'
import collections
import sys
sys.path.insert(0, "data/measurements/h100-awkfam")
from fit_awkfam import met, score

shapes = collections.OrderedDict()
for line in open(sys.argv[1]):
    t = line.split()
    if t[6] not in ("bf16", "fp16"):
        continue
    kv = {}
    toks = t[7:]
    for i in range(5, len(toks) - 1):
        if toks[i] in ("meas", "pred"):
            kv[toks[i]] = float(toks[i + 1])
    shapes.setdefault(tuple(t[:7]), []).append((None, kv["pred"], kv["meas"]))


def summary(lo, hi):
    per = collections.defaultdict(list)
    for k, cf in shapes.items():
        if lo <= int(k[1]) <= hi:
            per[int(k[1])].append((k, cf))
    sets = [score(p) for p in per.values()]
    pooled = score([x for p in per.values() for x in p])
    return "geo %.4f met %d/%d worst<.85 %d" % (pooled[0], met(sets), len(sets), sum(sc[1] < 0.85 for sc in sets))


print("%-28s fit 2-32: %s | check 33-44: %s" % (sys.argv[2], summary(2, 32), summary(33, 44)))
PY
rm -f $tmp
