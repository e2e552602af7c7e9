import sys,subprocess,math
import os
HERE=os.path.dirname(os.path.abspath(__file__))
WORK=os.environ.get('STUDY_DIR','/tmp')
sys.path.insert(0,HERE)
from af import load
f,Lt,w,a0,a1=sys.argv[1],float(sys.argv[2]),float(sys.argv[3]),float(sys.argv[4]),float(sys.argv[5])
mip=sys.argv[6] if len(sys.argv)>6 else None
R,G,N,fixed,mx,opts,plan=load(f)
a=a0
while a<a1:
    b=a+w; C=Lt-a
    cols=[];rows=[];ub=[]
    ok=True
    for t,ol in opts.items():
        vs=[]
        for e in ol:
            cnt=0 if e['kind']==0 else (e['k'] if e['kind']==1 else G)
            if e['kind']==0 and e['ms']>b-fixed+1e-12: continue
            if e['kind']!=0 and e['ms']>C+1e-12: continue
            v='x_%d_%d'%(t,e['o']); vs.append(v); cols.append((v,e['ms']*(R if cnt==0 else cnt)))
            if cnt==0: ub.append((v,e['ms']))
        if not vs: ok=False; break
        rows.append(' c%d: '%t+' + '.join(vs)+' = 1')
    if not ok: print('U [%.3f,%.3f] no option'%(a,b)); a=b; continue
    with open(os.path.join(WORK,'avg.lp'),'w') as fo:
        fo.write('Minimize\n obj: '+' + '.join('%.9f %s'%(c,v) for v,c in cols)+'\nSubject To\n'+'\n'.join(rows)+'\n')
        if ub: fo.write(' ub: '+' + '.join('%.9f %s'%(c,v) for v,c in ub)+' <= %.9f\n'%(b-fixed))
        if mip: fo.write('Binary\n'+''.join(' %s\n'%v for v,c in cols))
        fo.write('End\n')
    out=subprocess.run([os.environ.get('LPS',os.path.join(WORK,'lps')),os.path.join(WORK,'avg.lp')]+([mip] if mip else []),capture_output=True,text=True).stdout.split()
    val=float(out[5]) if out[3]=='5' else float('inf')
    if mip and len(out)>12: val=float(out[12]) if out[10]=='5' else val
    print('U [%.3f,%.3f] min avg %.4f (L %.4f) %s'%(a,b,fixed+val/R,Lt,'INFEASIBLE' if fixed+val/R>Lt else 'ok'))
    a=b
