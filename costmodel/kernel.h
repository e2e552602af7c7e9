/* costmodel/kernel: the time of one Triton-style tiled GEMM kernel for a
 * given tile config on a hardware descriptor, its feasibility, and the
 * ranking of a candidate list -- zero-warmup kernel selection (issue 4).
 *
 * Pure like the rest of costmodel/: no I/O, no globals, no allocation; the
 * caller owns every buffer. The kernel modelled is the one of
 * validate/gpu/triton_matmul.py: C[M,N] = A[M,K] x B[K,N], both row-major,
 * fp32 accumulation, GROUP_M program-id swizzle, masked loads.
 * Formulas, parameters and where they were fitted: docs/kernels.md.
 */
#ifndef CDPLAN_COSTMODEL_KERNEL_H
#define CDPLAN_COSTMODEL_KERNEL_H

#include "costmodel/costmodel.h"

/* One tile config (Triton names: BLOCK_M, BLOCK_N, BLOCK_K, num_warps,
 * num_stages, GROUP_M). num_warps counts the vendor's warps: 32 threads
 * on NVIDIA, 64-thread wavefronts on AMD. */
typedef struct {
  int block_m, block_n, block_k;
  int num_warps, num_stages, group_m;
  /* K split over split_k programs per tile writing fp32 partials, summed by
   * a second kernel (validate/gpu/triton_matmul_sk.py); 0 or 1: none. */
  int split_k;
} cost_kcfg;

/* One GEMM problem: dtype is a cost_dtype (bf16, fp16, fp8, tf32/fp32).
 * layout as cost_gemm_op's: A then B, 'n' row-major A[M,K] / B[K,N], 't'
 * stored transposed (A[K,M], B[N,K]); "" is "nn". */
typedef struct {
  int64_t m, n, k;
  int dtype;
  char layout[3];
} cost_kproblem;

#define COST_KREASON 112

/* The model's answer for one config. For an infeasible config ms is
 * INFINITY and reason names the limit, e.g. "shared memory: 4 stages x
 * 64 KiB = 256 KiB > 227 KiB per block". */
typedef struct {
  cost_kcfg cfg;
  int feasible;
  char reason[COST_KREASON];
  double ms;
  int regs;          /* estimated registers per thread (before the 255 cap) */
  int occupancy;     /* blocks resident per SM/CU */
  double smem;       /* shared memory / LDS bytes per block */
  int64_t tiles;     /* ceil(M/BM) * ceil(N/BN) */
  double waves;      /* tiles / (compute_units * occupancy), not rounded */
  double spill;      /* slowdown factor from register pressure (1 = none) */
  double edge_waste; /* fraction of MMA work in masked (padded) tile parts */
  double family;     /* measured family correction in ms (1 = none; cost_kfamily) */
  double dram_bytes; /* modelled DRAM traffic (operands under the swizzle, C, split-K partials) */
  double t_sm_ms;    /* the SM-side time (tiles x per-tile time), before launch and reduce */
  double t_dram_ms;  /* the DRAM-side time at the model's rate */
} cost_kpred;

/* Limits for config fields (the api validates against these too). */
#define COST_KBLOCK_MIN 16
#define COST_KBLOCK_MAX 256
#define COST_KWARPS_MAX 32
#define COST_KSTAGES_MAX 8
#define COST_KGROUP_MAX 64
#define COST_KSPLIT_MAX 64

/* Predict one config. Returns 0 (out filled, feasible or not), or
 * COST_EINVAL (bad sizes; block sizes, warps, GROUP_M not powers of
 * two in range; stages outside 1..8),
 * COST_EDTYPE (no peak for the dtype), COST_ENOHW (no kernel model for the
 * descriptor's arch, or it lacks compute units, clock, smem or registers). */
int cost_kernel_predict(const cost_hw *hw, const cost_kproblem *p, const cost_kcfg *c,
                        cost_kpred *out);

/* Rank n candidates: out[0..n) gets every prediction, feasible ones first
 * by ascending ms (ties keep input order), infeasible ones after them in
 * input order. *n_feasible (may be NULL) gets their count; out[0] is the
 * chosen config when it is > 0. Same errors as cost_kernel_predict (the
 * first failing candidate's). */
int cost_kernel_rank(const cost_hw *hw, const cost_kproblem *p, const cost_kcfg *cands, int n,
                     cost_kpred *out, int *n_feasible);

#define COST_KSPACE_MAX 512

/* The default candidate space for hw's architecture and dtype (hopper,
 * blackwell, ampere, cdna2, cdna3, cdna4; derived from the descriptor's
 * shared memory and matrix-instruction shapes). Writes up to cap configs;
 * returns their count, or COST_ENOHW for an architecture without a kernel
 * model (e.g. a TPU). */
int cost_kernel_default_space(const cost_hw *hw, int dtype, cost_kcfg *out, int cap);

/* The model's physical parameters (docs/kernels.md). Defaults were fitted
 * on data/measurements/h200/triton_configs.json plus the h200-fit2,
 * h200-fit3 and h200-fit4 sweeps beside it; a descriptor's
 * calibration overrides any of them by name ("kernel_l2_bytes_clk", ...). */
typedef enum {
  COST_KP_E_MMA4 = 0,   /* steady-state tensor-peak fraction, <= 4 warps per block */
  COST_KP_E_MMA8,       /* the same, > 4 warps */
  COST_KP_L2_BYTES_CLK, /* L2 -> SM operand bandwidth, bytes per clock per SM */
  COST_KP_LAT_NS,       /* global load latency a pipelined K step waits for */
  COST_KP_LAT_SC_NS,    /* exposed latency of a K step with a non-pipelined A (or stages 1) */
  COST_KP_ISSUE,        /* scalar-loaded A: warp load instructions per clock per SM */
  COST_KP_TILE_NS,      /* fixed cost per tile (prologue, pointer setup) */
  COST_KP_EPI,          /* epilogue: C store cost relative to the operand feed */
  COST_KP_LAUNCH_US,    /* launch-to-completion floor seen by CUDA events */
  COST_KP_REG_BASE,     /* registers per thread beyond accumulator and operands */
  COST_KP_REG_SCALAR,   /* registers per element of a scalar-loaded operand tile */
  COST_KP_REG_BUDGET,   /* registers per thread above which spilling starts */
  COST_KP_SPILL,        /* slowdown per (register over budget)^2 */
  COST_KP_SMOOTH,       /* exponent of the soft maximum of overlapping limits */
  COST_KP_DRAM_EFF,     /* HBM fraction reached by the operand stream */
  COST_KP_LAT_SC_B_NS,  /* exposed latency of a K step with a non-pipelined B */
  COST_KP_ISSUE_B,      /* scalar-loaded B: warp load instructions per clock per SM */
  COST_KP_SC_ELEM_NS,   /* a block's K-step time per scalar element per 128 lanes */
  COST_KP_SK_US,        /* split-K: the reduce kernel's fixed time after the main one */
  COST_KP_SK_EPI,       /* split-K: fp32 partial-tile store cost relative to epi */
  COST_KP_SMALLM,       /* tensor rate of a tile below the MMA's M rows: BM/mma_m + this */
  COST_KP_REG_SC_KB,    /* registers per element of a K-major scalar B, in reg_scalar units */
  COST_KP_SC_KB,        /* K-step time per element of a K-major scalar B, in sc_elem units */
  COST_KP_SPILL_KB,     /* spill slowdown of a tile with a K-major scalar B, in spill units */
  COST_KP_LAT_KB,       /* exposed K-step latency of a K-major scalar B, in lat_sc_b units */
  COST_KP_ISSUE_KB,     /* warp-load rate of a K-major scalar B, in issue_b units */
  COST_KP_ALIAS_CLK, /* GPU-wide bytes per clock of tile loads aliasing a few rows (N<BN, M<BM) */
  COST_KP_SK_NS,     /* split-K: the reduce kernel's serial loop, ns per partial it reads */
  COST_KP_SC_L1_KB, /* L1 KiB a scalar-load chain needs beside the blocks' shared memory (0: off) */
  COST_KP_EPI_SC,   /* C row stride not a multiple of 16: warp store instructions per clock per SM
                       of the element-by-element C stores (0: off) */
  COST_KP_REG_OCC,  /* registers the compiler allocates per estimated register, for blocks per SM
                       of 2-byte tiles (0: the estimate itself) */
  COST_KP_SC_LINES, /* share of a block's scalar-operand L1 lines (128 B, per K step) that must
                       stay in L1 beside the blocks' shared memory for its chain to overlap
                       (0: off) */
  COST_KP_SC_REFETCH, /* scalar-operand lines in flight per SM over the L1 left: their chains
                         slow by this ratio times that (0: off) */
  COST_KP_AWK_FAM,    /* weight of the awkward-sweep residual per config at K <= 128 (Hopper,
                         16-bit; cost_kawk_log_factor; 0: off) */
  COST_KP_DRAM_Q,     /* q-norm joining the SM-side and DRAM-side times (0 = their max) */
  COST_KP_AWK_REL,    /* weight of the awkward sweeps' relative residual at every K (Hopper,
                         16-bit; cost_kawkrel_log_factor; 0: off) */
  COST_KP__COUNT
} cost_kparam_id;

/* Name, default and bounds of parameter id; COST_EINVAL out of range. */
int cost_kparam_info(int id, const char **name, double *def, double *lo, double *hi);
/* Fill p[COST_KP__COUNT] from the defaults and hw->calib's overrides. */
void cost_kparams_resolve(const cost_hw *hw, double *p);
/* cost_kernel_predict with an explicit parameter vector and no family
 * table correction (for fitting); the awkward residual (COST_KP_AWK_FAM)
 * is in, at the vector's weight. */
int cost_kernel_predict_p(const cost_hw *hw, const double *params, const cost_kproblem *p,
                          const cost_kcfg *c, cost_kpred *out);

/* Family correction: what the analytic terms miss for one config family --
 * a tile shape and warp count, with the operands Triton loads element by
 * element (K resp. N not a multiple of 16) -- as a factor on its predicted
 * time, measured as the weighted mean log residual of that family over a
 * fit set of sweeps (docs/kernels.md, "Family corrections"). It carries the
 * code generation effects the terms do not (which layouts and instruction
 * paths Triton picks for a tile and warp count), so it applies only to the
 * architecture it was measured on. */
typedef struct {
  int elem_bytes; /* operand element size the family was measured with */
  int block_m, block_n, block_k, num_warps;
  int a_scalar, b_scalar; /* A's resp. B's leading dimension not a multiple of 16 (nn: K, N);
                             b_scalar 2: B K-major (layout ?t) and scalar-loaded */
  double log_factor;      /* ln(measured / analytic), shrunk toward 0 */
} cost_kfamily;

/* The built-in table for hw's architecture (hopper: fitted on the H200
 * sweeps; other architectures: none, *n = 0). */
const cost_kfamily *cost_kfamily_builtin(const cost_hw *hw, int *n);
/* The factor of the entry of t[0..n) matching (p, c), the problem's
 * element size included; 1 when none does. */
double cost_kfamily_factor(const cost_kfamily *t, int n, const cost_kproblem *p,
                           const cost_kcfg *c);
/* The awkward-sweep residual (issue 25, nineteenth round): ln(analytic x
 * family / measured) of a 16-bit config on Hopper against the other
 * configs of the same problem, for K <= 128 only (docs/kernels.md,
 * "Nineteenth round"); 0 where none was measured. cost_kernel_predict_p
 * divides its time by exp(w x this). */
double cost_kawk_log_factor(const cost_hw *hw, const cost_kproblem *p, const cost_kcfg *c);
/* Thirtieth round (issue 25): ln(predicted / measured) of config c on
 * problem p relative to the problem's near-best configs, as the awkward
 * sweeps measured it at every K (kernel_family.c hopper_awkrel; Hopper,
 * 16-bit; 0 where no entry matches). */
double cost_kawkrel_log_factor(const cost_hw *hw, const cost_kproblem *p, const cost_kcfg *c);

#endif
