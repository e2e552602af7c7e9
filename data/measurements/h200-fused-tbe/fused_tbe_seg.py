"""A variant of validate/gpu/fused_tbe.py's Triton kernels, measured beside them by
tbe_bench.py (framework "fused_triton_seg"); kept here, not in validate/gpu, until a device run
says which to keep.

Why (read off the committed kernels, not measured): the committed backward launches one
program per lookup (n = B x 214 = 14M at B=65536), of which all but the first of each run of
equal rows exit at once, and the first walks its run one lookup at a time; a table of 3 rows
at B=65536 gives runs of ~22k lookups walked serially. The committed forward also walks each
bag one lookup at a time (pooling up to 100). FBGEMM's TBE does neither: it launches over the
unique rows (run-length encoding of the sorted ids) and reads many lookups at once.

Here:
  forward   one program per bag reads CH lookups at a time ([CH, BLOCK_D] gather, summed);
  backward  run starts found with torch ops (srt[i] != srt[i-1]; one host sync for their
            count, as torch.nonzero), then one program per unique row sums its run CH
            lookups at a time and updates the row (and its row-wise Adagrad state) once.
The arithmetic is the committed module's (same optimizer rules, fp32 accumulation).

  python3 fused_tbe_seg.py --check     # against per-table EmbeddingBag in float64: the
                                       # Triton kernels on a GPU; without one, each program
                                       # emulated with torch ops (the algorithm, not Triton)
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                                "validate", "gpu"))
import fused_tbe  # noqa: E402

CH_FWD = 16
CH_BWD = 32
_K = {}


def _kernels():
    if _K:
        return _K
    import triton  # noqa: PLC0415
    import triton.language as tl  # noqa: PLC0415

    @triton.jit
    def fwd_chunk(W, IDX, OFF, WOFF, DIMS, COLS, OUT, B, out_stride, CH: tl.constexpr,
                  BLOCK_D: tl.constexpr):
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
        acc = tl.zeros((CH, BLOCK_D), dtype=tl.float32)
        for j0 in range(lo, hi, CH):
            pos = j0 + tl.arange(0, CH)
            mk = pos < hi
            r = tl.load(IDX + pos, mask=mk, other=0)
            acc += tl.load(W + w0 + r[:, None] * d + cols[None, :],
                           mask=mk[:, None] & m[None, :], other=0.0).to(tl.float32)
        out = tl.sum(acc, axis=0)
        tl.store(OUT + b * out_stride + c0 + cols, out.to(OUT.dtype.element_ty), mask=m)

    @triton.jit
    def bwd_seg(W, STATE, SORTED, PERM, BAG, IDX, STARTS, ENDS, WOFF, DIMS, COLS, G, B,
                g_stride, lr, eps, ADAGRAD: tl.constexpr, CH: tl.constexpr,
                BLOCK_D: tl.constexpr):
        u = tl.program_id(0)
        lo = tl.load(STARTS + u)
        hi = tl.load(ENDS + u)
        row = tl.load(SORTED + lo)
        p0 = tl.load(PERM + lo)
        bag0 = tl.load(BAG + p0)
        t = bag0 // B
        d = tl.load(DIMS + t)
        w0 = tl.load(WOFF + t)
        c0 = tl.load(COLS + t)
        r = tl.load(IDX + p0)
        cols = tl.arange(0, BLOCK_D)
        m = cols < d
        acc = tl.zeros((CH, BLOCK_D), dtype=tl.float32)
        for j0 in range(lo, hi, CH):
            pos = j0 + tl.arange(0, CH)
            mk = pos < hi
            p = tl.load(PERM + pos, mask=mk, other=0)
            bb = tl.load(BAG + p, mask=mk, other=0) % B
            acc += tl.load(G + bb[:, None] * g_stride + c0 + cols[None, :],
                           mask=mk[:, None] & m[None, :], other=0.0).to(tl.float32)
        g = tl.sum(acc, axis=0)
        wp = W + w0 + r * d + cols
        w = tl.load(wp, mask=m, other=0.0).to(tl.float32)
        if ADAGRAD:
            st = tl.load(STATE + row) + tl.sum(g * g, axis=0) / d.to(tl.float32)
            tl.store(STATE + row, st)
            w = w - lr * g / (tl.sqrt(st) + eps)
        else:
            w = w - lr * g
        tl.store(wp, w.to(W.dtype.element_ty), mask=m)

    _K.update(fwd=fwd_chunk, bwd=bwd_seg)
    return _K


def run_bounds(torch, srt):
    """Start and end (exclusive) of each run of equal ids in the sorted srt."""
    n = srt.numel()
    first = torch.ones(n, dtype=torch.bool, device=srt.device)
    first[1:] = srt[1:] != srt[:-1]
    starts = torch.nonzero(first).squeeze(1)
    ends = torch.empty_like(starts)
    ends[:-1] = starts[1:]
    ends[-1] = n
    return starts, ends


class FusedTBESeg(fused_tbe.FusedTBE):
    """fused_tbe.FusedTBE with the chunked forward and the run-per-program backward."""

    def _fwd_triton(self, indices, offsets, B, out_dtype):
        torch = self.torch
        out = torch.empty(B, self.total_d, dtype=out_dtype, device=self.device)
        _kernels()["fwd"][(self.T * B,)](self.weights, indices, offsets, self.woff, self.dims_t,
                                        self.cols, out, B, out.stride(0), CH=CH_FWD,
                                        BLOCK_D=self.block_d)
        return out

    def _bwd_triton(self, indices, offsets, B, grad):
        torch = self.torch
        n = indices.numel()
        if n == 0:
            return
        grad = grad.contiguous()
        bag = self._bag_ids(indices, offsets)
        srt, perm = torch.sort(self.roff[bag // B] + indices)
        starts, ends = run_bounds(torch, srt)
        _kernels()["bwd"][(starts.numel(),)](
            self.weights, self.state, srt, perm, bag, indices, starts, ends, self.woff,
            self.dims_t, self.cols, grad, B, grad.stride(0), self.lr, self.eps,
            ADAGRAD=self.optimizer == "rowwise_adagrad", CH=CH_BWD, BLOCK_D=self.block_d,
            num_warps=8)


def _emulate_fwd(torch, tbe, idx, off, B):
    """fwd_chunk, one program (bag) at a time, with torch ops."""
    out = torch.empty(B, tbe.total_d)
    for bag in range(tbe.T * B):
        t, b = bag // B, bag % B
        d, w0, c0 = tbe.dims[t], int(tbe.woff[t]), int(tbe.cols[t])
        lo, hi = int(off[bag]), int(off[bag + 1])
        acc = torch.zeros(CH_FWD, d)
        for j0 in range(lo, hi, CH_FWD):
            for k in range(min(CH_FWD, hi - j0)):
                r = int(idx[j0 + k])
                acc[k] += tbe.weights[w0 + r * d:w0 + r * d + d]
        out[b, c0:c0 + d] = acc.sum(0)
    return out


def _emulate_bwd(torch, tbe, idx, off, B, grad):
    """The host part as written, then bwd_seg one program (unique row) at a time."""
    bag = tbe._bag_ids(idx, off)
    srt, perm = torch.sort(tbe.roff[bag // B] + idx)
    starts, ends = run_bounds(torch, srt)
    for u in range(starts.numel()):
        lo, hi = int(starts[u]), int(ends[u])
        row, p0 = int(srt[lo]), int(perm[lo])
        t = int(bag[p0]) // B
        d, w0, c0, r = tbe.dims[t], int(tbe.woff[t]), int(tbe.cols[t]), int(idx[p0])
        acc = torch.zeros(CH_BWD, d)
        for j0 in range(lo, hi, CH_BWD):
            for k in range(min(CH_BWD, hi - j0)):
                acc[k] += grad[int(bag[int(perm[j0 + k])]) % B, c0:c0 + d]
        g = acc.sum(0)
        w = tbe.weights[w0 + r * d:w0 + r * d + d]
        if tbe.optimizer == "rowwise_adagrad":
            st = tbe.state[row] + (g * g).sum() / d
            tbe.state[row] = st
            w -= tbe.lr * g / (st.sqrt() + tbe.eps)
        else:
            w -= tbe.lr * g


def check(verbose=True):
    """fused_tbe.check's first case plus one with runs longer than CH_BWD and bags longer
    than CH_FWD: the Triton path on a GPU, else the programs emulated on the CPU. Returns the
    worst relative error against the float64 baseline."""
    import torch  # noqa: PLC0415
    gpu = torch.cuda.is_available()
    dev = "cuda" if gpu else "cpu"
    gen = torch.Generator().manual_seed(int(torch.randint(0, 1 << 30, (1,))))
    worst = 0.0
    shapes = (([50, 7, 300], [16, 8, 40], [3, 5, 1], 9),
              ([3, 1000, 20], [128, 64, 128], [1, 40, 100], 200 if gpu else 40))
    for rows, dims, pooling, B in shapes:
        for opt in ("sgd", "rowwise_adagrad"):
            tbe = FusedTBESeg(rows, dims, optimizer=opt, lr=0.05, device=dev,
                              seed=int(torch.randint(0, 1 << 30, (1,), generator=gen)),
                              reference=not gpu)
            if opt == "rowwise_adagrad":
                tbe.state += torch.rand(tbe.state.numel(), generator=gen).to(dev)
            ind, off = fused_tbe.random_batch(torch, rows, B, pooling, dev, gen)
            grad = torch.randn(B, tbe.total_d, generator=gen).to(dev)
            want_y, want_w, want_s = fused_tbe._baseline(torch, tbe, ind, off, B, grad)
            if gpu:
                y = tbe.forward(ind, off)
                y.backward(grad)
            else:
                with torch.no_grad():
                    y = _emulate_fwd(torch, tbe, ind, off, B)
                    _emulate_bwd(torch, tbe, ind, off, B, grad)
            errs = [float((y.detach().cpu().double() - want_y).norm() / want_y.norm())]
            for t in range(tbe.T):
                got = tbe.table(t).detach().cpu().double()
                errs.append(float((got - want_w[t]).norm() / want_w[t].norm()))
            if opt == "rowwise_adagrad":
                s = tbe.state.cpu().double()
                errs.append(float((s - want_s).norm() / want_s.norm()))
            e = max(errs)
            worst = max(worst, e if e == e else float("inf"))
            if verbose:
                print("fused_tbe_seg %-8s B=%-4d %-15s max rel err %.2e" % (
                    "triton" if gpu else "emulated", B, opt, e))
    return worst


if __name__ == "__main__":
    if "--check" in sys.argv:
        import importlib.util  # noqa: PLC0415
        if importlib.util.find_spec("torch") is None:
            print("torch missing: skip")
            sys.exit(77)
        # fp32 arithmetic against float64: far under 1e-5 (METHOD.md)
        sys.exit(0 if check() < 1e-5 else 1)
    print(__doc__)
