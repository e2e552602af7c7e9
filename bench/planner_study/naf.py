import sys, collections, math, subprocess
import os
HERE=os.path.dirname(os.path.abspath(__file__))
WORK=os.environ.get('STUDY_DIR','/tmp')
sys.path.insert(0,HERE)
from af import load
# node-aware arc-flow relaxation: lumps (table-row-wise) packed per node in a
# lump graph; each node ending at level W supplies G rank bins starting at W in
# the item graph. Uniform options: U in [a,b]. Items/lumps sizes floored to delta.
def arcs_for(types,K,start_nodes):
    # types: list of (idx,count,units); decreasing-size ordering, bounded repetition
    reach=set(start_nodes); arcs=collections.defaultdict(set)
    bysize=collections.defaultdict(list)
    for i,(ti,cnt,sz) in enumerate(types): bysize[sz].append(i)
    for sz in sorted(bysize,reverse=True):
        if sz==0: continue
        idx=bysize[sz]; tot=sum(types[i][1] for i in idx)
        frontier=set(reach); new=set()
        for rep in range(tot):
            nxt=set()
            for j in frontier:
                if j+sz<=K:
                    for i in idx: arcs[i].add(j)
                    nxt.add(j+sz)
            new|=nxt; frontier=nxt
            if not frontier: break
        reach|=new
    return arcs,reach
def build(path,R,G,N,fixed,opts,Lt,a,b,delta,binx=False,inner=False):
    # inner: pieces rounded up and capacity L - b, so every integral point is a plan
    # (the loads of its ranks, the uniform work at most b, are at most L; memory not seen)
    C=Lt-(b if inner else a); K=int(math.floor(C/delta+1e-9))
    rnd=(lambda z:int(math.ceil(z/delta-1e-9))) if inner else (lambda z:int(math.floor(z/delta+1e-9)))
    xs={}; unif=[]; items=[]; lumps=[]; avgc=[]
    for t,ol in opts.items():
        keep=[]
        for e in ol:
            cnt = 0 if e['kind']==0 else (e['k'] if e['kind']==1 else G)
            if e['kind']==0:
                if e['ms']>b-fixed+1e-12: continue
            elif e['ms']>C+1e-12: continue
            dom=any(f is not e and f['kind']==e['kind'] and (0 if f['kind']==0 else (f['k'] if f['kind']==1 else G))==cnt and (f['ms']<e['ms'] or (f['ms']==e['ms'] and f['o']<e['o'])) for f in ol)
            if not dom: keep.append((e,cnt))
        if not keep: return None
        for e,cnt in keep:
            v='x_%d_%d'%(t,e['o']); xs[(t,e['o'])]=v
            avgc.append((v,e['ms']*(R if cnt==0 else cnt)))
            u=rnd(e['ms'])
            if e['kind']==0: unif.append((v,e['ms']))
            elif e['kind']==1: items.append((v,cnt,u))
            else: lumps.append((v,1,u))
    la,lreach=arcs_for(lumps,K,[0])
    ia,ireach=arcs_for(items,K,sorted(lreach))
    rows=collections.defaultdict(list)  # name -> list of (coef,var)
    def add(r,c,v): rows[r].append((c,v))
    # lump graph: source 0 outflow N (node count), ends m_W at each reached vertex
    for i,st in la.items():
        sz=lumps[i][2]
        for j in st:
            v='p_%d_%d'%(i,j); add('ln%d'%j,-1,v); add('ln%d'%(j+sz),1,v); add('ld%d'%i,1,v)
    for j in sorted(lreach):
        v='m_%d'%j; add('ln%d'%j,-1,v); add('in%d'%j,1,v); add('in%d'%j,1,v) if False else None
    # m_j supplies G bins at item vertex j
    for j in sorted(lreach):
        rows['in%d'%j][-1]=(G,'m_%d'%j)
    for i,st in ia.items():
        sz=items[i][2]
        for j in st:
            v='q_%d_%d'%(i,j); add('in%d'%j,-1,v); add('in%d'%(j+sz),1,v); add('id%d'%i,1,v)
    for j in sorted(ireach):
        if j<K: v='e_%d'%j; add('in%d'%j,-1,v); add('in%d'%K,1,v)
    add('in0',1,'E')  # extra bins (cost): feasible plan has E = 0
    with open(path,'w') as fo:
        fo.write('Minimize\n obj: E\nSubject To\n')
        for j in range(K+1):
            r='ln%d'%j
            if r in rows:
                rhs = -N if j==0 else 0
                fo.write(' %s: '%r+' '.join('%+d %s'%(c,v) for c,v in rows[r])+' = %d\n'%rhs)
        for j in range(K):
            r='in%d'%j
            if r in rows: fo.write(' %s: '%r+' '.join('%+d %s'%(c,v) for c,v in rows[r])+' = 0\n')
        for i,(v,cnt,sz) in enumerate(lumps):
            if sz==0: continue
            fo.write(' ld%d: '%i+' '.join('%+d %s'%(c,w) for c,w in rows.get('ld%d'%i,[]))+' - %s >= 0\n'%v)
        for i,(v,cnt,sz) in enumerate(items):
            if sz==0: continue
            fo.write(' id%d: '%i+' '.join('%+d %s'%(c,w) for c,w in rows.get('id%d'%i,[]))+' - %d %s >= 0\n'%(cnt,v))
        for t in opts:
            vs=[xs[(t,e['o'])] for e in opts[t] if (t,e['o']) in xs]
            fo.write(' c%d: '%t+' + '.join(vs)+' = 1\n')
        # exact average load (no floor): R fixed + sum x (pieces x ms, uniform R x ms) <= R L
        fo.write(' avg: '+' + '.join('%.9f %s'%(cms,v) for v,cms in avgc)+' <= %.9f\n'%(R*(Lt-fixed)))
        if unif: fo.write(' ub: '+' + '.join('%.9f %s'%(ms,v) for v,ms in unif)+' <= %.9f\n'%(b-fixed))
        if binx: fo.write('Bounds\n E = 0\n')
        if binx: fo.write('Binary\n'+''.join(' %s\n'%v for v in xs.values()))
        if binx and os.environ.get('NAF_INT'):
            gen=set()
            for r in rows.values():
                for c,v in r:
                    if v[0] in 'pqem' and v!='E': gen.add(v)
            fo.write('General\n'+''.join(' %s\n'%v for v in sorted(gen)))
        fo.write('End\n')
    global LAST; LAST=(lumps,items,K)
    return K,len(lumps),len(items),sum(len(s) for s in la.values()),sum(len(s) for s in ia.values())
if __name__=='__main__':
    f=sys.argv[1]; Lt=float(sys.argv[2]); a=float(sys.argv[3]); b=float(sys.argv[4]); delta=float(sys.argv[5])
    mip=sys.argv[6] if len(sys.argv)>6 else None
    R,G,N,fixed,mx,opts,plan=load(f)
    r=build(os.path.join(WORK,'naf.lp'),R,G,N,fixed,opts,Lt,a,b,delta,binx=bool(mip),inner=bool(os.environ.get('NAF_INNER')))
    print('K lumps items larcs iarcs',r,flush=True)
    if r: print(subprocess.run([os.environ.get('LPS',os.path.join(WORK,'lps')),os.path.join(WORK,'naf.lp')]+([mip] if mip else []),capture_output=True,text=True).stdout)
