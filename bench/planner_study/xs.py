# excess-driven local search on a dumped plan: items moves/swaps (1-1, 2-1),
# node lump moves/swaps, all ranks; minimise sum of load excess over target T.
import sys,collections,itertools
import os
HERE=os.path.dirname(os.path.abspath(__file__))
WORK=os.environ.get('STUDY_DIR','/tmp')
f=sys.argv[1]; T=float(sys.argv[2])
L=open(f).read().split('\n'); I=L[0].split()
R,G,N=map(int,I[1:4]); fixed=float(I[4]); cap=float(I[5]); hcap=float(I[6])
od={}; P={}
for l in L[1:]:
    w=l.split()
    if not w: continue
    if w[0]=='O': od[(int(w[1]),int(w[2]))]=dict(kind=int(w[3]),k=int(w[4]),ms=float(w[5]),b=float(w[6]),h=float(w[7]))
    if w[0]=='P': P[int(w[1])]=(int(w[2]),int(w[3]),int(w[4]),list(map(int,w[5:])))
ms=[fixed]*R; by=[0.0]*R; hb=[0.0]*N
items=[]; lumps=[]
for t,(o,rk,nd,cw) in P.items():
    e=od[(t,o)]
    if e['kind']==0:
        for r in range(R): ms[r]+=e['ms']; by[r]+=e['b']
        for n in range(N): hb[n]+=e['h']*G
    elif e['kind']==2:
        for r in range(nd*G,nd*G+G): ms[r]+=e['ms']; by[r]+=e['b']
        hb[nd]+=e['h']*G
        lumps.append([t,nd,e['ms'],e['b'],e['h']*G])
    else:
        for r in (cw if cw else [rk]):
            ms[r]+=e['ms']; by[r]+=e['b']; hb[r//G]+=e['h']; items.append([t,r,e['ms'],e['b'],e['h']])
exec(open(os.path.join(HERE,'xs_core.py')).read())
