import sys, collections, math, subprocess
import os
HERE=os.path.dirname(os.path.abspath(__file__))
WORK=os.environ.get('STUDY_DIR','/tmp')
# arc-flow (Valerio de Carvalho) relaxation: nodes dropped, uniform options cover U in [a,b]
def load(f):
    L=open(f).read().split('\n'); I=L[0].split()
    R,G,N=map(int,I[1:4]); fixed=float(I[4]); mx=float(I[9])
    opts=collections.defaultdict(list); plan={}
    for l in L[1:]:
        w=l.split()
        if not w: continue
        if w[0]=='O': opts[int(w[1])].append(dict(o=int(w[2]),kind=int(w[3]),k=int(w[4]),ms=float(w[5]),b=float(w[6])))
        if w[0]=='P': plan[int(w[1])]=int(w[2])
    return R,G,N,fixed,mx,opts,plan
def build(path,R,G,fixed,opts,Lt,a,b,delta,binx=False):
    C=Lt-a; K=int(math.floor(C/delta+1e-9))
    types=[]  # (t,o,count,units)
    lines=[]; xs={}
    unif=[]
    for t,ol in opts.items():
        keep=[]
        for e in ol:
            cnt = 0 if e['kind']==0 else (e['k'] if e['kind']==1 else G)
            if e['kind']==0:
                if e['ms']>b-fixed+1e-12: continue
            else:
                if e['ms']>C+1e-12: continue
            dom=False
            for f in ol:
                fc = 0 if f['kind']==0 else (f['k'] if f['kind']==1 else G)
                if f is not e and f['kind']==e['kind'] and fc==cnt and (f['ms']<e['ms'] or (f['ms']==e['ms'] and f['o']<e['o'])): dom=True
            if dom: continue
            keep.append((e,cnt))
        if not keep: return None
        for e,cnt in keep:
            v='x_%d_%d'%(t,e['o']); xs[(t,e['o'])]=v
            if cnt==0: unif.append((v,e['ms']))
            else: types.append((t,e['o'],cnt,int(math.floor(e['ms']/delta+1e-9))))
    # arc-flow with decreasing-size ordering
    types.sort(key=lambda z:-z[3])
    reach=[False]*(K+1); reach[0]=True
    arcs=collections.defaultdict(list) # type index -> list of start nodes
    nodes_in=collections.defaultdict(list); nodes_out=collections.defaultdict(list)
    # process distinct sizes in decreasing order
    bysize=collections.defaultdict(list)
    for i,ty in enumerate(types): bysize[ty[3]].append(i)
    for sz in sorted(bysize,reverse=True):
        idx=bysize[sz]
        if sz==0: continue
        maxc=max(types[i][2] for i in idx)*1  # copies of this size in a bin bounded by count (sum)
        tot=sum(types[i][2] for i in idx)
        newreach=reach[:]
        # allow up to tot items of this size in a bin (bounded repetition)
        cur=[j for j in range(K+1) if reach[j]]
        frontier=set(cur)
        for rep in range(tot):
            nxt=set()
            for j in frontier:
                if j+sz<=K:
                    for i in idx: arcs[i].append(j)
                    nxt.add(j+sz)
            nxt-= {j for j in range(K+1) if newreach[j]} if False else set()
            for j in nxt: newreach[j]=True
            frontier=nxt
            if not frontier: break
        reach=newreach
    # dedupe arcs
    nar=0
    cols={}
    for i in arcs:
        s=sorted(set(arcs[i])); arcs[i]=s; nar+=len(s)
    with open(path,'w') as fo:
        fo.write('Minimize\n obj: B\nSubject To\n')
        # flow conservation: node 0 out = B
        out=collections.defaultdict(list); inn=collections.defaultdict(list)
        for i,st in arcs.items():
            sz=types[i][3]
            for j in st:
                v='y_%d_%d'%(i,j); out[j].append(v); inn[j+sz].append(v)
        # loss arcs: node j -> K for reachable j
        for j in range(1,K):
            if inn[j]:
                v='l_%d'%j; out[j].append(v); inn[K].append(v)
        fo.write(' src: '+' + '.join(out[0])+' - B = 0\n')
        for j in range(1,K):
            if inn[j] or out[j]:
                fo.write(' n%d: '%j+' + '.join(inn[j])+''.join(' - '+v for v in out[j])+' = 0\n')
        for i,ty in enumerate(types):
            t,o,cnt,sz=ty
            if sz==0: continue
            fo.write(' d%d: '%i+' + '.join('y_%d_%d'%(i,j) for j in arcs[i])+' - %d %s >= 0\n'%(cnt,xs[(t,o)]))
        for t in opts:
            vs=[xs[(t,e['o'])] for e in opts[t] if (t,e['o']) in xs]
            fo.write(' c%d: '%t+' + '.join(vs)+' = 1\n')
        if unif: fo.write(' ub: '+' + '.join('%.9f %s'%(ms,v) for v,ms in unif)+' <= %.9f\n'%(b-fixed))
        if binx: fo.write('Binary\n'+''.join(' %s\n'%v for v in xs.values()))
        fo.write('End\n')
    return K,len(types),nar
if __name__=='__main__':
    f=sys.argv[1]; Lt=float(sys.argv[2]); a=float(sys.argv[3]); b=float(sys.argv[4]); delta=float(sys.argv[5])
    R,G,N,fixed,mx,opts,plan=load(f)
    r=build(os.path.join(WORK,'af.lp'),R,G,fixed,opts,Lt,a,b,delta)
    print('K types arcs',r, 'R',R)
    if r: print(subprocess.run([os.environ.get('LPS',os.path.join(WORK,'lps')),os.path.join(WORK,'af.lp')],capture_output=True,text=True).stdout)
