/* kernel.c: the time of one tiled GEMM kernel (validate/gpu/triton_matmul.py)
 * for one tile config, and whether the config can run at all.
 *
 * Fields: block sizes, warps and GROUP_M are powers of two; stages any
 * integer in 1..8 (3 is the common choice).
 * Feasibility, each reason naming the limit it breaks:
 *   threads per block (1024), shared memory per block (NVIDIA: stages x
 *   (BM*BK + BK*BN) x bytes, the smem_per_unit less the 1 KiB the driver
 *   reserves per block -- CUDA C Programming Guide, "Compute capabilities":
 *   228 KB per SM, 227 KB per block on cc 9.0; AMD: max(1, stages-1) LDS
 *   buffers, the stream pipeliner prefetching the next tile into registers
 *   -- ROCm docs "Optimizing Triton kernels", num_stages), the fp32
 *   accumulator tile BM*BN/threads against registers per thread (255
 *   NVIDIA; 512 on CDNA with the AGPRs) and per unit, matrix-instruction
 *   granularity (BM, BN >= 16).
 * Time, per SM (docs/kernels.md has the derivation and the fit):
 *   t_step  = softmax_q(t_mma, t_l2, t_lat, t_issue) * spill
 *     t_mma   = 2*BM*BN*BK / (peak/CU * e_mma * mma_shape_factor)
 *     t_l2    = (BM+BN)*BK*bytes / (L2 bytes per clock per SM * clock)
 *     t_lat   = latency / (pipeline depth * resident blocks); depth =
 *               min(stages-1, K steps); a 2-byte operand whose row stride
 *               is not divisible by 16 (Triton's integer specialization)
 *               cannot use cp.async (4, 8 or 16 bytes a copy, PTX ISA),
 *               is loaded element by element and is not pipelined: a
 *               block's step is the chain lat_sc (A) or lat_sc_b (B) +
 *               elements / 128 lanes * sc_elem + t_mma, over resident
 *               blocks; it gets one shared buffer, not num_stages (the
 *               compiler's "Required" bytes on the fit2 sweep's failures
 *               match this exactly). A 4-byte operand (tf32) is copied
 *               with 4-byte cp.async whatever its stride and keeps its
 *               num_stages buffers (h200-dtypes' failures match); a
 *               1-byte one (fp8) is staged through registers. On Hopper
 *               wgmma reads a non-16-bit B only K-major (PTX ISA, wgmma:
 *               the transpose is for .f16/.bf16), so the row-major B of
 *               an fp8 or tf32 kernel is transposed on its way to the MMA:
 *               it is timed like an element-by-element B (fp8 0.28 -> 0.81
 *               top-1 on h200-dtypes, tf32 0.51 -> 0.65). Tiles that run on
 *               mma.sync (Hopper: fewer than 64 rows) read B from shared
 *               memory in any order: their B copy is pipelined over the
 *               stages like A's (fp8 32-row tiles gain up to 1.3x from a
 *               4th stage), and they keep num_stages - 1 buffers (the
 *               compiler's shared bytes, data/measurements/h200-compile/)
 *     t_issue = scalar elements per step / (issue (A) or issue_b (B)
 *               warp loads per clock x warp)
 *     spill   = 1 + spill * max(0, regs - budget)^2  (the register-pressure
 *               term whose absence made the NVIDIA port of Origami pick
 *               spilling tiles)
 *   t_tile  = ceil(K/BK) * t_step + tile_ns + epi * C-tile store
 *   t       = launch + max(ceil(tiles/CU) * t_tile, DRAM bytes / (hbm*eff))
 * ceil() on tiles, K steps and the per-SM tile count carries tile
 * quantization, masked-edge waste and wave quantization; DRAM bytes carry
 * the GROUP_M swizzle's L2 reuse (B re-read once per group of GROUP_M tile
 * rows unless it fits in half the L2).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "costmodel/kernel.h"
#include "costmodel/kernel_int.h"

static int is_pow2(int v, int lo, int hi) { return v >= lo && v <= hi && (v & (v - 1)) == 0; }

int cost_karch_get(const cost_hw *hw, cost_karch *a) {
  memset(a, 0, sizeof *a);
  if (!strcmp(hw->arch, "hopper") || !strcmp(hw->arch, "blackwell") ||
      !strcmp(hw->arch, "ampere")) {
    a->warp = 32;
    a->max_regs = 255;
    a->max_warps_unit = 64;
    a->smem_block = hw->smem_per_unit - 1024;
    a->smem_reserved = 1024;
    a->mma_m = !strcmp(hw->arch, "hopper") ? 64 : !strcmp(hw->arch, "blackwell") ? 128 : 16;
  } else if (!strncmp(hw->arch, "cdna", 4)) {
    a->amd = 1;
    a->warp = 64;
    a->max_regs = 512;      /* 256 VGPRs + 256 AGPRs per lane (CDNA3 ISA, section 3.6) */
    a->max_warps_unit = 32; /* 8 waves per SIMD x 4 SIMDs */
    a->smem_block = hw->smem_per_unit;
    a->mma_m = 16;
  } else {
    return COST_ENOHW;
  }
  if (hw->compute_units <= 0 || hw->clock_hz <= 0 || hw->smem_per_unit <= 0 ||
      hw->regs_per_unit <= 0 || hw->hbm_bw <= 0)
    return COST_ENOHW;
  return 0;
}

/* Bytes per input element, and of the output (fp8 writes bf16). */
static double in_bytes(int dt) { return cost_dtype_bytes((cost_dtype)dt); }
static double out_bytes(int dt) {
  return dt == COST_DT_FP8 || dt == COST_DT_INT8 ? 2.0 : in_bytes(dt);
}

static double kib(double b) { return b / 1024.0; }

/* Structural limits; 0 when the config can launch, else 1 with the reason. */
static int check_limits(const cost_hw *hw, const cost_karch *a, const cost_kcfg *c, int dt,
                        double smem, double sc_bytes, char *why) {
  int threads = c->num_warps * a->warp;
  double acc = (double)c->block_m * c->block_n / threads;
  double cap = fmin(a->max_regs, hw->regs_per_unit / threads);
  if (threads > 1024) {
    snprintf(why, COST_KREASON, "threads: %d warps x %d = %d > 1024 threads per block",
             c->num_warps, a->warp, threads);
    return 1;
  }
  if (smem > a->smem_block) {
    int bufs = cost_kstage_buffers(a, c);
    if (sc_bytes > 0)
      snprintf(why, COST_KREASON,
               "shared memory: %d stages x %.0f KiB + %.0f KiB scalar-loaded = %.0f KiB > %.0f KiB "
               "per block",
               bufs, kib((smem - sc_bytes) / bufs), kib(sc_bytes), kib(smem), kib(a->smem_block));
    else
      snprintf(why, COST_KREASON, "%s: %d %s x %.0f KiB = %.0f KiB > %.0f KiB per block",
               a->amd ? "LDS" : "shared memory", bufs, a->amd ? "buffers" : "stages",
               kib(smem / bufs), kib(smem), kib(a->smem_block));
    return 1;
  }
  /* Nothing left for addresses and operands: Triton 3.6 still compiles
   * such a tile, spilling the accumulator (data/measurements/h200-compile/),
   * but none of the 1070 measured in the sweeps came within 0.58x of its
   * shape's best (median 0.16x), so it is ruled out. */
  if (acc >= cap) {
    snprintf(why, COST_KREASON,
             "registers: %dx%d fp32 accumulator over %d threads = %.0f per thread, limit %.0f "
             "(it would spill)",
             c->block_m, c->block_n, threads, acc, cap);
    return 1;
  }
  if (c->block_m < 16 || c->block_n < 16 || c->block_k < 16 / (in_bytes(dt) >= 4 ? 2 : 1)) {
    snprintf(why, COST_KREASON, "matrix instructions: tile %dx%dx%d below the 16x16x16 minimum",
             c->block_m, c->block_n, c->block_k);
    return 1;
  }
  return 0;
}

/* Whether the tile runs on mma.sync (Triton's MMA v2) rather than the
 * architecture's asynchronous MMA: on Hopper a block below wgmma's 64 rows
 * or with a warp count that is not whole warpgroups; on Ampere every tile. */
int cost_ksync_tile(const cost_karch *a, const cost_kcfg *c) {
  if (a->amd) return 0;
  return a->mma_m == 16 || (a->mma_m == 64 && (c->block_m < 64 || c->num_warps % 4 != 0));
}

/* Shared buffers of a pipelined operand: AMD's stream pipeliner keeps
 * max(1, stages-1) in LDS; on NVIDIA a wgmma tile keeps num_stages and an
 * mma.sync tile num_stages-1 (Triton 3.6 on the H200: the compiler's shared
 * bytes of every 32-row tile, data/measurements/h200-compile/). */
int cost_kstage_buffers(const cost_karch *a, const cost_kcfg *c) {
  if (a->amd || cost_ksync_tile(a, c)) return c->num_stages > 2 ? c->num_stages - 1 : 1;
  return c->num_stages;
}

/* Registers per thread: accumulator + operand staging + a fixed part.
 * A cp.async-loaded operand costs a 64-bit pointer per copy (16 bytes, or
 * one 4-byte element when its row stride is not a multiple of 16); an fp8
 * B on its way to wgmma is loaded 16 bytes at a time into registers (a
 * pointer per 16 elements plus the bytes); a scalar-loaded operand costs
 * reg_scalar per element (pointer + data); on AMD the
 * prefetched next tile lives in VGPRs too. */
static double regs_estimate(const cost_karch *a, const double *kp, const cost_kcfg *c, int a_vec,
                            int b_vec, int b_kmaj, double b, double a_per, double b_per) {
  double thr = (double)c->num_warps * a->warp;
  double ea = (double)c->block_m * c->block_k / thr, eb = (double)c->block_k * c->block_n / thr;
  double r = kp[COST_KP_REG_BASE] + (double)c->block_m * c->block_n / thr;
  r += a_vec ? 2.0 * ea / a_per : kp[COST_KP_REG_SCALAR] * ea;
  if (!a->amd && !b_vec && b == 1.0 && b_per > 1.0) /* fp8 B through registers, 16-byte loads */
    r += 2.0 * eb / b_per + eb * b / 4.0;
  else
    r += b_vec ? 2.0 * eb / b_per
               : kp[COST_KP_REG_SCALAR] * eb * (b_kmaj ? kp[COST_KP_REG_SC_KB] : 1.0);
  if (a->amd) r += (ea + eb) * b / 4.0;
  return r;
}

/* A stored transposed ([K, M], M-major) with M = 1 is one contiguous row
 * along K: its K stride is M = 1, which Triton specializes as the constant
 * 1 (an integer argument equal to 1), and every row of a tile aliases it
 * (offs_am % M). It loads as a K-major A with leading dimension K -- the
 * wgrad GEMV 1 x N x K (K = batch) of a one-output layer (twentieth round,
 * docs/kernels.md). */
int cost_ka_mmajor(const cost_kproblem *p) { return p->layout[0] == 't' && p->m != 1; }
int64_t cost_klead_a(const cost_kproblem *p) { return cost_ka_mmajor(p) ? p->m : p->k; }
int64_t cost_klead_b(const cost_kproblem *p) {
  return p->layout[0] && p->layout[1] == 't' ? p->k : p->n;
}

/* Split-K's second kernel (triton_matmul_sk.reduce_kernel; cuBLASLt's
 * splitKreduce_kernel does the same): it starts after the main kernel,
 * reads the s fp32 partial tiles and writes C once -- a fixed time (its
 * launch gap and one short wave, kernel_splitk_us, fitted on
 * data/measurements/h200-awkward/) plus that traffic at the DRAM rate the
 * operand stream reaches. CUTLASS efficient_gemm.md, "Parallelized
 * Reductions". */
static double splitk_reduce_s(const cost_hw *hw, const double *kp, const cost_kproblem *p, int s) {
  if (s <= 1) return 0.0;
  double mn = (double)p->m * p->n;
  /* the reduce loop over the s partials is serial (its bound SPLIT_K is
   * not specialized): s dependent L2 reads, kernel_splitk_ns each */
  return kp[COST_KP_SK_US] * 1e-6 + s * kp[COST_KP_SK_NS] * 1e-9 +
         mn * (4.0 * s + out_bytes(p->dtype)) / (hw->hbm_bw * kp[COST_KP_DRAM_EFF]);
}

static int check_args(const cost_hw *hw, const cost_kproblem *p, const cost_kcfg *c) {
  if (p->m < 1 || p->n < 1 || p->k < 1 || p->m > (1LL << 24) || p->n > (1LL << 24) ||
      p->k > (1LL << 24) || p->dtype < 0 || p->dtype >= COST_DT__COUNT)
    return COST_EINVAL;
  if (!is_pow2(c->block_m, 1, COST_KBLOCK_MAX) || !is_pow2(c->block_n, 1, COST_KBLOCK_MAX) ||
      !is_pow2(c->block_k, 1, COST_KBLOCK_MAX) || !is_pow2(c->num_warps, 1, COST_KWARPS_MAX) ||
      c->num_stages < 1 || c->num_stages > COST_KSTAGES_MAX ||
      !is_pow2(c->group_m, 1, COST_KGROUP_MAX) || c->split_k < 0 || c->split_k > COST_KSPLIT_MAX)
    return COST_EINVAL;
  const char *l = p->layout;
  if (l[0] && ((l[0] != 'n' && l[0] != 't') || (l[1] != 'n' && l[1] != 't') || l[2]))
    return COST_EINVAL;
  if (hw->peak_flops[p->dtype] <= 0) return COST_EDTYPE;
  return 0;
}

/* DRAM traffic under the GROUP_M swizzle: consecutive program ids walk
 * GROUP_M tile rows before moving one tile column, so an A row panel
 * group is reused across the whole row while it stays in L2, and B is
 * re-read once per group of rows unless all of B stays in L2. */
static double dram_bytes(const cost_hw *hw, const cost_kproblem *p, const cost_kcfg *c,
                         double concurrent, double b) {
  int64_t tm = cost_kcdiv(p->m, c->block_m), tn = cost_kcdiv(p->n, c->block_n);
  double a_bytes = (double)p->m * p->k * b, b_bytes = (double)p->k * p->n * b;
  double half_l2 = hw->l2_bytes > 0 ? hw->l2_bytes / 2 : 4e6;
  int64_t g = c->group_m < tm ? c->group_m : tm;
  double b_reads = b_bytes <= half_l2 ? 1.0 : (double)cost_kcdiv(tm, g);
  double rows_w = (double)g * c->block_m * p->k * b;
  double cols_w = fmax(1.0, fmin((double)tn, concurrent / g));
  double a_reads = rows_w <= half_l2 ? 1.0 : (double)tn / cols_w;
  return a_bytes * fmax(1.0, a_reads) + b_bytes * b_reads +
         (double)p->m * p->n * out_bytes(p->dtype);
}

int cost_kernel_predict_p(const cost_hw *hw, const double *kp, const cost_kproblem *p,
                          const cost_kcfg *c, cost_kpred *out) {
  cost_karch a;
  int rc;
  memset(out, 0, sizeof *out);
  out->cfg = *c;
  out->ms = INFINITY;
  out->family = 1.0;
  if ((rc = check_args(hw, p, c)) || (rc = cost_karch_get(hw, &a))) return rc;
  double b = in_bytes(p->dtype);
  int sync = cost_ksync_tile(&a, c);
  int s = c->split_k > 1 ? c->split_k : 1;
  /* The contiguous (leading) dimension of each operand: nn reads A along
   * K and B along N; a transposed A (wgrad's dY^T) is contiguous along M,
   * a transposed B (forward's W^T) along K. Triton specializes each stride
   * on divisibility by 16, which decides the copy width below. */
  int64_t lda = cost_klead_a(p), ldb = cost_klead_b(p);
  int at = cost_ka_mmajor(p), bt = p->layout[0] && p->layout[1] == 't';
  /* cp.async copies 4, 8 or 16 bytes: an operand goes through it when its
   * row stride is a multiple of 16 elements (16-byte copies) or its
   * elements are 4 bytes (one copy each); a 1-byte B only on mma.sync tiles
   * or when it is K-major (wgmma reads a non-16-bit B only K-major, PTX
   * ISA; else it is transposed through registers). */
  int a_vec = lda % 16 == 0 || b >= 4.0;
  int b_vec = (ldb % 16 == 0 || b >= 4.0) && (b >= 2.0 || sync || bt);
  int b_tvec = b_vec && (b == 2.0 || a.amd || bt); /* timing: B fed to the MMA untransposed */
  /* The same PTX rule for A: an M-major A of a non-16-bit type is
   * transposed on its way to wgmma (timed like a scalar-loaded A). */
  int a_tvec = a_vec && (b == 2.0 || a.amd || sync || !at);
  /* elements per copy, and so per 64-bit address register pair */
  double a_per = lda % 16 == 0 ? 16.0 / b : 1.0, b_per = ldb % 16 == 0 ? 16.0 / b : 1.0;
  double a_bytes = (double)c->block_m * c->block_k * b,
         b_bytes = (double)c->block_k * c->block_n * b;
  double tile_bytes = a_bytes + b_bytes;
  /* NVIDIA: a scalar-loaded operand is not pipelined, so it gets one shared
   * buffer (the register -> shared copy for the MMA), not num_stages. */
  double sc_bytes = a.amd ? 0.0 : (a_vec ? 0.0 : a_bytes) + (b_vec ? 0.0 : b_bytes);
  out->smem = (tile_bytes - sc_bytes) * cost_kstage_buffers(&a, c) + sc_bytes;
  out->tiles = cost_kcdiv(p->m, c->block_m) * cost_kcdiv(p->n, c->block_n);
  if (check_limits(hw, &a, c, p->dtype, out->smem, sc_bytes, out->reason)) return 0;

  int threads = c->num_warps * a.warp;
  /* A K-major B (layout ?t: forward's W^T) loaded element by element: its
   * K-contiguous scalar tile is lowered apart from an N-major one (on the
   * first blind awkward sweep its tiles ran up to 5x slower than nn tiles
   * of the same scalar bytes): reg_sc_kb and sc_kb scale its register and
   * per-element costs, fitted on data/measurements/h200-awkward/. */
  int b_kmaj = !a.amd && bt && ldb % 16 != 0 && b == 2.0;
  double r = regs_estimate(&a, kp, c, a_vec, b_tvec, b_kmaj, b, a_per, b_per);
  double cap = fmin(a.max_regs, hw->regs_per_unit / threads);
  /* Blocks per SM from the registers the compiler allocates: the estimate
   * times reg_occ for 2-byte tiles (twelfth round, measured and not kept:
   * shipped 0 = the estimate itself). Triton 3.6 on the H200 allocates
   * 1.436x the estimate (geo-mean over the 171 bf16 configs that compiled
   * without spilling, data/measurements/h200-compile/compile_info.json;
   * e.g. 64x64x128 with an unaligned N: 145 estimated, 227 compiled, two
   * blocks per SM where the estimate fits three). The spill term keeps the
   * estimate, on whose scale reg_budget was fitted. */
  double r_occ = r * (kp[COST_KP_REG_OCC] > 0.0 && b == 2.0 && !a.amd ? kp[COST_KP_REG_OCC] : 1.0);
  double alloc = ceil(fmin(r_occ, cap) / 8.0) * 8.0;
  int occ_smem = (int)(hw->smem_per_unit / (out->smem + a.smem_reserved));
  int occ_regs = (int)(hw->regs_per_unit / (alloc * threads));
  int occ = occ_smem < occ_regs ? occ_smem : occ_regs;
  if (a.max_warps_unit / c->num_warps < occ) occ = a.max_warps_unit / c->num_warps;
  if (occ > 32) occ = 32;
  if (occ < 1) occ = 1;
  out->regs = (int)ceil(r);
  out->occupancy = occ;

  double cu = hw->compute_units, clk = hw->clock_hz;
  /* split-K: s programs per tile, each over ceil(K steps / s) of them */
  int64_t ksteps = cost_kcdiv(cost_kcdiv(p->k, c->block_k), s);
  int64_t per_sm = cost_kcdiv(out->tiles * s, hw->compute_units);
  double conc = (double)(per_sm < occ ? per_sm : occ);
  out->waves = (double)out->tiles * s / (cu * occ);
  /* split-K: s programs per tile cover ksteps * s K blocks */
  out->edge_waste =
      1.0 - (double)p->m * p->n * p->k /
                ((double)out->tiles * c->block_m * c->block_n * (double)ksteps * s * c->block_k);

  /* Tensor-core rate: a tile below the instruction's M falls back to a
   * slower path (Hopper: mma.sync instead of wgmma), and warps without a
   * 16x8 (NVIDIA) / 16x16 (AMD) output piece of their own idle. */
  double e = c->num_warps <= 4 ? kp[COST_KP_E_MMA4] : kp[COST_KP_E_MMA8];
  if (c->block_m < a.mma_m) e *= fmax(0.5, (double)c->block_m / a.mma_m + kp[COST_KP_SMALLM]);
  double pieces = (double)c->block_m * c->block_n / (a.amd ? 256.0 : 128.0);
  if (pieces < c->num_warps) e *= pieces / c->num_warps;
  double t_mma = 2.0 * c->block_m * c->block_n * c->block_k / (hw->peak_flops[p->dtype] / cu * e);
  double l2_sm = kp[COST_KP_L2_BYTES_CLK] * clk;
  double t_l2 = tile_bytes / l2_sm;
  /* A scalar-loaded operand (stride not divisible by 16: no cp.async) is
   * not pipelined: each K step of a block issues its loads, waits a full
   * latency (lat_sc for A, lat_sc_b for B), copies them to shared memory
   * and only then runs its MMA, so stages do not help it. That chain
   * overlaps only across resident blocks. Its per-element part does not
   * shrink with more warps: a 4-warp block already has one warp on each SM
   * sub-partition's load/store path. Per SM the scalar elements are also
   * bounded by a load rate (issue for A, issue_b for B). */
  int pipelined = a_tvec && (b_tvec || (sync && b_vec)) && c->num_stages > 1;
  double depth = (double)(c->num_stages - 1 < ksteps ? c->num_stages - 1 : ksteps);
  /* Issue 25, thirty-second round (shipped with the thirty-fifth since the
   * blind check on H100 sets 61-68): a scalar-loaded tile of a problem with
   * K < BK loads only its K real columns (the masked-off elements issue no
   * memory request): at K = 1 `nn` a 64x64x64 tile's A is 64 elements, not
   * 4096 (docs/kernels.md, "Thirty-second round"). */
  double bkk = p->k < c->block_k ? (double)p->k : (double)c->block_k;
  double ea = a_tvec ? 0.0 : (double)c->block_m * bkk;
  double eb = b_tvec ? 0.0 : bkk * c->block_n;
  double eb_w = eb * (b_kmaj ? kp[COST_KP_SC_KB] : 1.0); /* per-element time weight */
  /* A K-major scalar B is contiguous along K, as A is: its K-step chain
   * and load rate are its own (lat_kb, issue_kb, in the N-major B's units;
   * fitted by kernel_awkward --fit on data/measurements/h200-awkward/:
   * 0.69 and the rate's bound, one warp load per clock per SM). */
  double issue_b = kp[COST_KP_ISSUE_B] * (b_kmaj ? kp[COST_KP_ISSUE_KB] : 1.0);
  double lat_b = kp[COST_KP_LAT_SC_B_NS] * (b_kmaj ? kp[COST_KP_LAT_KB] : 1.0);
  double t_issue = (ea / kp[COST_KP_ISSUE] + eb / issue_b) / a.warp / clk;
  double t_lat;
  if (pipelined) {
    t_lat = kp[COST_KP_LAT_NS] / depth * 1e-9 / conc;
  } else if (a_tvec && b_tvec) {
    t_lat = kp[COST_KP_LAT_SC_NS] * 1e-9 / conc;
  } else {
    double lat_sc = fmax(a_tvec ? 0.0 : kp[COST_KP_LAT_SC_NS], b_tvec ? 0.0 : lat_b);
    double per_lane = (ea + eb_w) / (4.0 * a.warp);
    /* A 4-byte B on its way to wgmma is not a global-latency chain: it is
     * copied by cp.async into its stage buffers (the compiler's shared
     * bytes) and transposed through shared memory by the block's warps, a
     * per-SM throughput that more resident blocks do not multiply (tf32 at
     * 2 stages and two blocks per SM measures no faster than at 3 stages
     * and one: h200-dtypes-fit; fit CV 0.906 -> 0.932 top-1). */
    if (b == 4.0 && !a.amd)
      t_lat = (lat_sc * 1e-9 + t_mma) / conc + per_lane * kp[COST_KP_SC_ELEM_NS] * 1e-9;
    else {
      /* 16-bit: only the resident blocks that leave sc_l1_kb of the SM's
       * unified L1 / shared memory as L1 overlap their chains (eighth
       * round, kernel_space.c; fp8's register-staged B is not fitted). */
      double cc = conc;
      if (kp[COST_KP_SC_L1_KB] > 0.0 && b == 2.0) {
        double fit = floor((hw->smem_per_unit - kp[COST_KP_SC_L1_KB] * 1024.0) /
                           (out->smem + a.smem_reserved));
        cc = fmax(1.0, fmin(conc, fit));
      }
      /* thirteenth round (measured, not kept): the L1 lines (128 B) a block's
       * scalar-loaded tiles span per K step, rows x lines per row, a
       * 2-byte-aligned run of L bytes spanning (L - 2) / 128 + 1 of them */
      double sc_lines = kp[COST_KP_SC_LINES], sc_ref = kp[COST_KP_SC_REFETCH], fp = 0.0;
      if ((sc_lines > 0.0 || sc_ref > 0.0) && b == 2.0 && !a.amd) {
        if (!a_tvec)
          fp += at ? c->block_k * ((c->block_m * b - 2.0) / 128.0 + 1.0)
                   : c->block_m * ((c->block_k * b - 2.0) / 128.0 + 1.0);
        if (!b_tvec)
          fp += bt ? c->block_n * ((c->block_k * b - 2.0) / 128.0 + 1.0)
                   : c->block_k * ((c->block_n * b - 2.0) / 128.0 + 1.0);
        fp *= 128.0;
      }
      /* form A (sc_lines): only the resident blocks whose shared memory
       * plus sc_lines x those lines fit the SM's budget overlap */
      if (sc_lines > 0.0 && fp > 0.0) {
        double fit = floor(hw->smem_per_unit / (out->smem + a.smem_reserved + sc_lines * fp));
        cc = fmax(1.0, fmin(cc, fit));
      }
      /* form B (sc_refetch; thirteenth round, measured, not kept: shipped
       * 0 = off): when the
       * running blocks' scalar lines exceed the L1 the carveout leaves
       * (Hopper: 256 KiB of L1 + shared memory per SM, the carveout sized
       * to the occ resident blocks), lines are evicted before use and
       * re-read: the chain's latency and per-element part (not its MMA)
       * slow by sc_refetch x lines in flight / L1 left */
      double rf = 1.0;
      if (sc_ref > 0.0 && fp > 0.0) {
        double l1 = fmax(4096.0, hw->smem_per_unit + 28672.0 - occ * (out->smem + a.smem_reserved));
        rf = fmax(1.0, sc_ref * conc * fp / l1);
      }
      t_lat = ((lat_sc + per_lane * kp[COST_KP_SC_ELEM_NS]) * 1e-9 * rf + t_mma) / cc;
    }
  }
  double q = kp[COST_KP_SMOOTH];
  double t_step = pow(pow(t_mma, q) + pow(t_l2, q) + pow(t_lat, q) + pow(t_issue, q), 1.0 / q);

  double budget = kp[COST_KP_REG_BUDGET] * cap / 255.0;
  double over = r > budget ? r - budget : 0.0;
  out->spill = 1.0 + kp[COST_KP_SPILL] * (b_kmaj ? kp[COST_KP_SPILL_KB] : 1.0) * over * over;
  t_step *= out->spill;

  /* split-K programs store fp32 partial tiles (sk_epi: their cost against
   * the C store's) */
  double ep_bytes = s > 1 ? 4.0 * kp[COST_KP_SK_EPI] : out_bytes(p->dtype);
  double t_epi = kp[COST_KP_EPI] * (double)c->block_m * c->block_n * ep_bytes / l2_sm;
  /* C's row stride N not a multiple of 16 (16-bit kernels): no vectorized
   * store can be proven aligned, so every accumulator element (or fp32
   * split-K partial) is stored by its own instruction: BM x BN / warp warp
   * store instructions per tile at epi_sc per clock per SM (tenth round) */
  if (kp[COST_KP_EPI_SC] > 0.0 && b == 2.0 && p->n % 16 != 0)
    t_epi += (double)c->block_m * c->block_n / a.warp / (kp[COST_KP_EPI_SC] * clk);
  /* and a one-step tile's fixed cost overlaps the resident blocks' as its
   * latency chain does (with no main loop nothing orders them) */
  double t_fix = kp[COST_KP_TILE_NS] * 1e-9 / (ksteps == 1 ? conc : 1.0);
  double t_tile = (double)ksteps * t_step + t_fix + t_epi;
  double t_sm = (double)per_sm * t_tile;
  double bytes = dram_bytes(hw, p, c, cu * occ, b);
  if (s > 1) bytes += (double)p->m * p->n * (4.0 * s - out_bytes(p->dtype));
  double t_dram = bytes / (hw->hbm_bw * kp[COST_KP_DRAM_EFF]);
  /* N < BN: the kernel's offs_bn % N aims every column of a B tile at the
   * N real ones, so the whole grid re-reads a few L2 lines; those requests
   * (BK x BN per K step per tile) pass at N x alias_clk bytes per clock for
   * the GPU (N distinct columns spread them over L2 lines; fitted on the
   * awkward sweeps, where N = 1 logit GEMMs carry it). */
  double alias = p->n < c->block_n ? b_bytes : 0.0;
  t_dram = fmax(t_dram, alias * (double)out->tiles * s * (double)ksteps /
                            (kp[COST_KP_ALIAS_CLK] * clk * (double)p->n));
  out->dram_bytes = bytes;
  out->t_sm_ms = t_sm * 1e3;
  out->t_dram_ms = t_dram * 1e3;
  double dq = kp[COST_KP_DRAM_Q];
  double t_body = dq > 0.0 ? pow(pow(t_sm, dq) + pow(t_dram, dq), 1.0 / dq) : fmax(t_sm, t_dram);
  out->ms = (t_body + kp[COST_KP_LAUNCH_US] * 1e-6 + splitk_reduce_s(hw, kp, p, s)) * 1e3;
  /* the awkward-sweep residual of this tile shape (kernel_family.c) */
  if (kp[COST_KP_AWK_FAM] > 0.0)
    out->ms *= exp(-kp[COST_KP_AWK_FAM] * cost_kawk_log_factor(hw, p, c));
  /* and the awkward sweeps' relative residual at every K (thirtieth round) */
  if (kp[COST_KP_AWK_REL] > 0.0)
    out->ms *= exp(-kp[COST_KP_AWK_REL] * cost_kawkrel_log_factor(hw, p, c));
  out->feasible = 1;
  return 0;
}

int cost_kernel_predict(const cost_hw *hw, const cost_kproblem *p, const cost_kcfg *c,
                        cost_kpred *out) {
  double kp[COST_KP__COUNT];
  int nfam, rc;
  const cost_kfamily *fam = cost_kfamily_builtin(hw, &nfam);
  cost_kparams_resolve(hw, kp);
  if ((rc = cost_kernel_predict_p(hw, kp, p, c, out)) || !out->feasible) return rc;
  out->family = cost_kfamily_factor(fam, nfam, p, c);
  out->ms *= out->family;
  return 0;
}
