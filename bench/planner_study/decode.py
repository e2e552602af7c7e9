import sys,collections
import os
HERE=os.path.dirname(os.path.abspath(__file__))
WORK=os.environ.get('STUDY_DIR','/tmp')
sys.path.insert(0,HERE)
import naf
from af import load
f,Lt,a,b,delta,outf=sys.argv[1],float(sys.argv[2]),float(sys.argv[3]),float(sys.argv[4]),float(sys.argv[5]),sys.argv[6]
R,G,N,fixed,mx,opts,plan=load(f)
naf.build(os.path.join(WORK,'dec.lp'),R,G,N,fixed,opts,Lt,a,b,delta,binx=True,inner=bool(os.environ.get('NAF_INNER')))
lumps,items,K=naf.LAST
val={}
for l in open(outf):
    w=l.split()
    if w and w[0]=='x': val[w[1]]=round(float(w[2]))
if not val: print('no solution'); sys.exit()
# raw dump data for real evaluation
L=open(f).read().split('\n'); I=L[0].split(); cap=float(I[5]); hcap=float(I[6])
od={}
for l in L[1:]:
    w=l.split()
    if w and w[0]=='O': od[(int(w[1]),int(w[2]))]=dict(kind=int(w[3]),k=int(w[4]),ms=float(w[5]),b=float(w[6]),h=float(w[7]))
chosen={}
for v,x in val.items():
    if v.startswith('x_') and x==1:
        _,t,o=v.split('_'); chosen[int(t)]=int(o)
print('tables chosen',len(chosen))
# lump paths: arcs p_i_j
larc=collections.defaultdict(int)
iarc=collections.defaultdict(int)
m=collections.defaultdict(int); e=collections.defaultdict(int)
for v,x in val.items():
    if x<=0: continue
    if v.startswith('p_'): _,i,j=v.split('_'); larc[(int(j),int(i))]+=x
    elif v.startswith('q_'): _,i,j=v.split('_'); iarc[(int(j),int(i))]+=x
    elif v.startswith('m_'): m[int(v.split('_')[1])]+=x
# tables needing lumps / items
needl=collections.defaultdict(list)  # size-type index -> tables
for i,(v,cnt,sz) in enumerate(lumps):
    _,t,o=v.split('_')
    if chosen.get(int(t))==int(o): needl[i].append(int(t))
needi={}
for i,(v,cnt,sz) in enumerate(items):
    _,t,o=v.split('_')
    if chosen.get(int(t))==int(o): needi[i]=[int(t)]*cnt
# decompose lump flow into N node paths from vertex 0
nodes=[]
for nd in range(N):
    j=0; path=[]
    while True:
        nxt=[(jj,i) for (jj,i) in larc if jj==j and larc[(jj,i)]>0]
        if m[j]>0 and (not nxt):
            m[j]-=1; break
        if not nxt:
            print('lump decomposition stuck'); break
        if m[j]>0 and len(path)>0 and False: pass
        jj,i=nxt[0]; larc[(jj,i)]-=1; path.append(i); j=j+lumps[i][2]
    nodes.append((j,path))
print('node levels',[n[0] for n in nodes])
# item flow decomposition: start G paths per node at its level
ranks=[]
for nd,(W,path) in enumerate(nodes):
    for g in range(G):
        j=W; ip=[]
        while True:
            nxt=[(jj,i) for (jj,i) in iarc if jj==j and iarc[(jj,i)]>0]
            if not nxt: break
            jj,i=max(nxt,key=lambda z:items[z[1]][2]); iarc[(jj,i)]-=1; ip.append(i); j+=items[i][2]
        ranks.append((nd,ip))
# assign tables
ms=[fixed]*R; by=[0.0]*R; hb=[0.0]*N; assign={}
for t,o in chosen.items():
    e=od[(t,o)]
    if e['kind']==0:
        for r in range(R): ms[r]+=e['ms']; by[r]+=e['b']
        for n in range(N): hb[n]+=e['h']*G
for nd,(W,path) in enumerate(nodes):
    for i in path:
        if needl[i]:
            t=needl[i].pop(); e=od[(t,chosen[t])]
            for r in range(nd*G,nd*G+G): ms[r]+=e['ms']; by[r]+=e['b']
            hb[nd]+=e['h']*G; assign[t]=('node',nd)
for r,(nd,ip) in enumerate(ranks):
    for i in ip:
        if i in needi and needi[i]:
            t=needi[i].pop(); e=od[(t,chosen[t])]
            ms[r]+=e['ms']; by[r]+=e['b']; hb[nd]+=e['h']; assign.setdefault(t,[]).append(r) if not isinstance(assign.get(t),tuple) else None
left=[t for t in chosen if od[(t,chosen[t])]['kind']!=0 and t not in assign]
print('unplaced',left, 'partial', [ (t,len(v)) for t,v in assign.items() if isinstance(v,list) and len(v)!=od[(t,chosen[t])]['k']])
print('real max %.4f  HBM max/cap %.3f  host max/cap %.3f'%(max(ms),max(by)/cap,max(hb)/hcap))
print(sorted(round(x,3) for x in ms)[-10:])
