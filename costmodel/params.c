/* params.c: the model's parameters. Each has a physical meaning, bounds
 * the fit must respect, and a "datasheet only" default chosen from
 * hardware facts and published typical figures -- never fitted to the
 * shared measurements (docs/model.md lists the sources again).
 *
 * Resolution: hw->calib names are matched against this table; the fast
 * path expects them in table order (what cost_calibrate writes), any other
 * order still works through a name search.
 */
#include <math.h>

#include "costmodel/costmodel_int.h"

const cost_param_def cost_param_table[P__COUNT] = {
    [P_LAUNCH_US] = {"launch_us", 0.5, 20.0},
    [P_EFF_FP64] = {"gemm_eff_fp64", 0.2, 1.0},
    [P_EFF_FP32] = {"gemm_eff_fp32", 0.2, 1.0},
    [P_EFF_TF32] = {"gemm_eff_tf32", 0.2, 1.0},
    [P_EFF_BF16] = {"gemm_eff_bf16", 0.2, 1.0},
    [P_EFF_FP16] = {"gemm_eff_fp16", 0.2, 1.0},
    [P_EFF_FP8] = {"gemm_eff_fp8", 0.2, 1.0},
    [P_EFF_INT8] = {"gemm_eff_int8", 0.2, 1.0},
    [P_GEMM_MEM_EFF] = {"gemm_mem_eff", 0.3, 1.0},
    [P_TILE_FILL_US] = {"tile_fill_us", 0.0, 5.0},
    [P_UNALIGNED_EPC] = {"unaligned_elems_per_clk", 0.5, 32.0},
    [P_KSTEP_NS] = {"kstep_ns", 5.0, 500.0},
    [P_WG1_EFF] = {"gemm_wg1_eff", 0.3, 1.0},
    [P_EPI_DRAIN] = {"gemm_epilogue_drain", 0.05, 1.0},
    [P_EFF_TF32_SYNC] = {"gemm_eff_tf32_mma_sync", 0.2, 1.0},
    [P_STREAM_EFF] = {"stream_eff", 0.4, 1.0},
    [P_MEM_OVERLAP_P] = {"mem_overlap_p", 1.0, 16.0},
    [P_EW_ALU_SCALE] = {"ew_alu_scale", 0.25, 4.0},
    [P_DRAM_LAT_NS] = {"dram_latency_ns", 200.0, 2000.0},
    [P_GATHER_ILP] = {"gather_ilp", 1.0, 8.0},
    [P_GATHER_REQ_GPS] = {"gather_req_gps", 5.0, 200.0},
    [P_EMB_BAG_LAT] = {"emb_bag_latencies", 1.0, 8.0},
    [P_SPARSE_NS_IDX] = {"sparse_bwd_ns_per_index", 0.02, 5.0},
    [P_SPARSE_FIXED_US] = {"sparse_bwd_host_us", 5.0, 1000.0},
    [P_SPARSE_OVERLAP_P] = {"sparse_bwd_overlap_p", 1.0, 16.0},
    [P_COLL_BUS_EFF] = {"coll_bus_eff", 0.3, 1.0},
    [P_COLL_ALPHA_NODE_US] = {"coll_alpha_node_us", 0.2, 50.0},
    [P_COLL_ALPHA_CLUSTER_US] = {"coll_alpha_cluster_us", 0.5, 100.0},
    [P_COLL_NET_EFF] = {"coll_net_eff", 0.3, 1.0},
    [P_COLL_NVLS_EFF] = {"coll_nvls_eff", 0.3, 1.0},
};

/* Achieved fractions of the scale-up links in NCCL/RCCL collectives, by
 * link technology, fitted on the "fit" rows of
 * data/measurements/published/collectives.json only (bench/
 * published_accuracy prints the fit and scores the "check" rows):
 *   xGMI point-to-point mesh (MI300X, AMD ROCm blog and acceptance docs):
 *     bus 0.71 of the links the ranks use;
 *   NVLink through one NVSwitch tier (8-GPU HGX H100, Azure ND H100 v5):
 *     NVLS all-reduce 0.60 of the link; ring 0.80 (no fit row runs a
 *     ring there: the earlier datasheet-era figure stays);
 *   NVLink through an NVL72's NVLink switch trays (GB200, CoreWeave):
 *     bus 0.72, NVLS 0.42 (refitted 2026-12-05 under the current
 *     protocol and pipelining model on the same 9 CoreWeave GB200 fit
 *     rows: their median error 20.1 % at the 12-03 value 0.36, 11.4 % at
 *     0.42, the minimum of a 0.01 grid;
 *     data/measurements/published/collectives_nvls_refit.txt). */
static double coll_bus_eff(const cost_hw *hw) {
  if (hw && hw->scaleup_mesh) return 0.71;
  if (hw && !strcmp(hw->arch, "blackwell")) return 0.72;
  return 0.80;
}

static double coll_nvls_eff(const cost_hw *hw) {
  return hw && hw->scaleup_domain > 8 ? 0.42 : 0.60;
}

double cost_param_default(const cost_hw *hw, int id) {
  switch (id) {
  /* A null kernel timed with CUDA events costs a few microseconds on
   * current GPUs (NVIDIA, "Getting Started with CUDA Graphs", 2019: 3-5 us
   * launch overhead per kernel); a descriptor that states the floor
   * measured on its own hosts (launch_floor_us, sourced there) has it. */
  case P_LAUNCH_US:
    return hw && hw->launch_floor_us > 0 ? hw->launch_floor_us : 4.0;
  /* Large aligned GEMMs in cuBLAS/CUTLASS reach ~80% of the dense tensor
   * peak on Hopper (NVIDIA CUTLASS 3.x README performance figures; NVIDIA
   * H100 cuBLAS blog, 2023). FP32 without tensor cores (FFMA SIMT
   * kernels) ~75% (CUTLASS SGEMM profiler figures). */
  case P_EFF_FP64:
    return 0.80;
  case P_EFF_FP32:
    return 0.75;
  case P_EFF_TF32:
  case P_EFF_BF16:
  case P_EFF_FP16:
  case P_EFF_FP8:
  case P_EFF_INT8:
    return 0.80;
  /* GEMV-like streaming of a weight matrix: ~80% of HBM peak (NVIDIA
   * Hopper tuning guide: achievable DRAM bandwidth 80-90% of peak). */
  case P_GEMM_MEM_EFF:
    return 0.80;
  /* One DRAM round trip to fill the load pipeline plus the epilogue store:
   * ~1 us (HBM latency ~0.5-0.7 us, Chips and Cheese H100 microbenchmarks). */
  case P_TILE_FILL_US:
    return 1.0;
  /* Without 16-byte aligned leading dimensions cuBLAS cannot use TMA /
   * cp.async.16 and falls back to element-wise global loads staged through
   * registers: 32 LD/ST lanes per SM (Hopper whitepaper SM diagram) and
   * ~8 LSU lane-ops per element (LDG, STS, ldmatrix reads) -> 4/clk/SM. */
  case P_UNALIGNED_EPC:
    return 4.0;
  /* A main-loop step waits on its stage's loads: an L2/DRAM round trip
   * (~250-600 ns, Chips and Cheese H100) spread over a 4-8 stage pipeline
   * (CUTLASS sm90 default stage counts) -> ~60 ns per 128-byte K step. */
  case P_KSTEP_NS:
    return 60.0;
  /* Overlap of compute with memory traffic (and of issue with transfer)
   * is imperfect near balance: both pipelines stall on each other. The
   * p-norm joins the two times; the roofline (Williams, Waterman and
   * Patterson, CACM 2009) is its p = inf limit, a serial sum p = 1. The
   * default p = 4 puts a balanced kernel 19% above the roofline's max: a
   * middle value, not a measured one. */
  case P_MEM_OVERLAP_P:
    return 4.0;
  /* A 64-row CTA has one consumer warpgroup: wgmma latency and the
   * epilogue are not hidden behind a second warpgroup (CUTLASS 3.x
   * "ping-pong" vs "cooperative" kernel schedules need two). ~75%. */
  case P_WG1_EFF:
    return 0.75;
  /* The cooperative sm90 schedule runs its epilogue after the main loop
   * (CUTLASS 3.x kernel schedules; cuBLAS nvjet "coopA" kernels in the
   * data/measurements/h200-probe profiles): the last wave's C stores have
   * no loads or MMAs left to hide behind. Datasheet-only default: all of
   * them exposed (the bound); the fit says how much the write-back L2
   * absorbs. */
  case P_EPI_DRAIN:
    return 1.0;
  /* tf32 Ampere-style kernels (cutlass_80_tensorop_s1688gemm, which
   * data/measurements/h200-probe/gemm_kernels.json shows cuBLAS running
   * for unaligned and small tf32 GEMMs) issue warp-level mma.sync
   * m16n8k8 (PTX ISA), not wgmma. On Hopper the synchronous mma path
   * stays well below the asynchronous wgmma peak (Luo et al.,
   * "Benchmarking and Dissecting the Nvidia Hopper GPU Architecture",
   * arXiv:2402.13499, and its extension arXiv:2501.12084); two thirds of
   * it is a round assumption, not a figure taken from the paper. With the
   * 80% kernel efficiency of the other dtypes: 0.8 * 2/3 ~= 0.55. */
  case P_EFF_TF32_SYNC:
    return 0.55;
  /* STREAM-like kernels reach ~90% of HBM peak (STREAM triad on H100/H200
   * as published by vendors and in the Hopper tuning guide). */
  case P_STREAM_EFF:
    return 0.90;
  case P_EW_ALU_SCALE:
    return 1.0;
  /* Loaded HBM latency ~600 ns (Chips and Cheese, "Nvidia's H100: Funny L2,
   * and Tons of Bandwidth", 2023: ~480 ns unloaded, more under load). */
  case P_DRAM_LAT_NS:
    return 600.0;
  /* The pooling loop of EmbeddingBag_updateOutputKernel_sum_mean has no
   * loop-carried dependence but the running sum; nvcc unrolls such loops
   * by 4 by default (CUDA C Programming Guide, #pragma unroll), but the
   * offset2bag store in the loop body may alias the index loads, so ~2
   * row loads are in flight per warp. */
  case P_GATHER_ILP:
    return 2.0;
  /* Random row requests: HBM3 row activations are limited by tRRD/tFAW
   * per pseudo-channel (JEDEC JESD238 HBM3); with ~100 pseudo-channels at
   * a few hundred M activations/s each -> ~30 G requests/s. */
  case P_GATHER_REQ_GPS:
    return 30.0;
  /* Per bag and 32-feature chunk: offsets load -> index load -> row load
   * are dependent DRAM accesses, then the stores: ~3 latencies. */
  case P_EMB_BAG_LAT:
    return 3.0;
  /* Sparse-gradient backward (PyTorch _embedding_bag_sparse_backward):
   * offset2bag, index_select of gradient rows, sort + unique of indices:
   * ~1 KB of memory traffic per looked-up index at ~3.5 TB/s. */
  case P_SPARSE_NS_IDX:
    return 0.3;
  /* The host issues forward + autograd backward (~15 ops through the
   * Python/autograd dispatcher at ~5-10 us each, PyTorch "Performance
   * Tuning Guide": CPU overhead of small ops) -> ~100 us. */
  case P_SPARSE_FIXED_US:
    return 100.0;
  /* Host issue and GPU execution of that chain overlap almost fully when
   * one dominates; near balance each kernel waits for its launch. p = 8
   * puts a balanced case 9% above the max: a guess near the roofline's
   * hard max, for the fit to move (memops.c). */
  case P_SPARSE_OVERLAP_P:
    return 8.0;
  /* Bus bandwidth (nccl-tests doc/PERFORMANCE.md's definition) over the
   * scale-up links' peak: coll_bus_eff above. */
  case P_COLL_BUS_EFF:
    return coll_bus_eff(hw);
  /* Per-step latency of the NCCL simple/LL protocols: ~2 us over NVLink,
   * ~6 us over InfiniBand with GPUDirect RDMA (NCCL-tests latencies). */
  case P_COLL_ALPHA_NODE_US:
    return 2.0;
  case P_COLL_ALPHA_CLUSTER_US:
    return 6.0;
  /* InfiniBand/RoCE with GPUDirect RDMA: 0.90 of the per-GPU NIC line
   * rate, fitted on the fit rows of
   * data/measurements/published/collectives.json (the multi-node GB200
   * rows; the multi-node check rows score it). */
  case P_COLL_NET_EFF:
    return 0.90;
  /* NVLS all-reduce: each GPU moves n through the switch once: its
   * achieved fraction of the link, coll_nvls_eff above. */
  case P_COLL_NVLS_EFF:
    return coll_nvls_eff(hw);
  default:
    return NAN;
  }
}

static int param_find(const char *name) {
  for (int i = 0; i < P__COUNT; i++)
    if (strcmp(cost_param_table[i].name, name) == 0) return i;
  return -1;
}

void cost_params_resolve(const cost_hw *hw, double *p) {
  for (int i = 0; i < P__COUNT; i++) p[i] = cost_param_default(hw, i);
  const cost_calib *c = &hw->calib;
  int n = c->n < 0 ? 0 : (c->n > COST_MAX_CALIB ? COST_MAX_CALIB : c->n);
  for (int i = 0; i < n; i++) {
    int id = (i < P__COUNT && strcmp(c->names[i], cost_param_table[i].name) == 0)
                 ? i
                 : param_find(c->names[i]);
    if (id < 0 || !isfinite(c->values[i])) continue;
    double v = c->values[i];
    /* Clamp: a stored calibration never drives the model out of bounds. */
    if (v < cost_param_table[id].lo) v = cost_param_table[id].lo;
    if (v > cost_param_table[id].hi) v = cost_param_table[id].hi;
    p[id] = v;
  }
}

double cost_pnorm(double a, double b, double p) {
  double m = a > b ? a : b;
  if (!(m > 0)) return 0;
  double x = a / m, y = b / m;
  return m * pow(pow(x, p) + pow(y, p), 1.0 / p);
}

int cost_param_count(void) { return P__COUNT; }

int cost_param_index(const char *name) { return name ? param_find(name) : -1; }

int cost_param_info(int index, const cost_hw *hw, const char **name, double *def, double *lo,
                    double *hi) {
  if (index < 0 || index >= P__COUNT) return COST_EINVAL;
  if (name) *name = cost_param_table[index].name;
  if (def) *def = cost_param_default(hw, index);
  if (lo) *lo = cost_param_table[index].lo;
  if (hi) *hi = cost_param_table[index].hi;
  return 0;
}

double cost_param_value(const cost_hw *hw, const char *name) {
  int id = cost_param_index(name);
  if (id < 0) return NAN;
  double p[P__COUNT];
  cost_params_resolve(hw, p);
  return p[id];
}
