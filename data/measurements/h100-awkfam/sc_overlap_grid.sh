#!/bin/bash
# (with sc_overlap_g.patch applied and build/bench/kernel_awkward rebuilt; from the repository root)
# ENV="KX_G=0.5 KX_NT=1" bash .dev/grid4.sh LABEL : H100 sets 2-44 selection, fit 2-32 / check 33-44
lab=$1; tmp=$(mktemp)
for s in $(seq 2 44); do D=data/measurements/h100-awkward$s; [ -f $D/blind_kernel_16bit.json ] || continue
  env $ENV build/bench/kernel_awkward --hw h100-sxm --blind-dir $D --configs 2>/dev/null | awk -v G=h100 -v S=$s '/^shape/{sh=$2" "$3" "$4" "$5" "$6; next} /^  .* sm /{print G, S, sh, $0}'
done > $tmp
python3 - $tmp "$lab" <<'PY'
import sys,math,collections
shapes=collections.OrderedDict()
for l in open(sys.argv[1]):
    t=l.split(); s=int(t[1])
    if t[6] not in('bf16','fp16'): continue
    toks=t[7:]; kv={}
    for i in range(5,len(toks)-1):
        if toks[i] in('meas','pred'): kv[toks[i]]=float(toks[i+1])
    shapes.setdefault(tuple(t[:7]),[]).append((kv['meas'],kv['pred']))
def tau(a,b):
    c=d=0
    for i in range(len(a)):
        for j in range(i+1,len(a)):
            x=(a[i]-a[j])*(b[i]-b[j]); c+=x>0; d+=x<0
    return (c-d)/max(1,c+d)
def score(lo,hi):
    ps=collections.defaultdict(list); pt=collections.defaultdict(list); effs=[]
    for k,cf in shapes.items():
        s=int(k[1])
        if not lo<=s<=hi: continue
        best=min(c[0] for c in cf); ch=min(cf,key=lambda c:c[1]); e=best/ch[0]
        effs.append(e); ps[s].append(e); pt[s].append(tau([c[0] for c in cf],[c[1] for c in cf]))
    met=sum(1 for s in ps if math.exp(sum(map(math.log,ps[s]))/len(ps[s]))>=0.96 and min(ps[s])>=0.85 and sum(pt[s])/len(pt[s])>=0.75)
    return 'geo %.4f met %d/%d worst<.85 %d'%(math.exp(sum(map(math.log,effs))/len(effs)),met,len(ps),sum(min(v)<0.85 for v in ps.values()))
print('%-28s fit 2-32: %s | check 33-44: %s'%(sys.argv[2],score(2,32),score(33,44)))
PY
rm -f $tmp
