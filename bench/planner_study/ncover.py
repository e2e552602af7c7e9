import sys, subprocess
import os
HERE=os.path.dirname(os.path.abspath(__file__))
WORK=os.environ.get('STUDY_DIR','/tmp')
sys.path.insert(0,HERE)
from af import load
from naf import build
f=sys.argv[1]; Lt=float(sys.argv[2]); w=float(sys.argv[3]); delta=float(sys.argv[4]); a=float(sys.argv[5]); amax=float(sys.argv[6])
mip=sys.argv[7] if len(sys.argv)>7 else None
R,G,N,fixed,mx,opts,plan=load(f)
while a < amax:
    b=a+w
    r=build(os.path.join(WORK,'nc.lp'),R,G,N,fixed,opts,Lt,a,b,delta,binx=bool(mip))
    if r is None: print('U [%.3f,%.3f] no option'%(a,b),flush=True)
    else:
        out=subprocess.run([os.environ.get('LPS',os.path.join(WORK,'lps')),os.path.join(WORK,'nc.lp')]+([mip] if mip else []),capture_output=True,text=True).stdout
        print('U [%.3f,%.3f] %s'%(a,b,out.replace('\n',' | ')),flush=True)
    a=b
