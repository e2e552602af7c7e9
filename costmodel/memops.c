/* memops.c: memory-bound ops -- elementwise kernels and embedding bags.
 *
 * Elementwise (PyTorch vectorized elementwise / persistent softmax and
 * layer-norm kernels over rows of 1024):
 *   t = launch + max(bytes / (hbm_bw * stream_eff), numel * instr / lane_rate)
 * bytes = numel * (reads + writes) * elem_bytes; lane_rate = FP32 lanes x
 * clock = peak_fp32 / 2 (an FMA is 2 FLOPs). The ALU term matters for
 * 2-byte types, where per-byte work doubles (data/measurements/h200/
 * memory_ops.json: bf16 gelu at 2^28 elements reaches only ~3.1 TB/s).
 *
 * Embedding bag, sum mode (PyTorch EmbeddingBag.cu: one warp of 32 lanes
 * per (bag, 32-feature chunk), grid-stride over bags): a latency/ rate
 * model (Little's law, e.g. Hennessy & Patterson 6th ed. ch. 4):
 *   chunks = ceil(dim / 32), items = batch * chunks warp tasks,
 *   slots = resident warps = CUs * regs_per_unit / (32 lanes * 32 regs),
 *   passes = max(1, items / slots), active = min(items, slots),
 *   gather rate G = CUs * inflight / dram_latency * (1 + (l2_gain-1) hit),
 *   per pass: dram_latency * 3 (offsets, first index, output store)
 *             + pooling * max(step_latency * dram_latency, active / G),
 *   t_fwd = launch + max(passes * per_pass, dram_bytes / (hbm_bw*stream_eff)).
 * Rows are fetched in 32-byte sectors (CUDA C Programming Guide, global
 * memory accesses). hit = fraction of lookups to rows already touched
 * (uniform indices: distinct = rows * (1 - exp(-lookups/rows))) while the
 * touched rows fit in L2 (L2 is flushed before each timing).
 * Backward with sparse gradients (PyTorch _embedding_bag_sparse_backward:
 * offset2bag, index_select of grad rows, sort/unique of indices):
 *   t_bwd = sparse_fixed + max(lookups * ns_per_index, value_bytes / bw).
 */
#include <math.h>

#include "costmodel/costmodel_int.h"

/* reads+writes per element, FP32 lane instructions per element (estimated
 * from the kernels' arithmetic: add 1 FADD + address math; gelu erf form
 * ~20 FMA-class ops for erff + scaling; softmax three passes with two
 * expf; layer norm Welford + normalize + affine). */
static const double ew_rw[COST_EW__COUNT] = {3, 2, 2, 2};
static const double ew_instr[COST_EW__COUNT] = {2, 24, 20, 28};

static double lane_rate(const cost_hw *hw) {
  if (hw->peak_flops[COST_DT_FP32] > 0) return hw->peak_flops[COST_DT_FP32] / 2.0;
  return hw->compute_units * 128.0 * hw->clock_hz; /* Hopper/Ampere SM: 128 FP32 lanes */
}

int cost_elementwise_p(const cost_hw *hw, const double *p, const cost_elementwise_op *op,
                       cost_result *out) {
  cost_result_clear(out);
  if (!hw || !op) return COST_EINVAL;
  if (op->kind < 0 || op->kind >= COST_EW__COUNT || op->numel <= 0 ||
      op->numel > ((int64_t)1 << 50) || op->dtype < 0 || op->dtype >= COST_DT__COUNT)
    return COST_EINVAL;
  if (!(hw->hbm_bw > 0) || !(lane_rate(hw) > 0)) return COST_ENOHW;
  double n = (double)op->numel, b = cost_dtype_bytes((cost_dtype)op->dtype);
  double bytes = n * ew_rw[op->kind] * b;
  double t_mem = bytes / (hw->hbm_bw * p[P_STREAM_EFF]);
  double t_alu = n * ew_instr[op->kind] * p[P_EW_ALU_SCALE] / lane_rate(hw);
  double launch = p[P_LAUNCH_US] * 1e-6;
  double body = fmax(t_mem, t_alu);
  int bound = launch > body ? COST_BOUND_LATENCY
                            : (t_mem >= t_alu ? COST_BOUND_MEMORY : COST_BOUND_COMPUTE);
  cost_result_finish(out, launch + body, bound, n * ew_instr[op->kind], bytes);
  cost_term_add(out, "memory_ms", t_mem * 1e3);
  cost_term_add(out, "alu_ms", t_alu * 1e3);
  cost_term_add(out, "launch_ms", launch * 1e3);
  return 0;
}

static double resident_warps(const cost_hw *hw) {
  /* 32 registers per thread is what this simple kernel needs; 64 warps/SM
   * is the CC 9.0 limit (CUDA C Programming Guide, Table 21). */
  double w = hw->regs_per_unit > 0 ? hw->regs_per_unit / (32.0 * 32.0) : 64.0;
  if (w > 64) w = 64;
  return hw->compute_units * w;
}

int cost_embedding_p(const cost_hw *hw, const double *p, const cost_embedding_op *op,
                     cost_result *out) {
  cost_result_clear(out);
  if (!hw || !op) return COST_EINVAL;
  if (op->rows <= 0 || op->dim <= 0 || op->batch <= 0 || op->pooling <= 0 ||
      op->rows > ((int64_t)1 << 40) || op->dim > (1 << 20) || op->batch > ((int64_t)1 << 32) ||
      op->pooling > (1 << 20) || op->dtype < 0 || op->dtype >= COST_DT__COUNT || op->pass < 0 ||
      op->pass >= COST_EMB__COUNT)
    return COST_EINVAL;
  if (!(hw->hbm_bw > 0) || hw->compute_units <= 0) return COST_ENOHW;
  double b = cost_dtype_bytes((cost_dtype)op->dtype);
  double rows = (double)op->rows, dim = (double)op->dim, batch = (double)op->batch;
  double P = (double)op->pooling, lookups = batch * P;
  double row_bytes = dim * b, sector_bytes = 32.0 * ceil(row_bytes / 32.0);

  double distinct = rows * -expm1(-lookups / rows);
  double l2 = hw->l2_bytes > 0 ? hw->l2_bytes : 0;
  double fits = distinct * sector_bytes > 0 ? fmin(1.0, l2 / (distinct * sector_bytes)) : 0;
  double hit = (1.0 - distinct / lookups) * fits;

  double lat = p[P_DRAM_LAT_NS] * 1e-9;
  double chunks = ceil(dim / 32.0), items = batch * chunks, slots = resident_warps(hw);
  double passes = fmax(1.0, items / slots), active = fmin(items, slots);
  double rate = hw->compute_units * p[P_GATHER_INFLIGHT] / lat * (1.0 + (p[P_L2_HIT_GAIN] - 1.0) * hit);
  double step = fmax(p[P_EMB_STEP_LAT] * lat, active / rate);
  double t_chain = passes * (3.0 * lat + P * step);
  double dram_bytes = lookups * (8.0 + sector_bytes * (1.0 - hit)) + batch * row_bytes;
  double bw = hw->hbm_bw * p[P_STREAM_EFF];
  double t_bytes = dram_bytes / bw;
  double launch = p[P_LAUNCH_US] * 1e-6;
  double t_fwd = launch + fmax(t_chain, t_bytes);
  double total = t_fwd, t_bwd = 0;
  double flops = lookups * dim;
  if (op->pass == COST_EMB_FWD_BWD) {
    double value_bytes = 2.0 * lookups * row_bytes + batch * row_bytes;
    t_bwd = p[P_SPARSE_FIXED_US] * 1e-6 + fmax(lookups * p[P_SPARSE_NS_IDX] * 1e-9, value_bytes / bw);
    total += t_bwd;
    dram_bytes += value_bytes + lookups * 16.0;
  }
  int bound = t_bytes >= t_chain ? COST_BOUND_MEMORY : COST_BOUND_LATENCY;
  cost_result_finish(out, total, bound, flops, dram_bytes);
  cost_term_add(out, "fwd_ms", t_fwd * 1e3);
  cost_term_add(out, "bwd_ms", t_bwd * 1e3);
  cost_term_add(out, "gather_ms", t_chain * 1e3);
  cost_term_add(out, "memory_ms", t_bytes * 1e3);
  cost_term_add(out, "launch_ms", launch * 1e3);
  cost_term_add(out, "passes", passes);
  cost_term_add(out, "l2_hit_frac", hit);
  return 0;
}

int cost_elementwise(const cost_hw *hw, const cost_elementwise_op *op, cost_result *out) {
  double p[P__COUNT];
  if (!hw) {
    cost_result_clear(out);
    return COST_EINVAL;
  }
  cost_params_resolve(hw, p);
  return cost_elementwise_p(hw, p, op, out);
}

int cost_embedding_bag(const cost_hw *hw, const cost_embedding_op *op, cost_result *out) {
  double p[P__COUNT];
  if (!hw) {
    cost_result_clear(out);
    return COST_EINVAL;
  }
  cost_params_resolve(hw, p);
  return cost_embedding_p(hw, p, op, out);
}
