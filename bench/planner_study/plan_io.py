"""The dump format's reading and writing, shared by nodepack.py and sa.py (README.md)."""


def read_dump(f):
    """(lines, I, R, G, N, fixed, cap, hcap, od, plan) of a PLAN_DUMP file: od[(t, o)] an option's
    kind, pieces k, ms a piece, HBM bytes b, host bytes h; plan[t] = (option, rank, node, ranks)."""
    lines = open(f).read().split('\n')
    I = lines[0].split()
    R, G, N = map(int, I[1:4])
    fixed, cap, hcap = float(I[4]), float(I[5]), float(I[6])
    od = {}; plan = {}
    for l in lines[1:]:
        w = l.split()
        if w and w[0] == 'O':
            od[(int(w[1]), int(w[2]))] = dict(kind=int(w[3]), k=int(w[4]), ms=float(w[5]), b=float(w[6]), h=float(w[7]))
        if w and w[0] == 'P':
            plan[int(w[1])] = (int(w[2]), int(w[3]), int(w[4]), list(map(int, w[5:])))
    return lines, I, R, G, N, fixed, cap, hcap, od, plan


def read_choice(cpath, plan, own):
    """Each table's option: the dump's own when cpath is one of `own`, else the x_t_o lines of an
    LPS_X=1 output."""
    if cpath in own:
        return {t: v[0] for t, v in plan.items()}
    ch = {}
    for l in open(cpath):
        w = l.split()
        if w and w[0] == 'x' and w[1].startswith('x_') and float(w[2]) > 0.5:
            _, t, o = w[1].split('_'); ch[int(t)] = int(o)
    return ch


def split_choice(ch, od, fixed, G):
    """(U, Ub, Uh, lumps, items): the uniform work (ms, HBM bytes a rank, host bytes a node), the
    table-row-wise lumps and the table-wise pieces / column-wise shards, each [table, ms, bytes,
    host bytes]."""
    U = fixed; Ub = 0.0; Uh = 0.0
    lumps = []; items = []
    for t in sorted(ch):
        e = od[(t, ch[t])]
        if e['kind'] == 0:
            U += e['ms']; Ub += e['b']; Uh += e['h'] * G
        elif e['kind'] == 2:
            lumps.append((t, e['ms'], e['b'], e['h'] * G))
        else:
            items += [(t, e['ms'], e['b'], e['h'])] * e['k']
    return U, Ub, Uh, lumps, items


def tally(lumps, items, ln, ir, N, R, G, Ub, Uh):
    """(W, S, by, hb) of lumps on nodes ln and pieces on ranks ir: lump ms a node, piece ms a
    rank, HBM bytes a rank, host bytes a node."""
    W = [0.0] * N; S = [0.0] * R; by = [Ub] * R; hb = [Uh] * N
    for a, (t, m, b, h) in enumerate(lumps):
        n = ln[a]; W[n] += m; hb[n] += h
        for r in range(n * G, n * G + G):
            by[r] += b
    for a, (t, m, b, h) in enumerate(items):
        r = ir[a]; S[r] += m; by[r] += b; hb[r // G] += h
    return W, S, by, hb


def write_plan(outp, I, lines, maxload, ch, od, lumps, ln, items, ir, G):
    """The plan in the dump's format: its first line with the slowest rank, the options, a P line
    a table (data-parallel / row-wise: -1 -1; table-row-wise: its node; else the pieces' ranks)."""
    node = {lumps[a][0]: ln[a] for a in range(len(lumps))}
    cw = {}
    for a, (t, m, b, h) in enumerate(items):
        cw.setdefault(t, []).append(ir[a])
    with open(outp, 'w') as fo:
        fo.write(' '.join(I[:9] + ['%.9g' % maxload]) + '\n')
        for l in lines[1:]:
            if l.startswith('O '):
                fo.write(l + '\n')
        for t in sorted(ch):
            e = od[(t, ch[t])]
            if e['kind'] == 0:
                fo.write('P %d %d -1 -1\n' % (t, ch[t]))
            elif e['kind'] == 2:
                fo.write('P %d %d -1 %d\n' % (t, ch[t], node[t]))
            else:
                rs = cw[t]
                fo.write('P %d %d %d %d%s\n' % (t, ch[t], rs[0], rs[0] // G, ''.join(' %d' % r for r in rs) if e['k'] > 1 else ''))
    print('wrote', outp)
