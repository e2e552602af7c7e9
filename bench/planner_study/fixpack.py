# fixpack.py DUMP CHOICE L DELTA SECS [OUT]: pack one option choice (x_t_o lines of an LPS_X=1
# output, or the dump's own plan with CHOICE = plan) by the node-aware arc flow of naf.py with
# integer flows, pieces rounded up to DELTA and capacity L - U, so every integral point is a
# plan with slowest rank <= L; decoded into ranks and nodes, HBM and host memory checked, and
# written in the dump's format (OUT) for show.py / xs.py.
import sys, os, collections, subprocess, math
HERE = os.path.dirname(os.path.abspath(__file__))
WORK = os.environ.get('STUDY_DIR', '/tmp')
sys.path.insert(0, HERE)
import naf
from af import load


def read_choice(path, plan):
    if path == 'plan':
        return dict(plan)
    ch = {}
    for l in open(path):
        w = l.split()
        if w and w[0] == 'x' and w[1].startswith('x_') and float(w[2]) > 0.5:
            _, t, o = w[1].split('_')
            ch[int(t)] = int(o)
    return ch


def main():
    f, cpath, Lt, delta, secs = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
    outp = sys.argv[6] if len(sys.argv) > 6 else None
    R, G, N, fixed, mx, opts, plan = load(f)
    lines = open(f).read().split('\n')
    I = lines[0].split()
    cap, hcap = float(I[5]), float(I[6])
    od = {}
    for l in lines[1:]:
        w = l.split()
        if w and w[0] == 'O':
            od[(int(w[1]), int(w[2]))] = dict(kind=int(w[3]), k=int(w[4]), ms=float(w[5]), b=float(w[6]), h=float(w[7]))
    ch = read_choice(cpath, plan)
    U = fixed + sum(od[(t, o)]['ms'] for t, o in ch.items() if od[(t, o)]['kind'] == 0)
    sub = {t: [e for e in opts[t] if e['o'] == ch[t]] for t in opts}
    os.environ['NAF_INT'] = '1'
    lp = os.path.join(WORK, 'fix.lp')
    r = naf.build(lp, R, G, N, fixed, sub, Lt, U, U + 1e-9, delta, binx=True, inner=True)
    print('U %.4f K lumps items larcs iarcs %s' % (U, r), flush=True)
    if not r:
        return
    lumps, items, K = naf.LAST
    env = dict(os.environ, LPS_X='1')
    out = subprocess.run([os.environ.get('LPS', os.path.join(WORK, 'lps')), lp, secs], capture_output=True, text=True, env=env).stdout
    print('\n'.join(l for l in out.split('\n') if not l.startswith('x ')))
    val = {}
    for l in out.split('\n'):
        w = l.split()
        if w and w[0] == 'x':
            val[w[1]] = float(w[2])
    if 'mip rc 0 status 5' not in out and 'mip rc 0 status 2' not in out and not any(v.startswith('p_') for v in val):
        print('no integral point')
        return
    if any(abs(v - round(v)) > 1e-6 for v in val.values()):
        print('fractional flow')
        return
    val = {k: int(round(v)) for k, v in val.items()}
    larc = collections.Counter(); iarc = collections.Counter(); m = collections.Counter()
    for v, x in val.items():
        if x <= 0:
            continue
        w = v.split('_')
        if w[0] == 'p':
            larc[(int(w[2]), int(w[1]))] += x
        elif w[0] == 'q':
            iarc[(int(w[2]), int(w[1]))] += x
        elif w[0] == 'm':
            m[int(w[1])] += x
    # lump paths: one a node, from vertex 0 to a vertex with m > 0
    needl = collections.defaultdict(list)
    for i, (v, cnt, sz) in enumerate(lumps):
        needl[i].append(int(v.split('_')[1]))
    needi = collections.defaultdict(list)
    for i, (v, cnt, sz) in enumerate(items):
        needi[i] += [int(v.split('_')[1])] * cnt
    nodes = []
    for nd in range(N):
        j = 0; path = []
        while True:
            nxt = [(jj, i) for (jj, i) in larc if jj == j and larc[(jj, i)] > 0]
            if not nxt:
                assert m[j] > 0, 'lump path stuck'
                m[j] -= 1
                break
            jj, i = nxt[0]; larc[(jj, i)] -= 1; path.append(i); j += lumps[i][2]
        nodes.append((j, path))
    bylevel = collections.defaultdict(list)
    for nd, (W, path) in enumerate(nodes):
        bylevel[W].append(nd)
    ranks = {}
    for W, nds in bylevel.items():
        free = [r for nd in nds for r in range(nd * G, nd * G + G)]
        for r in free:
            j = W; ip = []
            while True:
                nxt = [(jj, i) for (jj, i) in iarc if jj == j and iarc[(jj, i)] > 0]
                if not nxt:
                    break
                jj, i = nxt[0]; iarc[(jj, i)] -= 1; ip.append(i); j += items[i][2]
            ranks[r] = ip
    assert sum(iarc.values()) == 0, 'item flow left'
    ms = [fixed] * R; by = [0.0] * R; hb = [0.0] * N
    P = {}
    for t, o in ch.items():
        e = od[(t, o)]
        if e['kind'] == 0:
            for r in range(R):
                ms[r] += e['ms']; by[r] += e['b']
            for n in range(N):
                hb[n] += e['h'] * G
            P[t] = (o, -1, -1, [])
    for nd, (W, path) in enumerate(nodes):
        for i in path:
            if needl[i]:
                t = needl[i].pop(); e = od[(t, ch[t])]
                for r in range(nd * G, nd * G + G):
                    ms[r] += e['ms']; by[r] += e['b']
                hb[nd] += e['h'] * G
                P[t] = (ch[t], -1, nd, [])
    cw = collections.defaultdict(list)
    for r, ip in ranks.items():
        for i in ip:
            if needi[i]:
                t = needi[i].pop(); e = od[(t, ch[t])]
                ms[r] += e['ms']; by[r] += e['b']; hb[r // G] += e['h']
                cw[t].append(r)
    for t, rs in cw.items():
        e = od[(t, ch[t])]
        P[t] = (ch[t], rs[0], rs[0] // G, rs if e['k'] > 1 else [])
        # (a table-wise piece: its rank; column-wise: the shards' ranks)
    left = [t for t in ch if t not in P or (od[(t, ch[t])]['kind'] == 1 and len(cw[t]) != od[(t, ch[t])]['k'])]
    print('unplaced', left)
    print('real max %.4f mean %.4f  HBM max/cap %.3f  host max/cap %.3f' % (max(ms), sum(ms) / R, max(by) / cap, max(hb) / hcap))
    print('slowest', sorted(round(x, 4) for x in ms)[-8:])
    if outp and not left:
        with open(outp, 'w') as fo:
            fo.write(' '.join(I[:9] + ['%.9g' % max(ms)]) + '\n')
            for l in lines[1:]:
                if l.startswith('O '):
                    fo.write(l + '\n')
            for t in sorted(P):
                o, rk, nd, rs = P[t]
                fo.write('P %d %d %d %d%s\n' % (t, o, rk, nd, ''.join(' %d' % r for r in rs)))
        print('wrote', outp)


main()
