#!/bin/bash
# ENV="KX_G=0.5 KX_NT=1" bash data/measurements/h100-awkfam/sc_overlap_grid.sh LABEL
# (from the repository root, with sc_overlap_g.patch applied and build/bench/kernel_awkward
# rebuilt): H100 sets 2-44, bf16 + fp16 selection scored by fit_awkfam.py's score / met,
# fit 2-32 and check 33-44.
# HI=48 H200=1 (r30_explore.txt, with r30_explore.patch): check 33-HI, and H200 sets 2-7 scored
# beside the fit sets; KEEP=FILE keeps the per-config rows (r30_loss.py reads them).
lab=$1; tmp=$(mktemp); hi=${HI:-44}
{ for s in $(seq 2 $hi); do D=data/measurements/h100-awkward$s; [ -f $D/blind_kernel_16bit.json ] || [ -f $D/blind_kernel_16bit.json.gz ] || continue
  env $ENV build/bench/kernel_awkward --hw h100-sxm --blind-dir $D --configs 2>/dev/null | awk -v G=h100 -v S=$s '/^shape/{sh=$2" "$3" "$4" "$5" "$6; next} /^  .* sm /{print G, S, sh, $0}'
done
[ -n "${H200:-}" ] && for s in $(seq 2 7); do D=data/measurements/h200-awkward$s
  env $ENV build/bench/kernel_awkward --blind-dir $D --configs 2>/dev/null | awk -v G=h200 -v S=$((s + 100)) '/^shape/{sh=$2" "$3" "$4" "$5" "$6; next} /^  .* sm /{print G, S, sh, $0}'
done; } > $tmp
python3 - $tmp "$lab" $hi <<'PY'
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


hi = int(sys.argv[3])
h200 = " | H200 2-7: %s" % summary(102, 107) if any(int(k[1]) > 100 for k in shapes) else ""
print("%-28s fit 2-32: %s%s | check 33-%d: %s" % (sys.argv[2], summary(2, 32), h200, hi, summary(33, hi)))
PY
[ -n "${KEEP:-}" ] && cp $tmp $KEEP; rm -f $tmp
