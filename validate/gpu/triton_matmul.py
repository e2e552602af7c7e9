"""Triton matmul kernel swept by runner.py's kernel_sweep job.

C[M, N] = A[M, K] @ B[K, N]; A and B row-major (any strides are accepted),
fp32 accumulation, output in C's dtype. Tiled BLOCK_M x BLOCK_N x BLOCK_K with
the GROUP_M swizzle of program ids (L2 reuse), masked loads on the K edge and
masked stores on the M/N edges (rows/columns past the edge are wrapped with a
modulo on load, as in Triton's tutorial kernel, so loads never leave the
buffers). Imported lazily: only GPU job kinds need triton.
"""
import triton
import triton.language as tl


@triton.jit
def tile_of(pid, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    """The (row, column) tile of program pid under the GROUP_M swizzle: GROUP_M row tiles
    walk the column tiles together, so their B columns are reused from L2. Shared with
    triton_matmul_sk.py (inlined where called)."""
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    return pid_m, pid_n


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                  GROUP_M: tl.constexpr):
    pid_m, pid_n = tile_of(tl.program_id(0), M, N, BLOCK_M, BLOCK_N, GROUP_M)

    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for kk in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - kk * BLOCK_K
        a = tl.load(a_ptrs, mask=offs_k[None, :] < k_left, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < k_left, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    c = acc.to(c_ptr.dtype.element_ty)
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


def grid_for(M, N, bm, bn):
    return (triton.cdiv(M, bm) * triton.cdiv(N, bn),)


def launch(a, b, c, cfg):
    """Run the kernel once with config cfg (dict bm, bn, bk, warps, stages, group_m)."""
    M, K = a.shape
    N = b.shape[1]
    matmul_kernel[grid_for(M, N, cfg["bm"], cfg["bn"])](
        a, b, c, M, N, K,
        a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
        BLOCK_M=cfg["bm"], BLOCK_N=cfg["bn"], BLOCK_K=cfg["bk"], GROUP_M=cfg["group_m"],
        num_warps=cfg["warps"], num_stages=cfg["stages"])


def strides(M, N, K, layout):
    """(stride_am, stride_ak, stride_bk, stride_bn) of A[M,K], B[K,N] in layout."""
    sa = (K, 1) if layout[0] == "n" else (1, M)
    sb = (N, 1) if layout[1] == "n" else (1, K)
    return sa + sb


def precompile(a, b, c, M, N, K, cfg, layout="nn"):
    """Compile (into Triton's on-disk cache) without launching, for A[M,K],
    B[K,N] in layout (nn: both row-major; t: stored transposed), C[M,N]
    row-major; a, b, c may be tiny tensors of the right dtypes: only their
    dtypes and alignment enter the specialization. Returns the compiled
    kernel."""
    return matmul_kernel.warmup(
        a, b, c, M, N, K, *strides(M, N, K, layout), N, 1,
        BLOCK_M=cfg["bm"], BLOCK_N=cfg["bn"], BLOCK_K=cfg["bk"], GROUP_M=cfg["group_m"],
        num_warps=cfg["warps"], num_stages=cfg["stages"], grid=(1,))


def precompile_dtype(dt_name, M, N, K, cfg, layout="nn"):
    """precompile() for a sweep dtype name (bf16, fp16, tf32, fp8: fp8 writes
    bf16, tf32 reads and writes fp32), on tiny CUDA tensors; a cfg with
    split_k > 1 compiles triton_matmul_sk's partial kernel instead. Returns
    the compiled kernel."""
    import torch  # noqa: PLC0415  (lazy, like triton's users)
    dt = {"bf16": torch.bfloat16, "fp16": torch.float16, "tf32": torch.float32,
          "fp8": torch.float8_e4m3fn}[dt_name]
    out_dt = torch.float32 if dt_name == "tf32" else (torch.bfloat16 if dt_name == "fp8" else dt)
    a = torch.empty(16, 16, device="cuda", dtype=torch.float32).to(dt)
    c = torch.empty(16, 16, device="cuda", dtype=out_dt)
    if cfg.get("split_k", 1) > 1:
        import triton_matmul_sk  # noqa: PLC0415  (beside this file)
        w = torch.empty(16, 16, device="cuda", dtype=torch.float32)
        return triton_matmul_sk.precompile(a, a, w, M, N, K, layout, cfg)
    return precompile(a, a, c, M, N, K, cfg, layout)
