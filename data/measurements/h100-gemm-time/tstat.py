"""Summary of grid.sh output files (in-sample): H100 / H200 unaligned median and p90, H100 sets
meeting median <= 8 % and p90 <= 20 %, and the median error of the big unaligned 16-bit tn rows.

  python3 tstat.py GRID_DIR/gr_X_M.txt [...]
"""
import sys,collections
def load(f):
    d=collections.defaultdict(list)
    for l in open(f):
        p=l.split()
        s=p[0]; dt=p[2]; m,n,k=map(int,p[3:6]); lay=p[6]; meas=float(p[8]); pred=float(p[10])
        d[s].append((dt,m,n,k,lay,meas,pred))
    return d
def pct(v, q):
    """bench/kernel_awkward.c pct(): linear between the two nearest ranks."""
    v = sorted(v)
    pos = q * (len(v) - 1)
    i = int(pos)
    return v[i] + (pos - i) * (v[i + 1] - v[i]) if i + 1 < len(v) else v[i]
def stats(rows,unal=True):
    e=[abs(r[6]/r[5]-1) for r in rows if (not unal) or (r[3]%8 or r[2]%8)]
    return (pct(e,.5),pct(e,.9),len(e)) if e else (0,0,0)

def main():
    for f in sys.argv[1:]:
        d=load(f)
        met=0; hs=[]; gs=[]; out=[]
        for s in d:
            if s[0]=='h':
                hs+=d[s]; md,p9,n=stats(d[s]); met+= md<=.08 and p9<=.20
            else: gs+=d[s]
        md,p9,n=stats(hs); gm,gp,gn=stats(gs); am,ap,an=stats(gs,False)
        t16=[r for r in hs if r[4]=='tn' and r[0]!='tf32' and (r[3]%8 or r[2]%8) and r[5]>0.02]
        e=[r[6]/r[5]-1 for r in t16]
        print(f"{f:22s} H100 unal med {md*100:.1f} p90 {p9*100:.1f} (n={n}) sets met {met}/23 | H200 unal {gm*100:.1f}/{gp*100:.1f} all {am*100:.1f}/{ap*100:.1f} | tn16 big med {100*sorted(e)[len(e)//2]:+.1f}")


if __name__ == '__main__':
    main()
