"""Embedding tables in pinned host memory that the GPU reads and updates in place
over the host link: TorchRec/FBGEMM's "fused UVM" placement (EmbeddingLocation.HOST
with the optimizer fused into the backward), written for the cdplan runner with
Triton.

Under CUDA's unified virtual addressing a page-locked allocation (cudaHostAlloc,
what torch's pin_memory uses) is mapped into the device's address space at the same
address, so a kernel can dereference it directly (CUDA C++ Programming Guide,
"Unified Virtual Address Space" and "Mapped Memory"); every row a lookup touches
crosses PCIe.

  forward   one program per bag sums its `pooling` rows, read from host memory,
            into an fp32 output in HBM;
  backward  the pooled gradient is expanded to one row per lookup, the lookups are
            made unique on the GPU (torch.unique: a sort) and their gradients summed
            (index_add_), then one program per unique row reads it from host memory,
            applies SGD and writes it back: two link crossings per unique row.

Without a GPU (the runner's CPU test mode) the same steps run as torch ops, so
the logic is testable anywhere; timings then mean nothing.
"""

from fused_tbe import next_pow2

_K = {}


def _kernels():
    if _K:
        return _K
    import triton  # noqa: PLC0415
    import triton.language as tl  # noqa: PLC0415

    @triton.jit
    def bag_fwd(W, IDX, OUT, P, D, BLOCK_D: tl.constexpr):
        b = tl.program_id(0)
        cols = tl.arange(0, BLOCK_D)
        m = cols < D
        acc = tl.zeros((BLOCK_D,), dtype=tl.float32)
        for p in range(0, P):
            r = tl.load(IDX + b * P + p)
            acc += tl.load(W + r * D + cols, mask=m, other=0.0).to(tl.float32)
        tl.store(OUT + b.to(tl.int64) * D + cols, acc, mask=m)

    @triton.jit
    def row_sgd(W, ROWS, G, lr, D, BLOCK_D: tl.constexpr):
        u = tl.program_id(0)
        cols = tl.arange(0, BLOCK_D)
        m = cols < D
        r = tl.load(ROWS + u)
        w = tl.load(W + r * D + cols, mask=m, other=0.0).to(tl.float32)
        g = tl.load(G + u.to(tl.int64) * D + cols, mask=m, other=0.0)
        tl.store(W + r * D + cols, (w - lr * g).to(W.dtype.element_ty), mask=m)

    _K.update(triton=triton, bag_fwd=bag_fwd, row_sgd=row_sgd)
    return _K


def _launch_shape(D):
    """BLOCK_D (a power of two >= D) and warps: one 16-byte load per thread and row."""
    block = max(16, next_pow2(D))
    warps = max(1, min(8, block // 128))
    return block, warps


class UvmBag:
    """One table: weight (rows x dim) in pinned host memory, sum pooling, SGD fused
    into the backward with learning rate lr."""

    def __init__(self, torch, rows, dim, dev, cpu_mode, lr, dtype=None):
        self.t = torch
        self.dev = dev
        self.cpu_mode = cpu_mode
        self.lr = float(lr)
        self.dim = dim
        dt = dtype or torch.float32
        self.weight = torch.empty((rows, dim), dtype=dt, pin_memory=not cpu_mode)
        # autograd runs a Function's backward only when an input requires grad
        self.anchor = torch.zeros(1, device=dev, requires_grad=True)
        self._fn = _make_function(torch)

    def __call__(self, idx):
        return self._fn.apply(self.anchor, idx, self)

    # -- the two passes ------------------------------------------------------
    def forward_rows(self, idx):
        t = self.t
        B, P = idx.shape
        if self.cpu_mode:
            return self.weight[idx.reshape(-1)].float().view(B, P, self.dim).sum(1)
        k = _kernels()
        out = t.empty((B, self.dim), device=self.dev, dtype=t.float32)
        block, warps = _launch_shape(self.dim)
        k["bag_fwd"][(B,)](self.weight, idx, out, P, self.dim, BLOCK_D=block, num_warps=warps)
        return out

    def update_rows(self, idx, gout):
        t = self.t
        B, P = idx.shape
        uniq, inv = t.unique(idx.reshape(-1), return_inverse=True)
        g = gout.float().repeat_interleave(P, dim=0)
        G = t.zeros((uniq.numel(), self.dim), device=gout.device, dtype=t.float32)
        G.index_add_(0, inv, g)
        if self.cpu_mode:
            rows = self.weight[uniq].float() - self.lr * G
            self.weight[uniq] = rows.to(self.weight.dtype)
            return
        k = _kernels()
        block, warps = _launch_shape(self.dim)
        k["row_sgd"][(uniq.numel(),)](self.weight, uniq, G, self.lr, self.dim, BLOCK_D=block,
                                      num_warps=warps)


_FN = {}


def _make_function(torch):
    if "fn" in _FN:
        return _FN["fn"]

    class UvmBagFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, anchor, idx, bag):  # noqa: ARG004
            ctx.bag = bag
            ctx.save_for_backward(idx)
            return bag.forward_rows(idx)

        @staticmethod
        def backward(ctx, gout):
            (idx,) = ctx.saved_tensors
            ctx.bag.update_rows(idx, gout)
            return None, None, None

    _FN["fn"] = UvmBagFunction
    return UvmBagFunction
