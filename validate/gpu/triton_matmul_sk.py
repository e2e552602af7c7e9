"""Split-K variant of triton_matmul.py's kernel, swept by runner.py's kernel_sweep
job for configs with split_k > 1 (issue 25).

Grid (tiles, SPLIT_K): program (t, z) runs the K blocks [z*per, (z+1)*per) of
tile t (per = ceil(ceil(K/BLOCK_K) / SPLIT_K)) with the same GROUP_M swizzle,
masked K edge and fp32 accumulator as triton_matmul.matmul_kernel, and stores
its fp32 partial tile into a workspace W[SPLIT_K, M, N]; a second kernel sums
the SPLIT_K partials and writes C in its dtype -- the two-kernel scheme of
CUTLASS's "parallel reduction" split-K (efficient_gemm.md) and cuBLASLt's
splitKreduce_kernel. SPLIT_K and the flat size are not specialized, so one
compile serves every split count. Operand strides are free (layouts nn, nt,
tn, tt). Imported lazily: only GPU job kinds need triton.
"""
import triton
import triton.language as tl

from triton_matmul import strides, tile_of


@triton.jit(do_not_specialize=["SPLIT_K"])
def matmul_sk_kernel(a_ptr, b_ptr, w_ptr, M, N, K,
                     stride_am, stride_ak, stride_bk, stride_bn, stride_wz, stride_wm,
                     SPLIT_K,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                     GROUP_M: tl.constexpr):
    pid_m, pid_n = tile_of(tl.program_id(0), M, N, BLOCK_M, BLOCK_N, GROUP_M)
    z = tl.program_id(1)

    k_blocks = tl.cdiv(K, BLOCK_K)
    per = tl.cdiv(k_blocks, SPLIT_K)
    k0 = z * per
    k1 = min(k0 + per, k_blocks)

    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + (k0 * BLOCK_K + offs_k)[None, :] * stride_ak)
    b_ptrs = b_ptr + ((k0 * BLOCK_K + offs_k)[:, None] * stride_bk + offs_bn[None, :] * stride_bn)

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for kk in range(k0, k1):
        k_left = K - kk * BLOCK_K
        a = tl.load(a_ptrs, mask=offs_k[None, :] < k_left, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < k_left, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    w_ptrs = w_ptr + z * stride_wz + stride_wm * offs_cm[:, None] + offs_cn[None, :]
    tl.store(w_ptrs, acc, mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


@triton.jit(do_not_specialize=["MN", "SPLIT_K"])
def reduce_kernel(w_ptr, c_ptr, MN, SPLIT_K, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < MN
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for zz in range(0, SPLIT_K):
        acc += tl.load(w_ptr + zz * MN + offs, mask=mask, other=0.0)
    tl.store(c_ptr + offs, acc.to(c_ptr.dtype.element_ty), mask=mask)


REDUCE_BLOCK = 1024


def launch(a, b, c, w, cfg):
    """C = A @ B with cfg's tiles and split_k partials in w (fp32, >= split_k*M*N
    elements); c must be contiguous row-major."""
    M, K = a.shape
    N = b.shape[1]
    s = cfg["split_k"]
    grid = (triton.cdiv(M, cfg["bm"]) * triton.cdiv(N, cfg["bn"]), s)
    matmul_sk_kernel[grid](
        a, b, w, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), M * N, N, s,
        BLOCK_M=cfg["bm"], BLOCK_N=cfg["bn"], BLOCK_K=cfg["bk"], GROUP_M=cfg["group_m"],
        num_warps=cfg["warps"], num_stages=cfg["stages"])
    reduce_kernel[(triton.cdiv(M * N, REDUCE_BLOCK),)](w, c, M * N, s, BLOCK=REDUCE_BLOCK)


def precompile(a, b, w, M, N, K, layout, cfg):
    """Compile the partial-product kernel for this shape class (tiny tensors of the
    right dtypes suffice) without launching."""
    return matmul_sk_kernel.warmup(
        a, b, w, M, N, K, *strides(M, N, K, layout), M * N, N, 2,
        BLOCK_M=cfg["bm"], BLOCK_N=cfg["bn"], BLOCK_K=cfg["bk"], GROUP_M=cfg["group_m"],
        num_warps=cfg["warps"], num_stages=cfg["stages"], grid=(1,))
