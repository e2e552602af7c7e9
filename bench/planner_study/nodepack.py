# nodepack.py DUMP CHOICE T ITERS SEED [OUT]: two-level packing of one option choice (CHOICE as
# in sa.py). Outer: simulated annealing over the table-row-wise lumps' nodes (moves, swaps);
# inner: every table-wise piece and column-wise shard, biggest first, best fit into the ranks,
# each rank's room being T - uniform work - its node's lumps (HBM per rank, host memory per node
# checked). Cost: the summed ms of the pieces that fit nowhere. Writes the plan (dump format,
# OUT) when everything fits, so every rank is <= T.
import sys, os, math, random
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from plan_io import read_dump, read_choice, split_choice, write_plan


def main():
    f, cpath, T, iters, seed = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    outp = sys.argv[6] if len(sys.argv) > 6 else None
    lines, I, R, G, N, fixed, cap, hcap, od, plan = read_dump(f)
    ch = read_choice(cpath, plan, ('plan',))
    rng = random.Random(seed)
    U, Ub, Uh, lumps, items = split_choice(ch, od, fixed, G)
    items.sort(key=lambda z: (-z[1], -z[2]))
    C = T - U
    REPAIR = float(os.environ.get('NP_REPAIR', '5'))
    nl = len(lumps)

    def inner(ln, want=False):
        W = [0.0] * N; nb = [Ub] * N; hb = [Uh] * N
        for a, (t, m, b, h) in enumerate(lumps):
            n = ln[a]; W[n] += m; nb[n] += b; hb[n] += h
        room = [C - W[r // G] for r in range(R)]
        by = [nb[r // G] for r in range(R)]
        miss = 0.0; where = []
        if min(room) < -1e-12 or max(nb) > cap or max(hb) > hcap:
            return 1e9 + sum(max(0, -x) for x in room), None
        for (t, m, b, h) in items:
            best = -1; bl = 1e18
            for r in range(R):
                left = room[r] - m
                if left >= -1e-12 and left < bl and by[r] + b <= cap and hb[r // G] + h <= hcap:
                    best = r; bl = left
            if best < 0:
                miss += m; where.append(-1)
                continue
            room[best] -= m; by[best] += b; hb[best // G] += h; where.append(best)
        if 0 < miss < REPAIR:
            # ejection of depth one: a missed piece p takes the place of a smaller piece q on a
            # rank where it then fits, and q goes to a rank with room for it
            for a, (t, m, b, h) in enumerate(items):
                if where[a] >= 0:
                    continue
                done = False
                for c, (tq, mq, bq, hq) in enumerate(items):
                    r = where[c]
                    if r < 0 or mq >= m or room[r] + mq - m < -1e-12 or by[r] + b - bq > cap:
                        continue
                    if hb[r // G] + h - hq > hcap:
                        continue
                    for r2 in range(R):
                        if r2 != r and room[r2] - mq >= -1e-12 and by[r2] + bq <= cap and (r2 // G == r // G or hb[r2 // G] + hq <= hcap):
                            room[r] += mq - m; by[r] += b - bq; hb[r // G] += h - hq
                            room[r2] -= mq; by[r2] += bq; hb[r2 // G] += hq
                            where[a] = r; where[c] = r2; miss -= m; done = True
                            break
                    if done:
                        break
        return miss, where
    # start: lumps best fit decreasing over nodes at level C, ties random
    ln = [0] * nl; W = [0.0] * N
    for a in sorted(range(nl), key=lambda a: -lumps[a][1]):
        ok = [n for n in range(N) if W[n] + lumps[a][1] <= C]
        n = max(ok, key=lambda n: (W[n], rng.random())) if ok else min(range(N), key=lambda n: W[n])
        ln[a] = n; W[n] += lumps[a][1]
    cur, _ = inner(ln)
    best = cur; bln = ln[:]
    print('U %.4f C %.4f lumps %d items %d start miss %.4f' % (U, C, nl, len(items), cur), flush=True)
    t0, t1 = 2.0, 0.01
    for it in range(iters):
        if best <= 0:
            break
        temp = t0 * (t1 / t0) ** (it / iters)
        new = ln[:]
        if rng.random() < 0.5:
            new[rng.randrange(nl)] = rng.randrange(N)
        else:
            a, c = rng.randrange(nl), rng.randrange(nl)
            new[a], new[c] = new[c], new[a]
        if new == ln:
            continue
        v, _ = inner(new)
        if v <= cur or rng.random() < math.exp(-(v - cur) / temp):
            ln, cur = new, v
            if cur < best:
                best, bln = cur, ln[:]
        if os.environ.get('SA_LOG') and it % (iters // 10 or 1) == 0:
            print(' it %d temp %.3f cur %.4f best %.4f' % (it, temp, cur, best), flush=True)
    miss, where = inner(bln)
    print('best miss %.4f' % miss)
    if os.environ.get('NP_DIAG') and where is not None:
        Wd = [0.0] * N
        for a, (t, m, b, h) in enumerate(lumps):
            Wd[bln[a]] += m
        room = [C - Wd[r // G] for r in range(R)]
        for (t, m, b, h), r in zip(items, where):
            if r >= 0:
                room[r] -= m
        print(' missed', [(t, m) for (t, m, b, h), r in zip(items, where) if r < 0])
        print(' room > 0.05', sorted([round(x, 3) for x in room if x > 0.05], reverse=True))
        print(' node W', sorted(round(x, 3) for x in Wd))
    if where is None:
        return
    W = [0.0] * N; S = [0.0] * R
    for a, (t, m, b, h) in enumerate(lumps):
        W[bln[a]] += m
    # pieces that fit nowhere: on the rank of most room (HBM and host memory permitting), so
    # that sa.py can start from the plan (CHOICE planfix)
    by = [Ub] * R; hb = [Uh] * N
    for a, (t, m, b, h) in enumerate(lumps):
        hb[bln[a]] += h
        for r in range(bln[a] * G, bln[a] * G + G):
            by[r] += b
    for (t, m, b, h), r in zip(items, where):
        if r >= 0:
            S[r] += m; by[r] += b; hb[r // G] += h
    for a, (t, m, b, h) in enumerate(items):
        if where[a] < 0:
            r = min((r for r in range(R) if by[r] + b <= cap and hb[r // G] + h <= hcap), key=lambda r: W[r // G] + S[r])
            where[a] = r; S[r] += m; by[r] += b; hb[r // G] += h
    loads = [U + W[r // G] + S[r] for r in range(R)]
    print('plan max %.4f mean %.4f' % (max(loads), sum(loads) / R))
    if outp:
        write_plan(outp, I, lines, max(loads), ch, od, lumps, bln, items, where, G)

main()
