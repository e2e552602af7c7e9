/* costmodel internals: the parameter table (ids, names, datasheet
 * defaults, bounds), the resolved parameter vector the op functions read,
 * and small helpers shared by the model files. Not for use outside
 * costmodel/.
 *
 * Invariant: cost_param_ids and the table in params.c list the same
 * parameters in the same order; cost_calibrate writes calib names in that
 * order, so resolving a calibration is one strcmp per entry.
 */
#ifndef CDPLAN_COSTMODEL_INT_H
#define CDPLAN_COSTMODEL_INT_H

#include <string.h>

#include "costmodel/costmodel.h"

typedef enum {
  P_LAUNCH_US = 0, /* kernel launch-to-completion floor seen by CUDA events */
  P_EFF_FP64,      /* large aligned GEMM throughput / dense peak, per dtype */
  P_EFF_FP32,
  P_EFF_TF32,
  P_EFF_BF16,
  P_EFF_FP16,
  P_EFF_FP8,
  P_EFF_INT8,
  P_GEMM_MEM_EFF,     /* HBM fraction a GEMM's operand stream reaches */
  P_TILE_FILL_US,     /* per-wave pipeline fill + epilogue latency */
  P_UNALIGNED_EPC,    /* elements/clk/SM loaded by the non-16B-aligned path */
  P_KSTEP_NS,         /* floor per 128-byte main-loop step (pipeline latency / stages) */
  P_WG1_EFF,          /* MMA efficiency of a CTA with one consumer warpgroup (BM = 64) */
  P_EPI_DRAIN,        /* exposed fraction of the last wave's C stores (epilogue drain) */
  P_EFF_TF32_SYNC,    /* tf32 mma.sync (Ampere-style kernel) throughput / dense peak */
  P_STREAM_EFF,       /* HBM fraction of streaming elementwise kernels */
  P_MEM_OVERLAP_P,    /* memory-bound kernels: p of the p-norm joining DRAM and issue time */
  P_EW_ALU_SCALE,     /* scale on the per-element instruction counts */
  P_DRAM_LAT_NS,      /* loaded DRAM access latency */
  P_GATHER_ILP,       /* independent row loads in flight per warp (unrolled loop) */
  P_GATHER_REQ_GPS,   /* random row requests the memory system serves, G/s */
  P_EMB_BAG_LAT,      /* dependent DRAM latencies per bag (offsets, index, store) */
  P_SPARSE_NS_IDX,    /* sparse-gradient backward GPU cost per looked-up index */
  P_SPARSE_FIXED_US,  /* host time to issue the fwd + sparse-bwd kernel chain */
  P_SPARSE_OVERLAP_P, /* p of the p-norm joining that host time and the GPU time */
  P_COLL_BUS_EFF,     /* NCCL bus bandwidth / link peak */
  P_COLL_ALPHA_NODE_US,
  P_COLL_ALPHA_CLUSTER_US,
  P_COLL_NET_EFF,  /* achieved / peak per-GPU NIC bandwidth in collectives */
  P_COLL_NVLS_EFF, /* achieved / peak link bandwidth of in-switch (NVLS) all-reduce */
  P__COUNT
} cost_param_id;

#if P__COUNT > COST_MAX_CALIB
#error "more model parameters than cost_calib holds"
#endif

typedef struct {
  const char *name;
  double lo, hi;
} cost_param_def;

extern const cost_param_def cost_param_table[P__COUNT];

/* Datasheet default of parameter id for hw (some depend on the hardware). */
double cost_param_default(const cost_hw *hw, int id);

/* The efficiency parameter (P_EFF_*) a GEMM of dtype dt runs at: fp8 and
 * narrower share the low-precision MMA path. */
int cost_gemm_eff_param(int dt);
/* 1 where the architecture's persistent GEMM kernels hide the per-tile
 * fill behind the next tile (Blackwell TMEM double-buffering, gemm_arch.c):
 * the fill is paid once per CTA, not once per wave. */
int cost_gemm_fill_once(const cost_hw *hw);
/* A GEMM kernel's output tile (rows x columns of C one CTA computes). */
typedef struct {
  int bm, bn;
} cost_tile;
/* The architecture's own tensor-core tile list where its library's is
 * known to differ from the CUTLASS sm90 one gemm.c defaults to (CDNA:
 * hipBLASLt macro tiles, gemm_arch.c); NULL otherwise. *n gets its length. */
const cost_tile *cost_gemm_arch_tiles(const cost_hw *hw, int *n);
/* 1 where the library's persistent scheduler balances a partial last wave
 * over all units (stream-K on NVIDIA Hopper/Blackwell); 0 where a grid of
 * w waves costs ceil(w) tile times (CDNA, gemm_arch.c). */
int cost_gemm_tail_balanced(const cost_hw *hw);
/* cost_params_resolve (costmodel.h) fills p[P__COUNT] in this order. */

/* Soft maximum of two non-negative times: the p-norm (a^p + b^p)^(1/p).
 * p -> inf is max(a, b) (perfect overlap), p = 1 the sum (none). It keeps
 * a gradient for both terms, which the calibration needs. */
double cost_pnorm(double a, double b, double p);

/* Helpers shared by the model files. */
void cost_result_clear(cost_result *r);
void cost_term_add(cost_result *r, const char *name, double value);
/* Fill ms/bound/flops/bytes/achieved rates from seconds. */
void cost_result_finish(cost_result *r, double seconds, int bound, double flops, double bytes);

/* Ops evaluated with an explicit parameter vector (the calibration's inner
 * loop; the public functions resolve hw->calib and call these). */
int cost_gemm_p(const cost_hw *hw, const double *p, const cost_gemm_op *op, cost_result *out);
int cost_elementwise_p(const cost_hw *hw, const double *p, const cost_elementwise_op *op,
                       cost_result *out);
int cost_embedding_p(const cost_hw *hw, const double *p, const cost_embedding_op *op,
                     cost_result *out);
/* cost_collective_p: public (costmodel.h). */
int cost_sample_predict_p(const cost_hw *hw, const double *p, const cost_sample *s,
                          cost_result *out);

#endif
