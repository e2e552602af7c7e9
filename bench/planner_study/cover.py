import sys, subprocess
import os
HERE=os.path.dirname(os.path.abspath(__file__))
WORK=os.environ.get('STUDY_DIR','/tmp')
sys.path.insert(0,HERE)
from af import load, build
f=sys.argv[1]; Lt=float(sys.argv[2]); w=float(sys.argv[3]); delta=float(sys.argv[4])
R,G,N,fixed,mx,opts,plan=load(f)
a=fixed
while a < float(sys.argv[5]) if len(sys.argv)>5 else Lt:
    b=a+w
    r=build(os.path.join(WORK,'af.lp'),R,G,fixed,opts,Lt,a,b,delta)
    if r is None: print('U [%.3f,%.3f] no option'%(a,b)); 
    else:
        out=subprocess.run([os.environ.get('LPS',os.path.join(WORK,'lps')),os.path.join(WORK,'af.lp')],capture_output=True,text=True).stdout
        st=out.split()
        print('U [%.3f,%.3f] K %d arcs %d: status %s bins %s'%(a,b,r[0],r[2],st[3],st[5]),flush=True)
        pass
    a=b
