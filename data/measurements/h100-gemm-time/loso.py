"""Leave-one-set-out choice of (GEMM_TN_LOAD_X, GEMM_TF32_SPLIT_M) over grid.sh's files: per
fold, the grid point with the lowest mean |log(pred/meas)| on the other sets' unaligned rows,
scored on the left-out set.

  python3 loso.py GRID_DIR
"""
import sys,collections,math,glob,re,os
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tstat import load, pct  # noqa: E402
G={}
for f in glob.glob(os.path.join(sys.argv[1] if len(sys.argv) > 1 else '/tmp/gemm-time-grid', 'gr_*_*.txt')):
    x,m=re.match(r'gr_(.*)_(\d+)\.txt',os.path.basename(f)).groups(); G[(float(x),int(m))]=load(f)
keys=sorted(G); sets=sorted(G[keys[0]])
def un(r): return r[3]%8 or r[2]%8
def loss(d,ss):
    e=[abs(math.log(r[6]/r[5])) for s in ss for r in d[s] if un(r)]
    return sum(e)/len(e)
choice=collections.Counter(); held=[]
for s in sets:
    tr=[t for t in sets if t!=s]
    b=min(keys,key=lambda k:loss(G[k],tr)); choice[b]+=1
    held+= [abs(r[6]/r[5]-1) for r in G[b][s] if un(r)]
print('grid',len(keys),'folds',len(sets),'choices',dict(choice))
print('LOSO held unal med %.3f p90 %.3f'%(pct(held,.5),pct(held,.9)))
for k in keys: print(k,'all-sets loss %.4f'%loss(G[k],sets))
