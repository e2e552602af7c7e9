#!/usr/bin/env python3
"""Leave-one-set-out choice of one grid value from per-set selection summaries.

Input lines (splitk_us_grid.sh): GRIDVALUE SET blind bf16+fp16 N top1 G worst W tau T ...
Each fold picks the value with the most other sets meeting all three targets (top-1 >= 0.96,
worst >= 0.85, tau >= 0.75), ties broken by their pooled top-1 + 0.5 tau; the left-out set is
scored at that value, and compared with the first grid value (the shipped model).

  python3 loso_sets.py splitk_us_grid.txt
"""
import math,collections,sys
R=collections.defaultdict(dict)
for l in open(sys.argv[1]):
    t=l.split(); d=float(t[0]); n=t[1]; cnt=int(t[4]); g=float(t[6]); w=float(t[8]); tau=float(t[10])
    R[d][n]=(g,w,tau,cnt)
grid=sorted(R); names=sorted(R[grid[0]])
meets=lambda x:x[0]>=0.96 and x[1]>=0.85 and x[2]>=0.75
def agg(d,excl=None):
    L=[R[d][n] for n in names if n!=excl]
    ok=sum(map(meets,L)); N=sum(x[3] for x in L)
    geo=math.exp(sum(math.log(x[0])*x[3] for x in L)/N); tau=sum(x[2]*x[3] for x in L)/N
    return ok,geo,tau
for d in grid: print(d,'sets meeting all three %d/%d pooled top1 %.4f tau %.4f'%((agg(d)[0],len(names))+agg(d)[1:]))
ch=[];lo=[]
for n in names:
    d=max(grid,key=lambda d:(agg(d,n)[0],agg(d,n)[1]+0.5*agg(d,n)[2])); ch.append(d); lo.append((n,R[grid[0]][n],R[d][n]))
print('chosen per fold',collections.Counter(ch))
print('left-out meeting all three: base',sum(meets(b) for _,b,_ in lo),'LOSO',sum(meets(c) for _,_,c in lo))
N=sum(b[3] for _,b,_ in lo)
print('left-out pooled top1 %.4f -> %.4f, tau %.4f -> %.4f'%(math.exp(sum(math.log(b[0])*b[3] for _,b,_ in lo)/N),math.exp(sum(math.log(c[0])*c[3] for _,_,c in lo)/N),sum(b[2]*b[3] for _,b,_ in lo)/N,sum(c[2]*c[3] for _,_,c in lo)/N))
for n,b,c in lo:
    if b!=c: print(' %-8s %.3f/%.3f/%.3f -> %.3f/%.3f/%.3f'%((n,)+b[:3]+c[:3]))
