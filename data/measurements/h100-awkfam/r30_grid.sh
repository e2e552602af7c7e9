#!/bin/bash
# ENV="KX_SKF=0.1 KX_SKFORM=1" bash data/measurements/h100-awkfam/r30_grid.sh LABEL  (from the repository root,
# r30_explore.patch applied, build/bench/kernel_awkward rebuilt; KEEP=FILE keeps the per-config rows for r30_loss.py):
# bf16 + fp16 selection on H100 sets 2-32 (fit), H200 sets 2-7 (fit) and H100 sets 33-48 (check)
lab=$1; tmp=$(mktemp)
{ for s in $(seq 2 48); do D=data/measurements/h100-awkward$s; [ -f $D/blind_kernel_16bit.json ] || continue
  env $ENV build/bench/kernel_awkward --hw h100-sxm --blind-dir $D --configs 2>/dev/null | awk -v S=$s '/^shape/{sh=$2" "$3" "$4" "$5" "$6; next} /^  .* sm /{print "h100", S, sh, $0}'
done
for s in $(seq 2 7); do D=data/measurements/h200-awkward$s; [ -f $D/blind_kernel_16bit.json ] || continue
  env $ENV build/bench/kernel_awkward --blind-dir $D --configs 2>/dev/null | awk -v S=$((s+100)) '/^shape/{sh=$2" "$3" "$4" "$5" "$6; next} /^  .* sm /{print "h200", S, sh, $0}'
done; } > $tmp
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
    return "%.4f %d/%d w%d" % (pooled[0], met(sets), len(sets), sum(sc[1] < 0.85 for sc in sets))
print("%-26s fit100 2-32: %s | h200 2-7: %s | check 33-48: %s" % (sys.argv[2], summary(2, 32), summary(102, 107), summary(33, 48)))
PY
[ -n "$KEEP" ] && cp $tmp $KEEP; rm -f $tmp
