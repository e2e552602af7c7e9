# python3 cub_score.py ROWS... : unaligned-row median / p90 of |pred/meas - 1| per set group (H100 2-28, H100 29-38, H200 2-7) and the H100 sets 29-38 meeting 8 / 20 %
import sys,math,collections
def load(f):
    d={}
    for l in open(f):
        t=l.split(); d[tuple(t[:8])]=(float(t[9]),float(t[11]))
    return d
def stats(v):
    v=sorted(v); n=len(v)
    def pct(p):
        x=p*(n-1); i=int(x); return v[i]+(v[min(i+1,n-1)]-v[i])*(x-i)
    return '%4d med %5.1f p90 %5.1f'%(n,100*pct(.5),100*pct(.9))
for f in sys.argv[1:]:
    d=load(f); out=[]
    for G,rng in (('h100',range(2,29)),('h100',range(29,39)),('h200',range(2,8))):
        u=[abs(p/m-1) for k,(m,p) in d.items() if k[0]==G and k[1].lstrip('-').isdigit() and int(k[1]) in rng and (int(k[6])%8 or int(k[5])%8)]
        out.append('%s %d-%d %s'%(G,rng[0],rng[-1],stats(u)))
    # per-set meets for h100 29-38
    ok=0
    for s in range(29,39):
        u=[abs(p/m-1) for k,(m,p) in d.items() if k[0]=='h100' and k[1]==str(s) and (int(k[6])%8 or int(k[5])%8)]
        v=sorted(u); n=len(v)
        def pct(p):
            x=p*(n-1); i=int(x); return v[i]+(v[min(i+1,n-1)]-v[i])*(x-i)
        ok+= pct(.5)<=0.08 and pct(.9)<=0.20
    print(f.split('/')[-1],' | '.join(out),'| H100 29-38 sets met',ok)
