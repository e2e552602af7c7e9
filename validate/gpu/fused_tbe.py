"""A fused table-batched embedding (TBE) for the cdplan runner, written with Triton: one
forward kernel over all tables, one backward kernel that applies the optimizer in place
(the way FBGEMM's split_table_batched_embeddings does it), so that cdplan's `fused_triton`
framework profile can be checked on a GPU that has no FBGEMM.

Layout (FBGEMM's): T tables of rows[t] x dims[t], kept in one flat buffer; a batch of B
samples gives `indices` (int64, all tables' lookups back to back) and `offsets` (int64, T*B+1,
table-major: bag t*B+b is indices[offsets[t*B+b]:offsets[t*B+b+1]]). The forward returns the
pooled sums [B, sum(dims)], table t in columns cols[t]:cols[t]+dims[t].

  forward   one program per bag sums its rows (fp32 accumulation) into the output;
  backward  bag ids are expanded to one per lookup (repeat_interleave with a known size: no
            host synchronisation), the global row ids sorted (torch.sort, as FBGEMM's radix
            sort), then one program per sorted position: the first position of each run of
            equal rows sums that run's pooled gradients and updates the row and its state once
            (SGD: w -= lr g; row-wise Adagrad, FBGEMM's EXACT_ROWWISE_ADAGRAD:
            m += mean(g^2), w -= lr g / (sqrt(m) + eps)). No gradient is returned for the
            weights: the update is the backward's side effect.

Without CUDA or Triton the same arithmetic runs as torch ops (`reference=True`), so the module
and its --check run anywhere (Debian's python3-torch in CI).

  tbe = FusedTBE([1000, 50], [64, 32], optimizer="rowwise_adagrad", lr=0.01, device="cuda")
  out = tbe.forward(indices, offsets)   # [B, 96], requires grad
  out.float().sum().backward()          # updates tbe.weights (and tbe.state) in place

  python3 validate/gpu/fused_tbe.py --check     # Triton (if present) and the reference
                                                # against per-table nn.EmbeddingBag + torch
                                                # optimizers, fresh random inputs
"""

import sys

_K = {}


def _kernels():
    if _K:
        return _K
    import triton  # noqa: PLC0415
    import triton.language as tl  # noqa: PLC0415

    @triton.jit
    def tbe_fwd(W, IDX, OFF, WOFF, DIMS, COLS, OUT, B, out_stride, BLOCK_D: tl.constexpr):
        bag = tl.program_id(0)
        t = bag // B
        b = bag % B
        d = tl.load(DIMS + t)
        w0 = tl.load(WOFF + t)
        c0 = tl.load(COLS + t)
        lo = tl.load(OFF + bag)
        hi = tl.load(OFF + bag + 1)
        cols = tl.arange(0, BLOCK_D)
        m = cols < d
        acc = tl.zeros((BLOCK_D,), dtype=tl.float32)
        for j in range(lo, hi):
            r = tl.load(IDX + j)
            acc += tl.load(W + w0 + r * d + cols, mask=m, other=0.0).to(tl.float32)
        tl.store(OUT + b * out_stride + c0 + cols, acc.to(OUT.dtype.element_ty), mask=m)

    @triton.jit
    def tbe_bwd_update(W, STATE, SORTED, PERM, BAG, IDX, WOFF, DIMS, COLS, G, B, N, g_stride,
                       lr, eps, ADAGRAD: tl.constexpr, BLOCK_D: tl.constexpr):
        i = tl.program_id(0)
        row = tl.load(SORTED + i)
        prev = tl.load(SORTED + i - 1, mask=i > 0, other=-1)
        if (i == 0) | (prev != row):
            p0 = tl.load(PERM + i)
            bag0 = tl.load(BAG + p0)
            t = bag0 // B
            d = tl.load(DIMS + t)
            w0 = tl.load(WOFF + t)
            c0 = tl.load(COLS + t)
            r = tl.load(IDX + p0)
            cols = tl.arange(0, BLOCK_D)
            m = cols < d
            acc = tl.zeros((BLOCK_D,), dtype=tl.float32)
            j = i
            more = j < N
            while more:
                p = tl.load(PERM + j)
                bb = tl.load(BAG + p) % B
                acc += tl.load(G + bb * g_stride + c0 + cols, mask=m, other=0.0).to(tl.float32)
                j += 1
                nxt = tl.load(SORTED + j, mask=j < N, other=-1)
                more = (j < N) & (nxt == row)
            wp = W + w0 + r * d + cols
            w = tl.load(wp, mask=m, other=0.0).to(tl.float32)
            if ADAGRAD:
                s = tl.load(STATE + row) + tl.sum(acc * acc, axis=0) / d.to(tl.float32)
                tl.store(STATE + row, s)
                w = w - lr * acc / (tl.sqrt(s) + eps)
            else:
                w = w - lr * acc
            tl.store(wp, w.to(W.dtype.element_ty), mask=m)

    _K.update(fwd=tbe_fwd, bwd=tbe_bwd_update, triton=triton)
    return _K


def next_pow2(x):
    """The least power of two >= x (uvm_bag.py's block width too)."""
    n = 1
    while n < x:
        n *= 2
    return n


class FusedTBE:
    """All tables in one buffer; forward(indices, offsets) -> pooled [B, sum(dims)].

    rows, dims: per table. optimizer: "sgd" or "rowwise_adagrad" (fused into the backward).
    dtype: the tables' storage dtype (fp32, bf16 or fp16; sums and updates in fp32).
    reference: run the torch-op path even on a GPU (the check compares the two).
    """

    def __init__(self, rows, dims, optimizer="sgd", lr=0.01, eps=1e-8, dtype=None, device="cpu",
                 seed=0, reference=None):
        import torch  # noqa: PLC0415
        if len(rows) != len(dims) or not rows:
            raise ValueError("rows and dims: one entry per table")
        if any(int(r) < 1 for r in rows) or any(int(d) < 1 for d in dims):
            raise ValueError("rows and dims must be positive")
        if optimizer not in ("sgd", "rowwise_adagrad"):
            raise ValueError("optimizer must be sgd or rowwise_adagrad")
        self.torch = torch
        self.rows = [int(r) for r in rows]
        self.dims = [int(d) for d in dims]
        self.T = len(rows)
        self.optimizer, self.lr, self.eps = optimizer, float(lr), float(eps)
        self.device = torch.device(device)
        dtype = dtype or torch.float32
        woff, roff, cols, w, r, c = [], [], [], 0, 0, 0
        for n, d in zip(self.rows, self.dims):
            woff.append(w)
            roff.append(r)
            cols.append(c)
            w, r, c = w + n * d, r + n, c + d
        self.total_d = c
        g = torch.Generator(device=self.device).manual_seed(seed)
        # the tables' initialisation (TorchRec's default: uniform +-sqrt(1/rows)), made on the
        # device (a host-side fill of GBs of rows would take longer than the timings)
        self.weights = torch.empty(w, dtype=dtype, device=self.device)
        for t, (n, d) in enumerate(zip(self.rows, self.dims)):
            v = self.weights[woff[t]:woff[t] + n * d]
            # in place: a temporary of n*d floats would be 20 GB for a 40M x 128 table
            v.uniform_(-(1.0 / n) ** 0.5, (1.0 / n) ** 0.5, generator=g)
        self.state = torch.zeros(r, dtype=torch.float32, device=self.device)
        ix = dict(dtype=torch.int64, device=self.device)
        self.woff, self.roff = torch.tensor(woff, **ix), torch.tensor(roff, **ix)
        self.cols, self.dims_t = torch.tensor(cols, **ix), torch.tensor(self.dims, **ix)
        self.block_d = next_pow2(max(self.dims))
        if reference is None:
            reference = self.device.type != "cuda"
            if not reference:
                try:
                    _kernels()
                except ImportError:
                    reference = True
        self.reference = reference

    def table(self, t):
        """Table t's weights as a [rows, dim] view."""
        w0 = int(self.woff[t])
        return self.weights[w0:w0 + self.rows[t] * self.dims[t]].view(self.rows[t], self.dims[t])

    def forward(self, indices, offsets):
        torch = self.torch
        nb = offsets.numel() - 1
        if nb < 1 or nb % self.T:
            raise ValueError("offsets must hold T*B+1 entries")
        return _TBEFn.apply(self, indices, offsets, nb // self.T,
                            torch.empty(0, requires_grad=True, device=self.device))

    __call__ = forward

    # -- the reference path (torch ops) --
    def _fwd_ref(self, indices, offsets, B):
        torch = self.torch
        out = torch.zeros(B, self.total_d, dtype=torch.float32, device=self.device)
        bag = self._bag_ids(indices, offsets)
        for t in range(self.T):
            sel = (bag // B) == t
            rows = self.table(t).float()[indices[sel]]
            c0, d = int(self.cols[t]), self.dims[t]
            out[:, c0:c0 + d].index_add_(0, bag[sel] % B, rows)
        return out

    def _bag_ids(self, indices, offsets):
        torch = self.torch
        lens = offsets[1:] - offsets[:-1]
        return torch.repeat_interleave(torch.arange(lens.numel(), device=self.device), lens,
                                       output_size=indices.numel())

    def _bwd_ref(self, indices, offsets, B, grad):
        torch = self.torch
        bag = self._bag_ids(indices, offsets)
        for t in range(self.T):
            sel = (bag // B) == t
            idx = indices[sel]
            if idx.numel() == 0:
                continue
            c0, d = int(self.cols[t]), self.dims[t]
            uniq, inv = torch.unique(idx, return_inverse=True)
            g = torch.zeros(uniq.numel(), d, dtype=torch.float32, device=self.device)
            g.index_add_(0, inv, grad[bag[sel] % B, c0:c0 + d].float())
            w = self.table(t)
            new = w[uniq].float()
            if self.optimizer == "rowwise_adagrad":
                srow = self.roff[t] + uniq
                s = self.state[srow] + (g * g).mean(dim=1)
                self.state[srow] = s
                new = new - self.lr * g / (s.sqrt() + self.eps).unsqueeze(1)
            else:
                new = new - self.lr * g
            w[uniq] = new.to(w.dtype)

    # -- the Triton path --
    def _fwd_triton(self, indices, offsets, B, out_dtype):
        torch = self.torch
        K = _kernels()
        out = torch.empty(B, self.total_d, dtype=out_dtype, device=self.device)
        K["fwd"][(self.T * B,)](self.weights, indices, offsets, self.woff, self.dims_t, self.cols,
                                out, B, out.stride(0), BLOCK_D=self.block_d)
        return out

    def _bwd_triton(self, indices, offsets, B, grad):
        torch = self.torch
        K = _kernels()
        n = indices.numel()
        if n == 0:
            return
        grad = grad.contiguous()
        bag = self._bag_ids(indices, offsets)
        glob = self.roff[bag // B] + indices
        srt, perm = torch.sort(glob)
        K["bwd"][(n,)](self.weights, self.state, srt, perm, bag, indices, self.woff, self.dims_t,
                       self.cols, grad, B, n, grad.stride(0), self.lr, self.eps,
                       ADAGRAD=self.optimizer == "rowwise_adagrad", BLOCK_D=self.block_d)


def _make_fn():
    import torch  # noqa: PLC0415

    class TBEFn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, tbe, indices, offsets, B, anchor):  # noqa: ARG004
            ctx.tbe, ctx.B = tbe, B
            ctx.save_for_backward(indices, offsets)
            if tbe.reference:
                return tbe._fwd_ref(indices, offsets, B)
            return tbe._fwd_triton(indices, offsets, B, torch.float32)

        @staticmethod
        def backward(ctx, grad):
            indices, offsets = ctx.saved_tensors
            tbe = ctx.tbe
            with torch.no_grad():
                if tbe.reference:
                    tbe._bwd_ref(indices, offsets, ctx.B, grad)
                else:
                    tbe._bwd_triton(indices, offsets, ctx.B, grad)
            return None, None, None, None, None

    return TBEFn


class _TBEFnProxy:
    fn = None

    @classmethod
    def apply(cls, *a):
        if cls.fn is None:
            cls.fn = _make_fn()
        return cls.fn.apply(*a)


_TBEFn = _TBEFnProxy


def random_batch(torch, rows, B, pooling, device, generator=None):
    """indices, offsets for B samples, pooling[t] lookups per bag of table t (FBGEMM layout)."""
    idx, lens = [], []
    for n, p in zip(rows, pooling):
        idx.append(torch.randint(0, n, (B * p,), generator=generator))
        lens += [p] * B
    offsets = torch.zeros(len(lens) + 1, dtype=torch.int64)
    offsets[1:] = torch.cumsum(torch.tensor(lens, dtype=torch.int64), 0)
    return torch.cat(idx).to(device), offsets.to(device)


def _baseline(torch, tbe, indices, offsets, B, grad):
    """Per-table nn.EmbeddingBag (mode sum, dense grads) and the optimizer written out."""
    outs, new_w, new_s = [], [], tbe.state.clone().cpu().double()
    ind, off, grad = indices.cpu(), offsets.cpu(), grad.cpu().double()
    for t in range(tbe.T):
        w = tbe.table(t).detach().cpu().double().clone().requires_grad_(True)
        o = off[t * B:(t + 1) * B + 1]
        seg = ind[int(o[0]):int(o[-1])]
        y = torch.nn.functional.embedding_bag(seg, w, o[:-1] - o[0], mode="sum")
        c0, d = int(tbe.cols[t]), tbe.dims[t]
        y.backward(grad[:, c0:c0 + d])
        outs.append(y.detach())
        g = w.grad
        touched = torch.unique(seg)
        wn = w.detach().clone()
        if tbe.optimizer == "rowwise_adagrad":
            r0 = int(tbe.roff[t])
            s = new_s[r0 + touched] + (g[touched] ** 2).mean(dim=1)
            new_s[r0 + touched] = s
            wn[touched] -= tbe.lr * g[touched] / (s.sqrt() + tbe.eps).unsqueeze(1)
        else:
            wn[touched] -= tbe.lr * g[touched]
        new_w.append(wn)
    return torch.cat(outs, dim=1), new_w, new_s


def check(device=None, verbose=True):
    """Fresh random tables and batches (mixed dims and pooling, repeated rows): forward,
    and the weights and state after the fused backward, against per-table EmbeddingBag
    with the optimizer written out in float64. Returns the worst relative error."""
    import torch  # noqa: PLC0415
    dev = device or ("cuda" if torch.cuda.is_available() else "cpu")
    gen = torch.Generator().manual_seed(int(torch.randint(0, 1 << 30, (1,))))
    worst = 0.0
    paths = [True] + ([False] if dev == "cuda" else [])
    for ref in paths:
        for opt in ("sgd", "rowwise_adagrad"):
            rows, dims, pooling, B = [50, 7, 300], [16, 8, 40], [3, 5, 1], 9
            tbe = FusedTBE(rows, dims, optimizer=opt, lr=0.05, device=dev,
                           seed=int(torch.randint(0, 1 << 30, (1,), generator=gen)),
                           reference=ref)
            if opt == "rowwise_adagrad":
                tbe.state += torch.rand(tbe.state.numel(), generator=gen).to(dev)
            ind, off = random_batch(torch, rows, B, pooling, dev, gen)
            grad = torch.randn(B, tbe.total_d, generator=gen).to(dev)
            want_y, want_w, want_s = _baseline(torch, tbe, ind, off, B, grad)
            y = tbe.forward(ind, off)
            y.backward(grad)
            errs = [float((y.detach().cpu().double() - want_y).norm() / want_y.norm())]
            for t in range(tbe.T):
                got = tbe.table(t).detach().cpu().double()
                errs.append(float((got - want_w[t]).norm() / want_w[t].norm()))
            if opt == "rowwise_adagrad":
                s = tbe.state.cpu().double()
                errs.append(float((s - want_s).norm() / want_s.norm()))
            e = max(errs)
            if e != e:  # NaN never passes
                e = float("inf")
            worst = max(worst, e)
            if verbose:
                print("fused_tbe %-9s %-15s max rel err %.2e" % (
                    "reference" if ref else "triton", opt, e))
    return worst


if __name__ == "__main__":
    if "--check" in sys.argv:
        try:
            import torch  # noqa: F401,PLC0415
        except ImportError:
            print("torch missing: skip")
            sys.exit(77)
        w = check()
        # fp32 arithmetic against float64: far under 1e-5 (METHOD.md)
        sys.exit(0 if w < 1e-5 else 1)
    print(__doc__)


def build(torch, specs, dev, cpu_mode, optimizer, lr):
    """dlrm_step.py's entry (recipe.framework fused_triton): one FusedTBE per group of table
    shards that share a bag count (a FusedTBE takes T*B bags of one B), each spec
    {"rows", "dim", "bags", "pooling", "placement", "dtype"}. Returns a callable taking one
    [bags, pooling] index tensor per spec and giving the pooled rows (fp32, one per spec);
    the sparse optimizer runs fused in the backward. Tables stay in HBM: host or uvm
    placement is refused as unavailable."""
    for s in specs:
        if s["placement"] != "hbm":
            raise RuntimeError("unavailable: fused_triton keeps every table in HBM; a shard "
                               "placed %s needs recipe.framework pytorch_eager" % s["placement"])
    if optimizer not in ("sgd", "rowwise_adagrad"):
        raise RuntimeError("unavailable: fused_triton fuses sgd or rowwise_adagrad, not %s"
                           % optimizer)
    dt = None
    if not cpu_mode and specs:
        dt = {"fp32": torch.float32, "bf16": torch.bfloat16,
              "fp16": torch.float16}.get(specs[0]["dtype"], torch.float32)
    groups = {}
    for i, s in enumerate(specs):
        groups.setdefault(s["bags"], []).append(i)
    mods = [(pos, FusedTBE([specs[i]["rows"] for i in pos], [specs[i]["dim"] for i in pos],
                           optimizer=optimizer, lr=lr, dtype=dt, device=dev))
            for pos in groups.values()]

    def call(idx_list):
        outs = [None] * len(specs)
        for pos, tbe in mods:
            B = idx_list[pos[0]].shape[0]
            ind = torch.cat([idx_list[i].reshape(-1) for i in pos])
            lens = torch.cat([torch.full((B,), idx_list[i].shape[1], dtype=torch.int64,
                                         device=ind.device) for i in pos])
            off = torch.zeros(len(pos) * B + 1, dtype=torch.int64, device=ind.device)
            off[1:] = torch.cumsum(lens, 0)
            out = tbe(ind, off).float()
            # one split: its backward is one cat of the tables' gradients (a slice per table
            # would zero-fill and add a full [B, sum(dims)] gradient per table: quadratic)
            for i, o in zip(pos, out.split([specs[i]["dim"] for i in pos], dim=1)):
                outs[i] = o
        return outs

    return call
