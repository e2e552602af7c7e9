/* gemm.c: time of a dense GEMM from the hardware descriptor.
 *
 * The model picks, like a library heuristic, the best of a few kernel
 * shapes (CTA tile BM x BN, split-K factor s) by predicted time:
 *   t = launch + sqrt(t_compute^2 + t_memory^2) + drain   (p-norm, p = 2)
 *   t_compute = waves * (t_tile + fill),  waves = ceil(ctas / compute_units)
 *            (ctas / compute_units past one wave for the TMA kernels:
 *            stream-K tail balancing)
 *   drain = gemm_epilogue_drain * last wave's C bytes / DRAM bandwidth
 *   t_tile = max(math, shared-memory operand feed, K-step floor, unaligned
 *            load path) [+ the unaligned kernels' element-wise C stores];
 *            math uses the dtype's efficiency, times
 *            gemm_wg1_eff for 64-row tiles (one consumer warpgroup)
 *   t_memory = DRAM bytes / (hbm_bw * gemm_mem_eff), the operand bytes
 *            counted per wave of concurrent CTAs (their footprint in L2)
 * Sources: wave quantization and tile quantization -- NVIDIA "Matrix
 * Multiplication Background User's Guide" (Deep Learning Performance docs);
 * roofline -- Williams, Waterman, Patterson, CACM 2009 (the p-norm is its
 * soft form, costmodel_int.h); split-K -- CUTLASS docs (efficient_gemm.md,
 * "Parallelized Reductions"); L2 reuse of concurrent CTAs -- CUTLASS
 * threadblock swizzle / rasterization (efficient_gemm.md) and NVIDIA "GEMM
 * tiling" (the wave's tile rows and columns are read once per wave);
 * stream-K -- Osama, Merrill, Cecka, Garland, Owens, PPoPP 2023 (CUTLASS
 * sm90 stream-K tile scheduler); epilogue drain -- CUTLASS 3.x cooperative
 * schedule (epilogue after the main loop), cuBLAS "coopA" nvjet kernels
 * in data/measurements/h200-probe;
 * warpgroups -- CUTLASS 3.x sm90 kernel schedules (two consumer
 * warpgroups per 128-row tile); alignment -- cuBLAS docs ("pointers and
 * leading dimensions aligned to 16 bytes for the fastest kernels") and
 * data/measurements/h200/gemm.json (bf16 K=479 vs K=480 rows). Everything
 * here is arithmetic: no allocation, no I/O, so cost_gemm stays in the
 * microsecond budget (bench/).
 */
#include <math.h>
#include <string.h>

#include "costmodel/costmodel_int.h"

typedef cost_tile tile;

/* Hopper-class TMA/wgmma kernels (CUTLASS 3.x sm90 tile shapes). */
static const tile tc_tiles[] = {{128, 256}, {256, 128}, {128, 128}, {64, 256}, {64, 128}, {64, 64}};
/* Non-16B-aligned operands: the Ampere-style (cp.async.4/LDG) kernels.
 * data/measurements/h200-probe/gemm_kernels.json: cuBLAS runs them as
 * cutlass_75/80 tensorop kernels "..._align1" with 256x128 and 128x256
 * CTA tiles as well as 128x128 and smaller (CUTLASS 2.x default tile
 * list for sm80 tensorop GEMMs); 32x32 only where gemm_small_tiles says. */
static const tile ua_tiles[] = {{256, 128}, {128, 256}, {128, 128}, {128, 64},
                                {64, 128},  {64, 64},   {32, 32}};
/* tf32, aligned, small shapes: cuBLAS picks Ampere cutlass_80_tensorop_
 * s1688gemm kernels (mma.sync m16n8k8) with these tiles (same profile). */
static const tile amp_tiles[] = {{256, 64}, {64, 256}, {128, 128}, {128, 64}, {64, 128}, {64, 64}};
/* FP32 without tensor cores: SIMT SGEMM tiles (CUTLASS sgemm). */
static const tile simt_tiles[] = {{128, 128}, {128, 64}, {64, 64}};
/* Split-K factors, tried in order (the loop stops at the first too large).
 * Issue 25, twenty-ninth round: cuBLASLt's split count is any
 * integer (CUBLASLT_ALGO_CONFIG_SPLITK_NUM), not only a power of two. With
 * 1, 2, 4, ... a grid of 40-66 tiles on 132 SMs runs as one wave of 2
 * splits; 3 splits fill the machine. On the first-run unaligned cuBLAS
 * rows (K or N not a multiple of 8) of the H100 awkward sets, adding 3 on
 * Hopper moved sets 2-28 6.6 / 18.9 -> 6.1 / 19.0 % and sets 29-38
 * 6.2 / 15.3 -> 5.4 / 14.3 % (data/measurements/h100-gemm-time/README.md,
 * "A split factor of 3"; cub_rows.sh, cub_score.py); the cuBLAS rows it
 * was after, Mx1209x2048 nn at M = 424-912, were priced 14-28 % high
 * (cuBLAS runs 6 and 3 splits there: h100-gemm-profile/prof_split.json).
 * Blind check (rule and predictions with and without committed before the
 * sweep: h100-gemm-time/rule_r29.py, h200-awkward39-44): on the H100 sets
 * 39-44 the unaligned rows went 6.3 / 14.6 -> 5.5 / 13.4 %, all rows
 * 6.3 / 14.6 -> 5.6 / 13.4 %; it stays. With data/calibration/h200.json
 * refitted under it, the H200 DLRM step's leave-one-out went 7.2 -> 7.5 %
 * (bench/step_accuracy). 0 keeps 1, 2, 4, ... */
#ifndef GEMM_SPLIT3
#define GEMM_SPLIT3 1
#endif
static const int splits[] = {1, 2, 3, 4, 8, 16, 32};

int cost_gemm_eff_param(int dt) {
  switch (dt) {
  case COST_DT_FP64:
    return P_EFF_FP64;
  case COST_DT_FP32:
    return P_EFF_FP32;
  case COST_DT_TF32:
    return P_EFF_TF32;
  case COST_DT_BF16:
    return P_EFF_BF16;
  case COST_DT_FP16:
    return P_EFF_FP16;
  case COST_DT_INT8:
    return P_EFF_INT8;
  default:
    return P_EFF_FP8; /* fp8, fp6, fp4: the low-precision MMA path */
  }
}

/* Largest power of two (<= 16) dividing ld * bytes; 16-byte alignment is
 * what TMA / cp.async.16 need (CUDA C Programming Guide, TMA section). */
static int align_of(int64_t ld, double elem_bytes) {
  double bits = (double)ld * elem_bytes * 8.0;
  if (fmod(bits, 8.0) != 0.0) return 1;
  int64_t by = (int64_t)(bits / 8.0);
  int a = 1;
  while (a < 16 && by % (2 * a) == 0) a *= 2;
  return a;
}

static int is_tensor_dtype(const cost_hw *hw, int dt) {
  for (int i = 0; i < hw->n_mma && i < COST_MAX_MMA; i++)
    if (hw->mma[i].dtype == dt) return 1;
  /* Without an MMA list: fp32/fp64 are SIMT, the rest need tensor cores. */
  return hw->n_mma == 0 && dt != COST_DT_FP32 && dt != COST_DT_FP64;
}

/* K granularity: the MMA instruction's k (PTX wgmma shapes), else 32 bytes. */
static int64_t k_quantum(const cost_hw *hw, int dt, double b, int tensor) {
  if (!tensor) return 1;
  for (int i = 0; i < hw->n_mma && i < COST_MAX_MMA; i++)
    if (hw->mma[i].dtype == dt && hw->mma[i].k > 0) return hw->mma[i].k;
  int64_t q = (int64_t)(32.0 / b);
  return q < 1 ? 1 : q;
}

/* Issue 25 (awkward shapes), data/measurements/h200-awkward/fit_gemm.json:
 * wgmma reads a tf32 (non-16-bit) operand from shared memory only K-major
 * (PTX ISA, wgmma.mma_async: the transpose flags are for .f16/.bf16). An A
 * stored transposed ('t': M-major, the wgrad GEMM dY^T x) cannot feed it;
 * cuBLAS runs the Ampere mma.sync kernels instead (fit half: every tf32 tn
 * row but two was predicted 7-25 % fast on the Hopper family). */
static int gemm_tf32_mn_major_a(const char *lay) { return lay[0] == 't'; }

/* Issue 25: the smallest tile of the non-16-byte-aligned kernels.
 * data/measurements/h200-probe/gemm_kernels.json (every nn row of
 * data/measurements/h200/gemm.json whose K or N is not a multiple of 8):
 * for small problems cuBLAS runs 32x32 CTA tiles --
 * cutlass_75_wmma_tensorop_f16_s161616gemm_f16_32x32_*_align1 (fp16, 2-byte
 * aligned), cutlass_80_wmma_tensorop_{f16,bf16}_..._32x32_*_align2 (4-byte),
 * sm80_xmma_gemm_..._tf32f32_..._tilesize32x32x64 or the ffma 32x32x8 one
 * (tf32) -- but its smallest bf16 kernel at 2-byte alignment is
 * cutlass_75_tensorop_s1688gemm_bf16_64x64_align1 (8 shapes: 85x121x132,
 * 223x1263x45, 245x267x312, 790x223x128 ... bf16 0.8-1.6x the fp16 time).
 * WMMA has no bf16 fragment before sm_80 (CUDA C Programming Guide, "Warp
 * Matrix Functions": __nv_bfloat16 needs compute capability 8.0), and the
 * sm_80 wmma kernels cuBLAS ships are align2 only: a bf16 operand on a
 * 2-byte boundary has no 32x32 kernel. al: alignment in bytes. */
static int gemm_small_tiles(int dt, int al) {
  return dt == COST_DT_FP16 || dt == COST_DT_TF32 || (dt == COST_DT_BF16 && al >= 4);
}

/* A C element stored by the non-16-byte-aligned epilogue, in loaded
 * operand elements (the comment at its use). */
#define GEMM_UA_STORE_W 0.5

/* Issue 25: the split-K reduce kernel's latency per split, ns: an L2 round
 * trip per partial (Hopper L2 hit latency ~200-300 cycles at ~2 GHz, Chips
 * and Cheese, "Nvidia's H100: Funny L2, and Tons of Bandwidth", 2023:
 * ~100-150 ns). The value: leave-one-set-out CV over the three H200
 * awkward sweeps, grid 0/25/50/100/150/200 -- 100 in every fold (docs/
 * model.md, "GEMM time on awkward shapes"). */
#define GEMM_RED_SPLIT_NS 100.0

/* Issue 25: bf16 at 2-byte alignment on a small grid is split along K
 * however short K is. cuBLAS runs it with Turing-generation
 * cutlass_75_tensorop_s1688gemm_bf16_64x64_*_align1 kernels (it has no
 * 32x32 one: gemm_small_tiles) and, when a wave of their tiles fills few
 * SMs, splits K and adds cuBLASLt's splitKreduce_kernel -- at K = 13-100
 * as at K = 2000: data/measurements/h100-gemm-profile/README.md (64x512x13
 * nt, 24x13x512 nn, 512x13x100 tn: 3.2-4.2 us + 1.6-2.2 us of reduce, a
 * call 8.4-9.1 us where fp16 runs one 32x32 kernel) and the H200 profiles
 * of data/measurements/h200-probe/gemm_kernels.json (split with 4-64
 * 64x64 tiles: 85x121x132, 245x267x312, 512x512x415; one kernel at 80
 * and 128: 223x1263x45, and the awkward 1000x512x13 nt row). The grid
 * limit: half the SMs, between 64 and 80 tiles on the 132-SM H200 (the
 * one exception seen, 790x223x128 at 52 tiles, runs one kernel). Built
 * with -DGEMM_SPLIT_GRID_FRAC=0 the term is off (the eighth round's
 * cost_gemm: data/measurements/h200-awkward9/term_off.sh). */
#ifndef GEMM_SPLIT_GRID_FRAC
#define GEMM_SPLIT_GRID_FRAC 0.5
#endif

/* Issue 25: what a second, dependent kernel adds to a call beyond its own
 * run: data/measurements/h100-gemm-profile/README.md, call time minus the
 * kernels' device time -- 2.33-2.40 us with one kernel (bf16 1x256x64,
 * 64x256x64, 24x512x256), 3.35-3.48 us with a splitKreduce after it (bf16
 * 64x512x13, 24x13x512, 512x13x100; tf32 64x256x64, 64x256x100,
 * 24x512x256): 1.0-1.1 us. Priced only on the forced splits above: on
 * every split-K reduce it moved bench/costmodel_accuracy's GEMM CV 6.1 /
 * 17.0 -> 6.5 / 17.2 % at 1.5 us (the fitted tile_fill_us already carries
 * the reduce's fixed cost there). The value: leave-one-set-out CV over the
 * seven H200 awkward sets, grid 0/0.5/1/1.5/2/3 -- 1 in six folds of
 * seven (docs/kernels.md, "Ninth round";
 * data/measurements/h200-awkward7/gemm_cv_r9.txt). */
#define GEMM_RED_GAP_US 1.0

/* Issue 25, twenty-first round: on Hopper, the non-16-byte-aligned 16-bit
 * kernels stream an A stored transposed ('t', M-major: the wgrad GEMM
 * dY^T x) with a B of N-major rows faster than the K-major A of nn/nt --
 * cuBLAS runs cutlass_75_tensorop_bf16_s1688gemm_bf16_128x256_nt_align1
 * for bf16 2048x1209x4096 tn at 121 TFLOP/s on 80 of 132 SMs
 * (data/measurements/h100-gemm-profile/README.md), 1.6 TFLOP/s per CTA
 * against 1.33 for the 256x128 tiles of nn 4096x1209x2048 (h100-awkward19,
 * h100-awkward5). Before this term every set's unaligned 16-bit tn row
 * above 20 us was predicted slow (median +14 %, 45 rows of H100 sets 2-24)
 * while nn (+5 %) and nt (-1 %) were not. The factor on the unaligned load
 * rate: leave-one-set-out over the 23 H100 and 7 H200 awkward sets, grid
 * 1.0-1.5 by 0.1 jointly with GEMM_TF32_SPLIT_M below -- 1.2 in 30 folds
 * of 30 (data/measurements/h100-gemm-time/). 1 turns it off. */
#ifndef GEMM_TN_LOAD_X
#define GEMM_TN_LOAD_X 1.2
#endif

/* Issue 25, twenty-sixth round: the wgrad of a one-output layer is a
 * 1 x N x K `tn` product with K = batch. cuBLAS runs it as a GEMV whose
 * time grows with the log of K, not with the bytes it streams: on the H100
 * ~5.5 us to K ~ 300, 7.4 us at K = 1000, 12 us at K = 9728, 16-bit and
 * tf32 alike (a K reduction done in rounds, each a fixed cost; 132 rows
 * of H100 awkward sets 5-28, data/measurements/h100-gemm-time/
 * m1_tn_rows.txt), where streaming the matrix takes under a microsecond.
 * Each doubling of K past GEMM_GEMV_TN_K0 adds GEMM_GEMV_TN_US. Fitted on
 * the rows of sets 5-24 (one pair for 16-bit and tf32, grid 0-3 us by 0.05
 * and K0 16-512, the least median + p90): 0.65 us from K = 128; on sets
 * 25-28, never fitted, 16-bit median / p90 25.5 / 35.5 -> 2.7 / 10.3 %,
 * tf32 34.1 / 39.6 -> 10.6 / 31.3 % (the committed predictions plus the
 * term). Hopper only, where it was measured. 0 turns it off. */
#ifndef GEMM_GEMV_TN_US
#define GEMM_GEMV_TN_US 0.65
#endif
#ifndef GEMM_GEMV_TN_K0
#define GEMM_GEMV_TN_K0 128
#endif

/* Issue 25, twenty-first round: small tf32 GEMMs (M <= this, the Ampere
 * mma.sync kernels) are split along K however short K is, as the bf16 align1 ones
 * (GEMM_SPLIT_GRID_FRAC). data/measurements/h100-gemm-profile/README.md: tf32 64x256x64 and
 * 64x256x100 tn, 24x512x256 and 64x512x256 nn run cuBLAS's
 * cutlass_80_tensorop_s1688gemm_64x64_16x6 kernel and a splitKreduce_kernel
 * (1.6-2.1 us), a call 8.0-8.8 us where one kernel was priced (~6 us): the
 * -25..-34 % tf32 64x256xK tn rows of H100 sets 15-21; so does the
 * unaligned 24x1209x2048 nn (align1 128x64 kernel and the reduce). An nt operand pair
 * (both K-major) runs one sm80_xmma 32x32 kernel instead (64x512x13 nt), so
 * nt is left out. The M limit: the same leave-one-set-out, grid 0 (off) /
 * 64 / 128 -- 64 in 30 folds of 30. 0 turns it off. */
#ifndef GEMM_TF32_SPLIT_M
#define GEMM_TF32_SPLIT_M 64
#endif

/* Issue 25, twenty-eighth round: a K = 1 GEMM (M x N x 1, the dgrad of a
 * one-column input: an outer product) has no main loop. Its tile is one
 * element-wise C store (the compute side, GEMM_UA_STORE_W) of the bytes the
 * memory side writes, so the two do not add as a soft roofline, and no
 * drain follows a main loop: launch + max(compute, memory). On the K = 1
 * `nn` cuBLAS rows of the H100 awkward sets 2-28 (the form chosen among
 * sqrt / max, with / without drain, by median + p90) the shipped form ran
 * 6.9 / 25.7 % (16-bit) and 11.2 / 23.8 % (tf32) off; max gives 5.0 / 19.3
 * and 5.5 / 15.7 %; on H100 sets 33-36, scored after, 6.5 / 13.4 and
 * 15.9 / 23.1 % -> 1.6 / 8.9 and 5.5 / 13.3 %; on the H200 sets 2-7,
 * 6.1 / 20.1 and 7.1 / 11.1 % -> 3.5 / 19.8 and 5.0 / 7.9 %
 * (data/measurements/h100-gemm-time/k1_join.py and k1_join.txt, with H100
 * sets 29-32 too). The blind check: data/measurements/h200-awkward-k1/.
 * Hopper only, where it was measured. 0 turns it off. */
#ifndef GEMM_K1_JOIN
#define GEMM_K1_JOIN 1
#endif

typedef struct {
  double t, t_comp, t_mem, waves, bytes, t_tile, t_load, t_math, drain;
  int bm, bn, s;
} cand;

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

int cost_gemm_p(const cost_hw *hw, const double *p, const cost_gemm_op *op, cost_result *out) {
  cost_result_clear(out);
  if (!hw || !op) return COST_EINVAL;
  int dt = op->dtype;
  int64_t M = op->m, N = op->n, K = op->k, batch = op->batch <= 0 ? 1 : op->batch;
  if (dt < 0 || dt >= COST_DT__COUNT) return COST_EINVAL;
  if (M <= 0 || N <= 0 || K <= 0 || M > ((int64_t)1 << 40) || N > ((int64_t)1 << 40) ||
      K > ((int64_t)1 << 40) || batch > ((int64_t)1 << 30))
    return COST_EINVAL;
  const char *lay = op->layout[0] ? op->layout : "nn";
  if ((lay[0] != 'n' && lay[0] != 't') || (lay[1] != 'n' && lay[1] != 't') || lay[2] != '\0')
    return COST_EINVAL;
  /* Under dense load the chip sustains a lower clock than its peak
   * assumes when power, not the clock limit, binds (AMD ROCm blog,
   * "Measuring Max-Achievable FLOPs, Part 2", 2025: MI300X BF16 GEMM at
   * 1207 MHz of 2100 at 750 W): the tensor rate scales with the clock. */
  double peak = hw->peak_flops[dt] * cost_clock_ratio_dt(hw, dt);
  if (!(peak > 0)) return COST_EDTYPE;
  if (hw->compute_units <= 0 || !(hw->hbm_bw > 0) || !(hw->clock_hz > 0)) return COST_ENOHW;

  double b = cost_dtype_bytes((cost_dtype)dt);
  /* fp8 (and narrower) products write bf16 (docs/model.md: fp8 is e4m3 in, bf16 out, as
   * torch._scaled_mm was measured in data/measurements/h200/). */
  double bo = b < 2 ? 2 : (dt == COST_DT_TF32 ? 4 : b);
  int tensor = is_tensor_dtype(hw, dt);
  int64_t kq = k_quantum(hw, dt, b, tensor);

  /* Leading dimensions of row-major storage: A[M,K] lda=K ("n") or A
   * stored [K,M] lda=M ("t"); B[K,N] ldb=N or [N,K] ldb=K; C ldc=N. */
  int64_t lda = lay[0] == 'n' ? K : M, ldb = lay[1] == 'n' ? N : K;
  int al = align_of(lda, b), a2 = align_of(ldb, b), a3 = align_of(N, bo);
  if (a2 < al) al = a2;
  if (a3 < al) al = a3;
  int aligned = al >= 16;

  /* tf32 kernel family (data/measurements/h200-probe/gemm_kernels.json,
   * all tf32 rows of data/measurements/h200/gemm.json): cuBLAS runs the
   * Hopper sm90_xmma (wgmma) kernels only for aligned shapes of some
   * size; unaligned operands and small aligned shapes -- M <= 64, under
   * 2 GFLOP, or K <= 128 under 16 GFLOP -- run Ampere
   * cutlass_80_tensorop_s1688gemm kernels. Those issue mma.sync.m16n8k8
   * (PTX ISA, warp-level MMA), whose throughput on Hopper is below the
   * wgmma peak: their own efficiency, gemm_eff_tf32_mma_sync. */
  double fl = 2.0 * (double)M * N * K * batch;
  /* The family split is what cuBLAS does on Hopper (the profiled H200);
   * other architectures keep one tf32 family until measured. */
  int hopper = hw->arch[0] == 'h' && !strcmp(hw->arch, "hopper");
  int amp =
      tensor && hopper && dt == COST_DT_TF32 &&
      (!aligned || M <= 64 || fl < 2e9 || (K <= 128 && fl < 16e9) || gemm_tf32_mn_major_a(lay));
  const tile *tiles = tensor ? (aligned ? (amp ? amp_tiles : tc_tiles) : ua_tiles) : simt_tiles;
  int nt = tensor ? 6 : 3;
  if (tensor && !aligned && hopper && gemm_small_tiles(dt, al)) nt = 7;
  /* CDNA runs hipBLASLt's own macro tiles (gemm_arch.c). */
  const tile *own = tensor && aligned ? cost_gemm_arch_tiles(hw, &nt) : NULL;
  if (own) tiles = own;
  int balanced = cost_gemm_tail_balanced(hw);
  /* The bf16 align1 kernels split K on small grids (GEMM_SPLIT_GRID_FRAC);
   * K >= 4 leaves a split of 2 at least two elements each. */
  int split_small = tensor && hopper && !aligned && dt == COST_DT_BF16 && al < 4 && K >= 4;
  /* And the small tf32 ones of the Ampere kernels whose A or B is not
   * K-major (GEMM_TF32_SPLIT_M). */
  if (amp && M <= GEMM_TF32_SPLIT_M && strcmp(lay, "nt") != 0 && K >= 4) split_small = 1;
  double cu = hw->compute_units, clk = hw->clock_hz;
  double peak_sm = peak * p[amp ? P_EFF_TF32_SYNC : cost_gemm_eff_param(dt)] / cu;
  double smem_bw = 128.0 * clk; /* 32 banks x 4 B per clock (CUDA guide) */
  /* The fallback kernels load at most 4 bytes per lane (gemm.json: bf16
   * with 4- and 8-byte aligned leading dims run alike, ~1.5x the 2-byte
   * case; tf32 at 4 or 8 bytes alike). */
  double vec = aligned ? 0 : ((al > 4 ? 4 : al) / b < 1 ? 1 : (al > 4 ? 4 : al) / b);
  double load_rate = p[P_UNALIGNED_EPC] * clk * vec; /* elements/s per SM */
  if (hopper && !aligned && tensor && b == 2 && !strcmp(lay, "tn")) load_rate *= GEMM_TN_LOAD_X;
  double fill = p[P_TILE_FILL_US] * 1e-6;
  double kstep = p[P_KSTEP_NS] * 1e-9;
  double bw = hw->hbm_bw * p[P_GEMM_MEM_EFF];
  double l2 = hw->l2_bytes > 0 ? hw->l2_bytes : 0;

  /* Compulsory DRAM traffic: each operand once, C written once. */
  double A = (double)M * K * b, B = (double)K * N * b, C = (double)M * N * bo;
  double base_bytes = batch * (A + B + C);

  cand best = {.t = INFINITY};
  if (M == 1 || N == 1) {
    /* A matrix-vector product: cuBLAS dispatches GEMV kernels, bound by
     * streaming the matrix once (no tiles, no alignment fast path). */
    double t_mem = base_bytes / bw,
           t_c = 2.0 * M * N * K * batch / (peak * p[cost_gemm_eff_param(dt)]);
    best = (cand){
        sqrt(t_mem * t_mem + t_c * t_c) + fill, t_c, t_mem, 1, base_bytes, 0, 0, t_c, 0, 1, 1, 1};
    if (hopper && tensor && M == 1 && N > 1 && K > GEMM_GEMV_TN_K0 && !strcmp(lay, "tn"))
      best.t += GEMM_GEMV_TN_US * 1e-6 * log2((double)K / GEMM_GEMV_TN_K0);
    nt = 0;
  }
  for (int ti = 0; ti < nt; ti++) {
    int bm = tiles[ti].bm, bn = tiles[ti].bn;
    int64_t tm = cdiv(M, bm), tn = cdiv(N, bn), tiles_mn = tm * tn * batch;
    /* A 64-row tile runs one consumer warpgroup (wgmma is m64): nothing
     * hides its MMA latency and epilogue (CUTLASS sm90 schedules). */
    double psm = (tensor && bm == 64) ? peak_sm * p[P_WG1_EFF] : peak_sm;
    int forced = split_small && (double)tiles_mn < GEMM_SPLIT_GRID_FRAC * cu;
    for (size_t si = 0; si < sizeof splits / sizeof splits[0]; si++) {
      int s = splits[si];
      if ((forced && s == 1) || (s == 3 && !(GEMM_SPLIT3 && hopper))) continue;
      if (s > 1 && ((forced ? K < 2 * s : K / s < 128) || tiles_mn * s > 4 * (int64_t)cu)) break;
      double ctas = (double)tiles_mn * s;
      double waves = ceil(ctas / cu);
      /* Beyond the first wave, the TMA kernels' persistent tile scheduler
       * balances the tail: stream-K (Osama et al., PPoPP 2023; CUTLASS
       * sm90 stream-K tile scheduler) spreads the last partial wave's
       * K-iterations over all SMs, so a grid of w > 1 waves costs about
       * w, not ceil(w). data/measurements/h200/gemm.json: with ceil(w),
       * aligned shapes of 1-4 waves whose last wave is under a third full
       * were predicted 10% slow (median of 14), the rest unbiased; CV
       * median 7.8 -> 7.4 %. A grid of at most one wave still pays a
       * whole tile time per CTA. */
      if (tensor && aligned && !amp && waves > 1 && balanced) waves = ctas / cu;
      double kp = (double)(cdiv(cdiv(K, s), kq) * kq);
      double t_math = 2.0 * bm * bn * kp / psm;
      double t_smem = (bm + bn) * kp * b / smem_bw;
      double t_load = aligned ? 0 : (bm + bn) * kp / load_rate;
      /* Each 128-byte slice of K is one pipelined main-loop step. */
      double t_steps = kp * b / 128.0 * kstep;
      double t_tile = fmax(fmax(t_math, t_steps), fmax(t_smem, t_load));
      /* Issue 25: a kernel without 16-byte alignment also stores C
       * element by element (cuBLAS names one alignment per kernel,
       * "_align1"/"_align2", data/measurements/h200-probe/
       * gemm_kernels.json; CUTLASS 2.x epilogues write AlignmentC elements
       * per access). Each tile's C goes registers -> shared -> registers
       * -> global (CUTLASS 2.x epilogue: SharedLoadIterator, then the
       * OutputTileIterator's stores): ~4 lane-ops per element, half of a
       * loaded element's ~8 (params.c, unaligned_elems_per_clk), after
       * the main loop. With split-K the main kernel writes its fp32
       * partials to cuBLASLt's own (aligned) workspace and the reduce
       * kernel (red below) writes C. Without this term the unaligned rows
       * of data/measurements/h200/gemm.json were predicted fast at short K
       * and slow at long K (in-sample: 8287x19563x41 -23 %, 982x10280x33
       * -25 %; 20305x1818x20449 +25 %, 224x1176x8173 +37 %). The weight
       * 0.5 is the lane-op ratio; 2-fold CV over h200/ shapes put it
       * between 0.375 and 0.5 (0.25: 6.5 / 18.3 %, 0.375: 6.4 / 17.9 %,
       * 0.5: 6.4 / 18.0 %, 0.75: 6.7 / 18.4 %) and the fitting half of
       * h200-awkward/ at 0.5 over 0.375 (unaligned p90 18.6 vs 20.0 %). */
      if (!aligned && s == 1) t_tile += GEMM_UA_STORE_W * bm * bn / load_rate;
      /* Split-K partials (fp32, written by the main kernel) are reduced
       * by a second kernel (cuBLASLt splitKreduce_kernel, seen in
       * data/measurements/h200-probe profiles) that runs after it: its
       * fill and its read of the s partial tiles + write of C do not
       * overlap the main loop. Issue 25: each output's s partials are
       * read and summed in a loop, one L2 round trip per split
       * (GEMM_RED_SPLIT_NS each) that a small C has too few threads to
       * hide and no bandwidth term sees: the profiled reduce kernels of
       * small outputs run 1.7-2.7 us with few splits and 6.1 us for
       * 119x47x11047 bf16 (K long, many splits), well above their bytes
       * (docs/model.md, "GEMM time on awkward shapes"). */
      double red = s > 1 ? fill + (forced ? GEMM_RED_GAP_US * 1e-6 : 0) +
                               s * GEMM_RED_SPLIT_NS * 1e-9 +
                               batch * (double)M * N * ((double)s * 4.0 + bo) / bw
                         : 0;
      double t_comp = cost_gemm_fill_once(hw) ? waves * t_tile + fill : waves * (t_tile + fill);
      if (t_comp + red >= best.t) continue; /* the total below is >= t_comp + red */
      /* DRAM operand traffic. The CTAs of one wave run in step along K,
       * so the L2 serves each A row-panel and B column-panel they share
       * once: a wave of w output tiles, rasterized into an r x c block
       * (square in elements, CUTLASS swizzle), reads (r*BM + c*BN) * K/s
       * elements per split. Never below the compulsory A + B. */
      double conc = ctas < cu ? ctas : cu, tw = conc / s;
      double r = sqrt(tw * bn / bm);
      if (r > tm) r = (double)tm;
      if (r < 1) r = 1;
      double c = ceil(tw / r);
      if (c > tn) c = (double)tn;
      double per_wave = (r * bm + c * bn) * kp * s * b;
      double opnd = fmax(batch * (A + B), ctas / conc * per_wave);
      /* Operands that fit in L2 together are read from DRAM once. */
      if (batch * (A + B) <= l2) opnd = batch * (A + B);
      /* split-K partials: fp32 written once per split by the main kernel */
      double bytes = opnd + batch * C + (s > 1 ? (double)s * batch * (double)M * N * 4.0 : 0);
      double t_mem = bytes / bw;
      /* Compute and DRAM traffic overlap imperfectly (the TMA pipeline
       * stalls the MMAs when the loads fall behind, and the reverse): the
       * soft roofline, p-norm with p = 2 (costmodel_int.h). Fitted p on
       * the H200 data fell between 1.5 and 2.8; fixed at 2 so the hot
       * loop needs a sqrt, not a pow. */
      if (t_mem + red >= best.t) continue;
      /* Epilogue drain: the last wave's C tiles (fp32 partials with
       * split-K) are stored after its main loop, with nothing left to
       * overlap (CUTLASS 3.x cooperative schedule: epilogue after the
       * main loop; cuBLAS nvjet "coopA" kernels in the
       * data/measurements/h200-probe profiles). Short kernels with
       * large C tiles were predicted 5-10 % fast without it
       * (data/measurements/h200/gemm.json: bf16 32768x128x128,
       * 8192x128x256); CV p90 21.2 -> 19.9 % with the line above. */
      double drain = p[P_EPI_DRAIN] * conc * bm * bn * (s > 1 ? 4.0 : bo) / bw;
      double t = sqrt(t_comp * t_comp + t_mem * t_mem) + red + drain;
      if (GEMM_K1_JOIN && hopper && K == 1 && s == 1) { /* twenty-eighth round, above */
        drain = 0.0;
        t = fmax(t_comp, t_mem);
      }
      if (t < best.t)
        best =
            (cand){t, t_comp + red, t_mem, waves, bytes, t_tile, t_load, t_math, drain, bm, bn, s};
    }
  }

  double launch = p[P_LAUNCH_US] * 1e-6;
  double total = launch + best.t;
  double flops = 2.0 * M * N * K * batch;
  int bound = best.t_comp >= best.t_mem ? COST_BOUND_COMPUTE : COST_BOUND_MEMORY;
  if (launch > best.t) bound = COST_BOUND_LATENCY;
  cost_result_finish(out, total, bound, flops, best.bytes);
  double padded = 2.0 * cdiv(M, best.bm) * best.bm * cdiv(N, best.bn) * best.bn * (double)K * batch;
  cost_term_add(out, "compute_ms", best.t_comp * 1e3);
  cost_term_add(out, "memory_ms", best.t_mem * 1e3);
  cost_term_add(out, "launch_ms", launch * 1e3);
  cost_term_add(out, "drain_ms", best.drain * 1e3);
  cost_term_add(out, "waves", best.waves);
  cost_term_add(out, "tile_m", best.bm);
  cost_term_add(out, "tile_n", best.bn);
  cost_term_add(out, "split_k", best.s);
  cost_term_add(out, "tile_eff", flops / padded);
  cost_term_add(out, "align_bytes", al);
  cost_term_add(out, "align_penalty", best.t_math > 0 ? fmax(1.0, best.t_tile / best.t_math) : 1);
  cost_term_add(out, "peak_flops_per_s", peak);
  cost_term_add(out, "efficiency", p[amp ? P_EFF_TF32_SYNC : cost_gemm_eff_param(dt)]);
  return 0;
}

int cost_gemm(const cost_hw *hw, const cost_gemm_op *op, cost_result *out) {
  double p[P__COUNT];
  if (!hw) {
    cost_result_clear(out);
    return COST_EINVAL;
  }
  cost_params_resolve(hw, p);
  return cost_gemm_p(hw, p, op, out);
}
