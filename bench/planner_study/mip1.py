import sys, subprocess
import os
HERE=os.path.dirname(os.path.abspath(__file__))
WORK=os.environ.get('STUDY_DIR','/tmp')
sys.path.insert(0,HERE)
from af import load, build
f,Lt,a,b,delta,tl=sys.argv[1],float(sys.argv[2]),float(sys.argv[3]),float(sys.argv[4]),float(sys.argv[5]),sys.argv[6]
R,G,N,fixed,mx,opts,plan=load(f)
r=build(os.path.join(WORK,'afm.lp'),R,G,fixed,opts,Lt,a,b,delta,binx=True)
print(r,flush=True)
print(subprocess.run([os.environ.get('LPS',os.path.join(WORK,'lps')),os.path.join(WORK,'afm.lp'),tl],capture_output=True,text=True).stdout)
