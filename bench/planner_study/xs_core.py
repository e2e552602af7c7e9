def ex(x): return x-T if x>T else 0.0
def tot(): return sum(ex(x) for x in ms)
print('start max %.4f excess %.4f'%(max(ms),tot()))
EPS=1e-9
improved=True; it=0
while improved and tot()>EPS:
    improved=False; it+=1
    hot=[r for r in range(R) if ms[r]>T+EPS]
    # item move / swap from a hot rank
    for p in items:
        r0=p[1]
        if ms[r0]<=T+EPS: continue
        for r in range(R):
            if r==r0: continue
            if by[r]+p[3]>cap: continue
            if r//G!=r0//G and hb[r//G]+p[4]>hcap: continue
            d=ex(ms[r0]-p[2])+ex(ms[r]+p[2])-ex(ms[r0])-ex(ms[r])
            if d< -EPS:
                ms[r0]-=p[2]; by[r0]-=p[3]; hb[r0//G]-=p[4]; ms[r]+=p[2]; by[r]+=p[3]; hb[r//G]+=p[4]; p[1]=r; improved=True; break
        if improved: break
        for q in items:
            r=q[1]
            if r==r0: continue
            dm=p[2]-q[2]
            if by[r]+p[3]-q[3]>cap or by[r0]-p[3]+q[3]>cap: continue
            if r//G!=r0//G and (hb[r//G]+p[4]-q[4]>hcap or hb[r0//G]-p[4]+q[4]>hcap): continue
            d=ex(ms[r0]-dm)+ex(ms[r]+dm)-ex(ms[r0])-ex(ms[r])
            if d< -EPS:
                for (a,bb,s) in ((p,r,1),(q,r0,1)): pass
                ms[r0]-=dm; ms[r]+=dm; by[r0]+=q[3]-p[3]; by[r]+=p[3]-q[3]
                hb[r0//G]+=q[4]-p[4]; hb[r//G]+=p[4]-q[4]; p[1],q[1]=r,r0; improved=True; break
        if improved: break
    if improved: continue
    # 2-1 swaps: two pieces p1,p2 on hot rank r0 against one q elsewhere
    for r0 in hot:
        on=[p for p in items if p[1]==r0]
        for p1,p2 in itertools.combinations(on,2):
            for q in items:
                r=q[1]
                if r==r0: continue
                dm=p1[2]+p2[2]-q[2]
                if by[r]+p1[3]+p2[3]-q[3]>cap or by[r0]-p1[3]-p2[3]+q[3]>cap: continue
                if r//G!=r0//G and (hb[r//G]+p1[4]+p2[4]-q[4]>hcap or hb[r0//G]-p1[4]-p2[4]+q[4]>hcap): continue
                d=ex(ms[r0]-dm)+ex(ms[r]+dm)-ex(ms[r0])-ex(ms[r])
                if d< -EPS:
                    ms[r0]-=dm; ms[r]+=dm; by[r0]+=q[3]-p1[3]-p2[3]; by[r]+=p1[3]+p2[3]-q[3]
                    hb[r0//G]+=q[4]-p1[4]-p2[4]; hb[r//G]+=p1[4]+p2[4]-q[4]; p1[1]=p2[1]=r; q[1]=r0; improved=True; break
            if improved: break
        if improved: break
    if improved: continue
    # lump move / swap between nodes
    def nodeex(n,dms): return sum(ex(ms[r]+dms)-ex(ms[r]) for r in range(n*G,n*G+G))
    def nodefits(n,db,dh): return all(by[r]+db<=cap for r in range(n*G,n*G+G)) and hb[n]+dh<=hcap
    for l in lumps:
        n0=l[1]
        if max(ms[n0*G:n0*G+G])<=T+EPS: continue
        for n in range(N):
            if n==n0: continue
            if nodefits(n,l[3],l[4]) and nodeex(n0,-l[2])+nodeex(n,l[2])< -EPS:
                for r in range(n0*G,n0*G+G): ms[r]-=l[2]; by[r]-=l[3]
                for r in range(n*G,n*G+G): ms[r]+=l[2]; by[r]+=l[3]
                hb[n0]-=l[4]; hb[n]+=l[4]; l[1]=n; improved=True; break
        if improved: break
        for m in lumps:
            n=m[1]
            if n==n0: continue
            dm=l[2]-m[2]
            if nodefits(n,l[3]-m[3],l[4]-m[4]) and nodefits(n0,m[3]-l[3],m[4]-l[4]) and nodeex(n0,-dm)+nodeex(n,dm)< -EPS:
                for r in range(n0*G,n0*G+G): ms[r]-=dm; by[r]+=m[3]-l[3]
                for r in range(n*G,n*G+G): ms[r]+=dm; by[r]+=l[3]-m[3]
                hb[n0]+=m[4]-l[4]; hb[n]+=l[4]-m[4]; l[1],m[1]=n,n0; improved=True; break
        if improved: break
print('end after %d: max %.4f excess %.4f hot ranks %d'%(it,max(ms),tot(),sum(1 for x in ms if x>T+EPS)))
print(sorted([round(x,3) for x in ms])[-12:])
