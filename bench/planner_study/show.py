import sys,collections
import os
HERE=os.path.dirname(os.path.abspath(__file__))
WORK=os.environ.get('STUDY_DIR','/tmp')
sys.path.insert(0,HERE)
from af import load
f=sys.argv[1]
L=open(f).read().split('\n')
R,G,N,fixed,mx,opts,plan=load(f)
P={}
for l in L:
    w=l.split()
    if w and w[0]=='P': P[int(w[1])]=(int(w[2]),int(w[3]),int(w[4]),list(map(int,w[5:])))
od={(t,e['o']):e for t in opts for e in opts[t]}
U=fixed; W=[0]*N; lumps=collections.defaultdict(list); items=collections.defaultdict(list)
for t,(o,rk,nd,cw) in P.items():
    e=od[(t,o)]
    if e['kind']==0: U+=e['ms']
    elif e['kind']==2: W[nd]+=e['ms']; lumps[nd].append((t,round(e['ms'],3)))
    else:
        rs=cw if cw else [rk]
        for r in rs: items[r].append((t,round(e['ms'],3)))
print('U incl fixed %.3f'%U)
for nd in range(N):
    loads=[U+W[nd]+sum(x[1] for x in items[r]) for r in range(nd*G,nd*G+G)]
    print('node %2d W %.3f lumps %s'%(nd,W[nd],lumps[nd]))
    for r in range(nd*G,nd*G+G): print('    r%3d %.3f %s'%(r,loads[r-nd*G],items[r]))
