# sa.py DUMP CHOICE T ITERS SEED [OUT]: simulated annealing over the packing of one option
# choice (CHOICE: x_t_o lines of an LPS_X=1 output, or "plan" for the dump's own): table-wise
# pieces and column-wise shards over ranks, table-row-wise lumps over nodes, HBM per rank and
# host memory per node kept within capacity; minimises the summed load above T (then the
# slowest rank). Writes the best plan in the dump's format (OUT).
import sys, os, math, random
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from plan_io import read_dump, read_choice, split_choice, tally, write_plan


def main():
    f, cpath, T, iters, seed = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    outp = sys.argv[6] if len(sys.argv) > 6 else None
    lines, I, R, G, N, fixed, cap, hcap, od, plan = read_dump(f)
    ch = read_choice(cpath, plan, ('plan', 'planfix'))
    rng = random.Random(seed)
    U, Ub, Uh, lumps, items = split_choice(ch, od, fixed, G)
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
        W, S, by, hb = tally(lumps, items, ln, ir, N, R, G, Ub, Uh)
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
    W, S, by, hb = tally(lumps, items, ln, ir, N, R, G, Ub, Uh)
    loads = [U + W[r // G] + S[r] for r in range(R)]
    print('best excess %.5f max %.4f mean %.4f HBM %.3f host %.3f' % (best, max(loads), sum(loads) / R, max(by) / cap, max(hb) / hcap))
    if outp:  # the best plan, whatever its slowest rank (the first line carries it)
        write_plan(outp, I, lines, max(loads), ch, od, lumps, ln, items, ir, G)

main()
