# sa.py DUMP CHOICE T ITERS SEED [OUT]: simulated annealing over the packing of one option
# choice (CHOICE: x_t_o lines of an LPS_X=1 output, or "plan" for the dump's own): table-wise
# pieces and column-wise shards over ranks, table-row-wise lumps over nodes, HBM per rank and
# host memory per node kept within capacity; minimises the summed load above T (then the
# slowest rank). Writes the best plan in the dump's format (OUT).
import sys, os, math, random
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def main():
    f, cpath, T, iters, seed = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    outp = sys.argv[6] if len(sys.argv) > 6 else None
    lines = open(f).read().split('\n')
    I = lines[0].split()
    R, G, N = map(int, I[1:4]); fixed = float(I[4]); cap = float(I[5]); hcap = float(I[6])
    od = {}; plan = {}
    for l in lines[1:]:
        w = l.split()
        if w and w[0] == 'O':
            od[(int(w[1]), int(w[2]))] = dict(kind=int(w[3]), k=int(w[4]), ms=float(w[5]), b=float(w[6]), h=float(w[7]))
        if w and w[0] == 'P':
            plan[int(w[1])] = (int(w[2]), int(w[3]), int(w[4]), list(map(int, w[5:])))
    if cpath in ('plan', 'planfix'):
        ch = {t: v[0] for t, v in plan.items()}
    else:
        ch = {}
        for l in open(cpath):
            w = l.split()
            if w and w[0] == 'x' and w[1].startswith('x_') and float(w[2]) > 0.5:
                _, t, o = w[1].split('_'); ch[int(t)] = int(o)
    rng = random.Random(seed)
    U = fixed; Ub = 0.0; Uh = 0.0
    lumps = []; items = []  # [table, ms, bytes, host]
    for t in sorted(ch):
        e = od[(t, ch[t])]
        if e['kind'] == 0:
            U += e['ms']; Ub += e['b']; Uh += e['h'] * G
        elif e['kind'] == 2:
            lumps.append((t, e['ms'], e['b'], e['h'] * G))
        else:
            items += [(t, e['ms'], e['b'], e['h'])] * e['k']
    W = [0.0] * N; S = [0.0] * R; by = [Ub] * R; hb = [Uh] * N
    ln = [0] * len(lumps); ir = [0] * len(items)
    # start: the dump's plan (planfix) or best fit decreasing with random ties
    if cpath == 'planfix':
        for a, (t, m, b, h) in enumerate(lumps):
            ln[a] = plan[t][2]
        seen = {}
        for a, (t, m, b, h) in enumerate(items):
            rs = plan[t][3] if plan[t][3] else [plan[t][1]]
            k = seen.get(t, 0); seen[t] = k + 1; ir[a] = rs[k]
        for a, (t, m, b, h) in enumerate(lumps):
            n = ln[a]; W[n] += m; hb[n] += h
            for r in range(n * G, n * G + G):
                by[r] += b
        for a, (t, m, b, h) in enumerate(items):
            r = ir[a]; S[r] += m; by[r] += b; hb[r // G] += h
    else:
        for a in sorted(range(len(lumps)), key=lambda a: -lumps[a][1]):
            t, m, b, h = lumps[a]
            ok = [n for n in range(N) if U + W[n] + m <= T and hb[n] + h <= hcap and all(by[r] + b <= cap for r in range(n * G, n * G + G))]
            n = max(ok, key=lambda n: (W[n], rng.random())) if ok else min(range(N), key=lambda n: W[n])
            ln[a] = n; W[n] += m; hb[n] += h
            for r in range(n * G, n * G + G):
                by[r] += b
        for a in sorted(range(len(items)), key=lambda a: -items[a][1]):
            t, m, b, h = items[a]
            ok = [r for r in range(R) if U + W[r // G] + S[r] + m <= T and by[r] + b <= cap and hb[r // G] + h <= hcap]
            r = max(ok, key=lambda r: (W[r // G] + S[r], rng.random())) if ok else min(range(R), key=lambda r: W[r // G] + S[r])
            ir[a] = r; S[r] += m; by[r] += b; hb[r // G] += h
    C = T - U  # each rank: W[node] + S[rank] <= C

    def ex(x):
        return x - C if x > C else 0.0
    cur = sum(ex(W[r // G] + S[r]) for r in range(R))
    best = cur; bestsol = (ln[:], ir[:])
    print('U %.4f start excess %.4f max %.4f' % (U, cur, U + max(W[r // G] + S[r] for r in range(R))), flush=True)
    t0, t1 = float(os.environ.get('SA_T0', '0.05')), float(os.environ.get('SA_T1', '0.0005'))
    nl, ni = len(lumps), len(items)
    for it in range(iters):
        if cur <= 1e-12:
            break
        temp = t0 * (t1 / t0) ** (it / iters)
        u = rng.random()
        if u < 0.45:  # item move
            a = rng.randrange(ni); r0 = ir[a]; r = rng.randrange(R)
            if r == r0:
                continue
            t, m, b, h = items[a]
            if by[r] + b > cap or (r // G != r0 // G and hb[r // G] + h > hcap):
                continue
            w0 = W[r0 // G]; w1 = W[r // G]
            d = ex(w0 + S[r0] - m) + ex(w1 + S[r] + m) - ex(w0 + S[r0]) - ex(w1 + S[r])
            if d <= 0 or rng.random() < math.exp(-d / temp):
                S[r0] -= m; S[r] += m; by[r0] -= b; by[r] += b; hb[r0 // G] -= h; hb[r // G] += h; ir[a] = r; cur += d
        elif u < 0.85:  # item swap
            a = rng.randrange(ni); c = rng.randrange(ni); r0 = ir[a]; r = ir[c]
            if r == r0:
                continue
            ta, ma, ba, ha = items[a]; tc, mc, bc, hc = items[c]
            if by[r] + ba - bc > cap or by[r0] + bc - ba > cap:
                continue
            if r // G != r0 // G and (hb[r // G] + ha - hc > hcap or hb[r0 // G] + hc - ha > hcap):
                continue
            w0 = W[r0 // G]; w1 = W[r // G]; dm = ma - mc
            d = ex(w0 + S[r0] - dm) + ex(w1 + S[r] + dm) - ex(w0 + S[r0]) - ex(w1 + S[r])
            if d <= 0 or rng.random() < math.exp(-d / temp):
                S[r0] -= dm; S[r] += dm; by[r0] += bc - ba; by[r] += ba - bc
                hb[r0 // G] += hc - ha; hb[r // G] += ha - hc; ir[a] = r; ir[c] = r0; cur += d
        elif u < 0.93:  # lump move
            a = rng.randrange(nl); n0 = ln[a]; n = rng.randrange(N)
            if n == n0:
                continue
            t, m, b, h = lumps[a]
            if hb[n] + h > hcap or any(by[r] + b > cap for r in range(n * G, n * G + G)):
                continue
            d = sum(ex(W[n0] - m + S[r]) - ex(W[n0] + S[r]) for r in range(n0 * G, n0 * G + G)) + \
                sum(ex(W[n] + m + S[r]) - ex(W[n] + S[r]) for r in range(n * G, n * G + G))
            if d <= 0 or rng.random() < math.exp(-d / temp):
                W[n0] -= m; W[n] += m; hb[n0] -= h; hb[n] += h; ln[a] = n; cur += d
                for r in range(n0 * G, n0 * G + G):
                    by[r] -= b
                for r in range(n * G, n * G + G):
                    by[r] += b
        else:  # lump swap
            a = rng.randrange(nl); c = rng.randrange(nl); n0 = ln[a]; n = ln[c]
            if n == n0:
                continue
            ta, ma, ba, ha = lumps[a]; tc, mc, bc, hc = lumps[c]
            if hb[n] + ha - hc > hcap or hb[n0] + hc - ha > hcap:
                continue
            if any(by[r] + ba - bc > cap for r in range(n * G, n * G + G)) or any(by[r] + bc - ba > cap for r in range(n0 * G, n0 * G + G)):
                continue
            dm = ma - mc
            d = sum(ex(W[n0] - dm + S[r]) - ex(W[n0] + S[r]) for r in range(n0 * G, n0 * G + G)) + \
                sum(ex(W[n] + dm + S[r]) - ex(W[n] + S[r]) for r in range(n * G, n * G + G))
            if d <= 0 or rng.random() < math.exp(-d / temp):
                W[n0] -= dm; W[n] += dm; hb[n0] += hc - ha; hb[n] += ha - hc; ln[a] = n; ln[c] = n0; cur += d
                for r in range(n0 * G, n0 * G + G):
                    by[r] += bc - ba
                for r in range(n * G, n * G + G):
                    by[r] += ba - bc
        if it % (iters // 10 or 1) == 0 and os.environ.get('SA_LOG'):
            print(' it %d temp %.5f cur %.4f best %.4f' % (it, temp, cur, best), flush=True)
        if cur < best - 1e-12:
            best = cur; bestsol = (ln[:], ir[:])
    ln, ir = bestsol
    W = [0.0] * N; S = [0.0] * R; by = [Ub] * R; hb = [Uh] * N
    for a, (t, m, b, h) in enumerate(lumps):
        n = ln[a]; W[n] += m; hb[n] += h
        for r in range(n * G, n * G + G):
            by[r] += b
    for a, (t, m, b, h) in enumerate(items):
        r = ir[a]; S[r] += m; by[r] += b; hb[r // G] += h
    loads = [U + W[r // G] + S[r] for r in range(R)]
    print('best excess %.5f max %.4f mean %.4f HBM %.3f host %.3f' % (best, max(loads), sum(loads) / R, max(by) / cap, max(hb) / hcap))
    if outp:  # the best plan, whatever its slowest rank (the first line carries it)
        cw = {}
        for a, (t, m, b, h) in enumerate(items):
            cw.setdefault(t, []).append(ir[a])
        with open(outp, 'w') as fo:
            fo.write(' '.join(I[:9] + ['%.9g' % max(loads)]) + '\n')
            for l in lines[1:]:
                if l.startswith('O '):
                    fo.write(l + '\n')
            for t in sorted(ch):
                e = od[(t, ch[t])]
                if e['kind'] == 0:
                    fo.write('P %d %d -1 -1\n' % (t, ch[t]))
                elif e['kind'] == 2:
                    fo.write('P %d %d -1 %d\n' % (t, ch[t], ln[[a for a in range(nl) if lumps[a][0] == t][0]]))
                else:
                    rs = cw[t]
                    fo.write('P %d %d %d %d%s\n' % (t, ch[t], rs[0], rs[0] // G, ''.join(' %d' % r for r in rs) if e['k'] > 1 else ''))
        print('wrote', outp)


main()
