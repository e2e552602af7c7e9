# build a real plan from a chosen option set (x from an naf.py MILP run, LPS_X output),
# then excess local search to target T; report real max, HBM and host checks.
import sys,collections,itertools,random
import os
HERE=os.path.dirname(os.path.abspath(__file__))
WORK=os.environ.get('STUDY_DIR','/tmp')
f,xout,T=sys.argv[1],sys.argv[2],float(sys.argv[3])
seed=int(sys.argv[4]) if len(sys.argv)>4 else 0
L=open(f).read().split('\n'); I=L[0].split()
R,G,N=map(int,I[1:4]); fixed=float(I[4]); cap=float(I[5]); hcap=float(I[6])
od={}
for l in L[1:]:
    w=l.split()
    if w and w[0]=='O': od[(int(w[1]),int(w[2]))]=dict(kind=int(w[3]),k=int(w[4]),ms=float(w[5]),b=float(w[6]),h=float(w[7]))
chosen={}
for l in open(xout):
    w=l.split()
    if w and w[0]=='x' and w[1].startswith('x_') and float(w[2])>0.5:
        _,t,o=w[1].split('_'); chosen[int(t)]=int(o)
ms=[fixed]*R; by=[0.0]*R; hb=[0.0]*N
items=[]; lumps=[]
for t,o in chosen.items():
    e=od[(t,o)]
    if e['kind']==0:
        for r in range(R): ms[r]+=e['ms']; by[r]+=e['b']
        for n in range(N): hb[n]+=e['h']*G
    elif e['kind']==2: lumps.append([t,-1,e['ms'],e['b'],e['h']*G])
    else:
        for k in range(e['k']): items.append([t,-1,e['ms'],e['b'],e['h']])
print('U %.4f lumps %d items %d'%(ms[0],len(lumps),len(items)))
rng=random.Random(seed)
# lumps: best fit decreasing on node level (W) under T
lumps.sort(key=lambda z:-z[2])
W=[0.0]*N
for l in lumps:
    best=None
    for n in range(N):
        if ms[n*G]+l[2]<=T+1e-9 and all(by[r]+l[3]<=cap for r in range(n*G,n*G+G)) and hb[n]+l[4]<=hcap:
            if best is None or ms[n*G]>ms[best*G]: best=n
    if best is None: best=min(range(N),key=lambda n:ms[n*G])
    l[1]=best
    for r in range(best*G,best*G+G): ms[r]+=l[2]; by[r]+=l[3]
    hb[best]+=l[4]
items.sort(key=lambda z:-z[2])
for p in items:
    best=None
    for r in range(R):
        if ms[r]+p[2]<=T+1e-9 and by[r]+p[3]<=cap and hb[r//G]+p[4]<=hcap:
            if best is None or ms[r]>ms[best]: best=r
    if best is None: best=min(range(R),key=lambda r:ms[r])
    p[1]=best; ms[best]+=p[2]; by[best]+=p[3]; hb[best//G]+=p[4]
print('constructed max %.4f'%max(ms))
exec(open(os.path.join(HERE,'xs_core.py')).read())
