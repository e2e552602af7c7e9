/* memops.c: memory-bound ops -- elementwise kernels and embedding bags.
 *
 * Elementwise (PyTorch vectorized elementwise / persistent softmax and
 * layer-norm kernels over rows of 1024):
 *   t = launch + pnorm(bytes / (hbm_bw * stream_eff), numel * instr / lane_rate; p)
 * bytes = numel * (reads + writes) * elem_bytes; lane_rate = FP32 lanes x
 * clock = peak_fp32 / 2 (an FMA is 2 FLOPs). The ALU term matters for
 * 2-byte types, where per-byte work doubles (data/measurements/h200/
 * memory_ops.json: bf16 gelu at 2^28 elements reaches only ~3.1 TB/s).
 * The p-norm (costmodel_int.h) is the soft roofline: memory and ALU
 * overlap imperfectly near balance.
 *
 * Embedding bag, sum mode (PyTorch aten/src/ATen/native/cuda/
 * EmbeddingBag.cu, EmbeddingBag_updateOutputKernel_sum_mean: a grid of
 * 1024 blocks of 32 x 8 threads; one warp per (bag, 32-feature chunk),
 * grid-stride over the chunks; per chunk it loads offsets[bag] and
 * offsets[bag+1], then per pooled index input[emb] and the row's 32
 * features, and stores the output):
 *   W = min(1024 * 8, resident warps), items = batch * ceil(dim/32),
 *   passes = ceil(items / W), active = min(items, W),
 *   per pass: bag_lat * dram_latency (offsets -> index -> row -> store)
 *             + pooling * t_it,
 *   t_it = pnorm(dram_latency / ilp,                    latency per warp
 *                active * (1/req_rate + miss * sectors * 32 B / hbm_bw); p)
 *   t_fwd = launch + passes * per_pass.
 * The second p-norm term is the memory system's throughput for random
 * row requests: a fixed cost per request (DRAM row activation, JEDEC
 * HBM3 tRRD/tFAW) plus the 32-byte sectors it moves (CUDA C Programming
 * Guide, device memory accesses). miss = 1 - hit, hit = fraction of
 * lookups to rows already touched (uniform indices: distinct = rows *
 * (1 - exp(-lookups/rows))) while the touched rows fit in L2 (L2 is
 * flushed before each timing).
 * Forward + backward with sparse gradients: the host issues the forward
 * and the autograd backward (PyTorch _embedding_bag_sparse_backward:
 * index_select of gradient rows by offset2bag, a sparse COO gradient of
 * lookups x dim values); the GPU runs behind it, so
 *   t_fwd_bwd = pnorm(host_us, t_fwd + lookups * ns_per_index; p_sparse).
 * memory_ops.json shows the GPU part: fwd_bwd - fwd = 0.61 ns per lookup,
 * whatever dim, dtype or rows, once lookups >= ~5e5. The p-norm, not a
 * hard max: where host and GPU times are alike (batch 2048 x pooling 100:
 * ~0.2 ms each) the kernels wait for their launches and the measured time
 * sits above both (0.21-0.35 ms there). p_sparse (default 8, a near-max
 * guess; fitted 4.2 on memory_ops.json) took the 2-fold CV median of the
 * fwd+bwd class from 16.6 to 15.2 % and the held-out one from 8.9 to 8.3 %.
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
  double body = cost_pnorm(t_mem, t_alu, p[P_MEM_OVERLAP_P]);
  int bound = launch > body ? COST_BOUND_LATENCY
                            : (t_mem >= t_alu ? COST_BOUND_MEMORY : COST_BOUND_COMPUTE);
  cost_result_finish(out, launch + body, bound, n * ew_instr[op->kind], bytes);
  cost_term_add(out, "memory_ms", t_mem * 1e3);
  cost_term_add(out, "alu_ms", t_alu * 1e3);
  cost_term_add(out, "launch_ms", launch * 1e3);
  return 0;
}

static double gather_warps(const cost_hw *hw) {
  /* EmbeddingBag.cu launches 1024 blocks of 8 warps; at 32 registers per
   * thread up to 64 warps/SM are resident (CUDA C Programming Guide,
   * compute capability 9.0), so all 8192 run at once on a large GPU. */
  double w = hw->regs_per_unit > 0 ? hw->regs_per_unit / (32.0 * 32.0) : 64.0;
  if (w > 64) w = 64;
  w *= hw->compute_units;
  return w < 8192.0 ? w : 8192.0;
}

/* Expected 32-byte sectors touched by a span of len bytes whose start is
 * uniform over the multiples of gcd(len, 32): (len + 32 - g) / 32. */
static double span_sectors(double len) {
  int64_t l = (int64_t)len, g = 32;
  if ((double)l != len) return len / 32.0 + 1.0;
  for (int64_t a = l, t; a; t = g % a, g = a, a = t) {
  }
  return ((double)l + 32.0 - (double)g) / 32.0;
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
  double row_bytes = dim * b, row_sectors = span_sectors(row_bytes);

  double distinct = rows * -expm1(-lookups / rows);
  double l2 = hw->l2_bytes > 0 ? hw->l2_bytes : 0;
  double fits = fmin(1.0, l2 / (distinct * row_sectors * 32.0));
  double hit = (1.0 - distinct / lookups) * fits;

  double lat = p[P_DRAM_LAT_NS] * 1e-9;
  double chunks = ceil(dim / 32.0), items = batch * chunks, W = gather_warps(hw);
  double passes = ceil(items / W), active = fmin(items, W);
  /* One warp request = one chunk of a row: row_sectors / chunks sectors. */
  double t_req =
      1.0 / (p[P_GATHER_REQ_GPS] * 1e9) + (1.0 - hit) * (row_sectors / chunks) * 32.0 / hw->hbm_bw;
  double t_it = cost_pnorm(lat / p[P_GATHER_ILP], active * t_req, p[P_MEM_OVERLAP_P]);
  double t_chain = passes * (p[P_EMB_BAG_LAT] * lat + P * t_it);
  double launch = p[P_LAUNCH_US] * 1e-6;
  double t_fwd = launch + t_chain;
  double dram_bytes = lookups * (8.0 + row_sectors * 32.0 * (1.0 - hit)) + batch * row_bytes;
  double total = t_fwd, t_bwd = 0;
  double flops = lookups * dim;
  if (op->pass == COST_EMB_FWD_BWD) {
    double gpu = t_fwd + lookups * p[P_SPARSE_NS_IDX] * 1e-9;
    total = cost_pnorm(p[P_SPARSE_FIXED_US] * 1e-6, gpu, p[P_SPARSE_OVERLAP_P]);
    t_bwd = total - t_fwd;
    dram_bytes += 2.0 * lookups * row_bytes + batch * row_bytes + lookups * 16.0;
  }
  int bound = active * t_req >= lat / p[P_GATHER_ILP] ? COST_BOUND_MEMORY : COST_BOUND_LATENCY;
  cost_result_finish(out, total, bound, flops, dram_bytes);
  cost_term_add(out, "fwd_ms", t_fwd * 1e3);
  cost_term_add(out, "bwd_ms", t_bwd * 1e3);
  cost_term_add(out, "gather_ms", t_chain * 1e3);
  cost_term_add(out, "launch_ms", launch * 1e3);
  cost_term_add(out, "passes", passes);
  cost_term_add(out, "l2_hit_frac", hit);
  cost_term_add(out, "sectors_per_row", row_sectors);
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
