import sys,collections,itertools
import os
HERE=os.path.dirname(os.path.abspath(__file__))
WORK=os.environ.get('STUDY_DIR','/tmp')
sys.path.insert(0,HERE)
f=sys.argv[1]
L=open(f).read().split('\n'); I=L[0].split()
R,G,N=map(int,I[1:4]); fixed=float(I[4]); cap=float(I[5]); hcap=float(I[6])
od={}; P={}
for l in L[1:]:
    w=l.split()
    if not w: continue
    if w[0]=='O': od[(int(w[1]),int(w[2]))]=dict(kind=int(w[3]),k=int(w[4]),ms=float(w[5]),b=float(w[6]),h=float(w[7]))
    if w[0]=='P': P[int(w[1])]=(int(w[2]),int(w[3]),int(w[4]),list(map(int,w[5:])))
ms=[fixed]*R; by=[0.0]*R; hb=[0.0]*N
pieces=[] # (t, rank, ms, bytes) movable items
for t,(o,rk,nd,cw) in P.items():
    e=od[(t,o)]
    if e['kind']==0:
        for r in range(R): ms[r]+=e['ms']; by[r]+=e['b']
        for n in range(N): hb[n]+=e['h']*G
    elif e['kind']==2:
        for r in range(nd*G,nd*G+G): ms[r]+=e['ms']; by[r]+=e['b']; hb[nd]+=e['h']
    else:
        for r in (cw if cw else [rk]): ms[r]+=e['ms']; by[r]+=e['b']; hb[r//G]+=e['h']; pieces.append([t,r,e['ms'],e['b'],e['h']])
M=max(ms); print('max %.4f'%M, 'max bytes/cap %.3f'%(max(by)/cap))
top=sorted(range(R),key=lambda r:-ms[r])[:12]
print('top', [(r,round(ms[r],3)) for r in top])
# single moves and swaps off the top rank
r0=top[0]
best=None
for p in pieces:
    if p[1]!=r0: continue
    for r in range(R):
        if r==r0: continue
        if r//G!=r0//G and hb[r//G]+p[4]>hcap: continue
        if ms[r]+p[2] < M-1e-9 and by[r]+p[3]<=cap: print('move',p[:3],'->',r,ms[r]+p[2])
    for q in pieces:
        if q[1]==r0 or q[0]==p[0] and False: continue
        r=q[1]; d=p[2]-q[2]
        if d<=0: continue
        if ms[r]+d<M-1e-9 and by[r]+p[3]-q[3]<=cap and by[r0]-p[3]+q[3]<=cap:
            nm=max(ms[r]+d, ms[r0]-d)
            if best is None or nm<best[0]: best=(nm,p[:3],q[:3])
print('best swap',best)
