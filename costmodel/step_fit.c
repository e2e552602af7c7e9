/* step_fit.c: the framework profile's parameters, their defaults and
 * bounds, and their fit to whole-step measurements.
 *
 * Fit (what cdplan calibrate does with a dlrm_step.json): the time
 * parameters minimise sum log(pred/meas)^2 over the samples'
 * step_ms, and over their GPU busy time where a profiler measured it (the
 * runner's "profile": it tells the GPU's share from the host's), by Levenberg-Marquardt in
 * log-parameter space with projection onto the bounds (Nocedal & Wright, Numerical Optimization,
 * 2nd ed., ch. 10), numeric Jacobian; the workspace is the mean residual of the peak memory (a
 * constant, so least squares has it in closed form). Only parameters the samples inform are moved:
 * the index-sort cost only when a sample has a dot interaction in eager mode, and so on.
 * Leave-one-out errors are reported beside the in-sample ones so that the fit's honesty can be
 * judged.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "costmodel/step_int.h"

typedef struct {
  const char *name;
  double def, lo, hi;
} sp_def;

/* Defaults (docs/step-model.md, "Framework profile"):
 *  eager_op_us: host time of one eager PyTorch op -- Python, the dispatcher
 *    (autocast, autograd recording) and cudaLaunchKernel -- is ~5-10 us
 *    (H. He, "Making Deep Learning Go Brrrr From First Principles", 2022;
 *    PyTorch 2.0 release notes motivating torch.compile).
 *  sparse_update_ns: coalescing an uncoalesced sparse gradient is a radix
 *    sort of its int64 indices (~8 passes) plus a segment reduction: ~2 ns
 *    per index at H100-class bandwidth.
 *  index_sort_ns: index_put_(accumulate=True) sorts the linearised indices
 *    with their positions (cub radix sort of 64-bit pairs, ~4 passes): ~0.3
 *    ns per element.
 *  workspace_mb: cuBLAS/cuBLASLt workspaces (32 MiB on Hopper in PyTorch)
 *    and the caching allocator's rounding: 64 MiB.
 *  fused_op_us: a TorchRec/FBGEMM op is still dispatched from Python.
 *  host_gather_ns: one random row access in host DRAM by a CPU thread (the
 *    EmbeddingBag gather, the SGD row update): ~120 ns, loaded DRAM latency
 *    plus a TLB miss on a multi-GB table; divided over host_threads.
 *  host_copy_gbps: pageable cudaMemcpy (the pooled rows to the GPU, their
 *    gradient back), staged by the driver through pinned buffers: ~10 GB/s.
 *  host_mem_gbps: the CPU sparse backward writes lookups x dim values into
 *    fresh buffers (index_select, AccumulateGrad's clone); first-touch page
 *    faults bound it near ~5 GB/s.
 *  host_threads: intra-op threads (torch.get_num_threads(): the cores).
 *  host_llc_mb: the CPU's last-level cache; rows and buffers of a step's
 *    host work that fit in it are not re-fetched from DRAM.
 *  host_fixed_us: host time per step that no op's dispatch explains: the
 *    training loop's Python, zero_grad, the autograd engine's start, the
 *    optimizers' step() bookkeeping. data/measurements/h200-probe/
 *    step_tables.json (host-bound steps with 1 to 64 tables) puts the
 *    intercept ~3 ms above what per-op dispatch gives; default 1 ms.
 *  overlap_p: the step is the p-norm (costmodel_int.h cost_pnorm) of host
 *    and GPU time, a soft maximum: host-heavy and GPU-heavy stretches of a
 *    step do not overlap perfectly (torch.profiler: the GPU idles 0.5-3.5
 *    ms per step where it is the bottleneck, h200-probe). p -> infinity is
 *    the hard max; the shared H200 steps fit p = 64 (the bound), the lent
 *    machine's 2.8. Default 16.
 *  uvm_read_eff, uvm_update_eff: host-mapped (uvm) tables move every row a
 *    lookup touches over the host link (hw->host_link_bw, datasheet PCIe
 *    figure per direction). A PCIe 5.0 read completion of 128-256 bytes
 *    carries ~20-30 bytes of TLP framing, header and DLLP traffic (PCI-SIG
 *    PCIe Base Specification 5.0, TLP format), and sizable DMA copies reach
 *    ~0.8-0.9 of the raw rate; single-row random reads lose more to
 *    request round trips: default 0.7. The update reads each unique row and
 *    writes it back: default 0.5. Both are fitted from the runner's
 *    uvm_embedding_bag microbenchmark (cost_uvm_fit), not from steps.
 *  uvm_reach_mb, uvm_walk_ns: random reads from a host-mapped table slow
 *    down once the table outgrows the address translation's reach: on the
 *    lent H200, ids confined to the first 2M rows of a 16M-row table read
 *    at the full rate while ids over all of it read at half, whatever the
 *    order the buffers were pinned in (data/measurements/h200-uvm/
 *    uvm_diag_*.json). A row then costs max(link time, miss * walk_ns) with
 *    miss = 1 - reach / table bytes: ~20-30 ns and ~1 GB there, and it
 *    moves between leases of the same machine kind (the translation is
 *    the host's IOMMU as much as the GPU's), so it is fitted with the link
 *    efficiencies by cost_uvm_fit. Defaults: that order of magnitude.
 *  uvm_sync_us: torch.unique (the uvm backward's dedup) returns a size the
 *    host must read, so each uvm table's backward synchronizes (one
 *    cudaStreamSynchronize per table in uvm_steps.json's profiles); the GPU
 *    then runs at the host's dispatch pace until it is ahead again: 0.35-0.5
 *    ms of GPU idle per table in the GPU-bound steps there. Fitted by
 *    cost_step_fit from steps with uvm tables; default 300 us.
 *  flash_eff_fwd, flash_eff_bwd: FlashAttention-2 (what PyTorch's SDPA runs
 *    for bf16/fp16 on Hopper) reaches ~35-40% of the H100's dense bf16 peak
 *    forward and ~30% backward at head dim 128 (J. Shah et al.,
 *    "FlashAttention-3", arXiv:2407.08608, Fig. 5-7: FA2 ~330-370 TFLOP/s
 *    forward, ~280-310 backward of 989); T. Dao, "FlashAttention-2",
 *    arXiv:2307.08691: 50-73% on A100, whose peak it was tuned for.
 *    Defaults 0.40 and 0.30.
 *  flash_block_fwd/bwd, flash_hd0: FlashAttention works in 128 x 128 tiles
 *    (a query block against a key block); each query block also loads Q,
 *    rescales and writes O (forward) or reduces dQ (backward) outside its
 *    tiles, and each tile's softmax, masking and rescaling do not grow with
 *    the head dim. Datasheet defaults 0 (the bare FLOP count).
 *    All five are fitted by cost_flash_fit on timings of the kernel alone
 *    (data/measurements/h200-transformer/attention_fit.json), never on
 *    whole steps.
 *  copy_eff, bcast_eff, softmax_1k, softmax_2k: what eager PyTorch's
 *    elementwise kernels reach, as fractions of the HBM bandwidth, read off
 *    the fitting half's torch.profiler tops (data/measurements/
 *    h200-transformer/eager_rates.py over steps_profile_fit.json; the check
 *    half was never profiled). copy_eff: contiguous vectorized kernels
 *    (a clone, a scalar multiply: 4.31 TB/s of 4.8). bcast_eff: a
 *    TensorIterator whose operands broadcast (masked_fill_ with an s x s
 *    mask over b x a x s x s scores) is not vectorized and computes every
 *    element's offsets (aten/src/ATen/native/cuda/CUDALoops.cuh:
 *    gpu_kernel_impl_nocast -> elementwise_kernel with an
 *    OffsetCalculator): 1.46 TB/s. softmax_1k/2k: rows of at most 2048
 *    elements (8 KiB) go to the persistent softmax, one warp per row held in
 *    registers (aten/src/ATen/native/cuda/PersistentSoftmax.cuh,
 *    softmax_warp_forward): 1.90 TB/s at 1024, 1.43 TB/s at 2048 (64
 *    elements per thread: low occupancy).
 *  ckpt_host_mult: with torch.utils.checkpoint (use_reentrant=False) the
 *    recompute of each block runs in Python inside the backward, when the
 *    autograd engine first unpacks one of its saved tensors, and every saved
 *    tensor of a checkpointed block passes through Python pack/unpack hooks
 *    (PyTorch docs, torch.utils.checkpoint; saved_tensors_hooks): the host
 *    cannot run ahead of the GPU through the backward. Small steps with
 *    full recompute ran at ~3.7x the plain per-op dispatch time (ll17, ll18
 *    of data/measurements/h200-transformer-llama): the multiplier of the
 *    step's forward-backward host time, fitted on the fitting halves' full-
 *    recompute cases only (h200-transformer-llama/fit_ckpt_host.py: 3.73).
 *    Not profiled yet: a hypothesis with one fitted number.
 *  coalesce_sync_us, coalesce_ns: eager Adagrad, row-wise Adagrad and Adam
 *    coalesce each table's sparse gradient first, and coalesce reads the
 *    unique count back to the host (torch.profiler: 5 cudaStreamSynchronize
 *    per table, none with SGD; data/measurements/h100-dcn-mlperf/
 *    dcn_profile.json), so the optimizer phase starts after the forward and
 *    backward (step_dlrm.c, sync_opt), its host and GPU time serial
 *    between the syncs (step.c, step_finish), and each table adds the
 *    host's wait and the GPU's restart
 *    after its syncs (coalesce_sync_us) and the merge sort and segment
 *    reduction of its lookups (coalesce_ns per lookup; CUB merge sort
 *    kernels and coalesceValuesKernel in the same profile). Both fitted by
 *    least squares on log step time over the fitting half of the 18 H100
 *    MLPerf-shaped DCN steps only (fit_overlap.py there, form F0: 230 us,
 *    2.45 ns with the serial phase; 375 us, 2.65 ns with the overlapping
 *    phase shipped 2026-12-05 22:15 to 2026-12-06 04:00 UTC); the check
 *    half scores them. Measured on one lent H100 host, a slow one: the same
 *    fitted step ran 1.4x faster on the host of profile5.json, so a
 *    recipe's host_op_us (the runner's probe or a mini step) scales
 *    coalesce_sync_us (host_scale).
 *  fused_tbe_ns: the runner's Triton TBE (validate/gpu/fused_tbe.py) is
 *    one program per bag in the forward, walking its lookups one dependent
 *    load (index, then row) at a time, and one program per sorted lookup in
 *    the backward: latency, not bandwidth, sets its pace, which the byte
 *    count prices as if it streamed. GPU time per lookup on top of it,
 *    fitted on the H100 fused-TBE bench's B = 16384 rows only
 *    (data/measurements/h100-fused-tbe/tbe.json: 5.90 / 5.95 ms measured,
 *    3.18 / 3.19 ms priced, 3.51M lookups: 0.78 ns); its B = 65536 rows
 *    check it. FBGEMM's TBE (torchrec_fbgemm) does not get this term. */
static const sp_def sp_table[COST_SP__COUNT] = {
    [COST_SP_EAGER_OP_US] = {"step_eager_op_us", 8.0, 1.0, 50.0},
    [COST_SP_SPARSE_UPD_NS] = {"step_sparse_update_ns", 2.0, 0.05, 100.0},
    [COST_SP_INDEX_SORT_NS] = {"step_index_sort_ns", 0.3, 0.01, 20.0},
    [COST_SP_WORKSPACE_MB] = {"step_workspace_mb", 64.0, 0.0, 8192.0},
    [COST_SP_FUSED_OP_US] = {"step_fused_op_us", 8.0, 1.0, 50.0},
    [COST_SP_HOST_GATHER_NS] = {"step_host_gather_ns", 120.0, 1.0, 10000.0},
    [COST_SP_HOST_COPY_GBPS] = {"step_host_copy_gbps", 10.0, 0.1, 200.0},
    [COST_SP_HOST_MEM_GBPS] = {"step_host_mem_gbps", 5.0, 0.1, 500.0},
    [COST_SP_HOST_THREADS] = {"step_host_threads", 16.0, 1.0, 1024.0},
    [COST_SP_HOST_LLC_MB] = {"step_host_llc_mb", 32.0, 0.0, 65536.0},
    [COST_SP_STEP_HOST_US] = {"step_host_fixed_us", 1000.0, 1.0, 100000.0},
    [COST_SP_OVERLAP_P] = {"step_overlap_p", 16.0, 1.0, 64.0},
    [COST_SP_UVM_READ_EFF] = {"step_uvm_read_eff", 0.7, 0.05, 1.0},
    [COST_SP_UVM_UPDATE_EFF] = {"step_uvm_update_eff", 0.5, 0.05, 1.0},
    [COST_SP_UVM_REACH_MB] = {"step_uvm_reach_mb", 1024.0, 1.0, 1e6},
    [COST_SP_UVM_WALK_NS] = {"step_uvm_walk_ns", 20.0, 0.0, 1000.0},
    [COST_SP_UVM_SYNC_US] = {"step_uvm_sync_us", 300.0, 0.0, 20000.0},
    [COST_SP_FLASH_EFF_F] = {"step_flash_eff_fwd", 0.40, 0.05, 1.0},
    [COST_SP_FLASH_EFF_B] = {"step_flash_eff_bwd", 0.30, 0.05, 1.0},
    [COST_SP_FLASH_BLOCK_F] = {"step_flash_block_fwd", 0.0, 0.0, 16.0},
    [COST_SP_FLASH_BLOCK_B] = {"step_flash_block_bwd", 0.0, 0.0, 16.0},
    [COST_SP_FLASH_HD0] = {"step_flash_hd0", 0.0, 0.0, 256.0},
    [COST_SP_COPY_EFF] = {"step_copy_eff", 0.898, 0.3, 1.0},
    [COST_SP_BCAST_EFF] = {"step_bcast_eff", 0.304, 0.05, 1.0},
    [COST_SP_SOFTMAX_1K] = {"step_softmax_1k", 0.395, 0.05, 1.0},
    [COST_SP_SOFTMAX_2K] = {"step_softmax_2k", 0.298, 0.05, 1.0},
    [COST_SP_CKPT_HOST] = {"step_ckpt_host_mult", 3.73, 1.0, 20.0},
    [COST_SP_DLRM_GPU_SCALE] = {"step_dlrm_gpu_scale", 1.0, 0.5, 2.5},
    [COST_SP_UVM_LINK_SCALE] = {"step_uvm_link_scale", 1.0, 0.5, 4.0},
    [COST_SP_FP8_CAST_B] = {"step_fp8_cast_bytes", 2.5, 0.0, 64.0},
    [COST_SP_COALESCE_SYNC_US] = {"step_coalesce_sync_us", 230.0, 0.0, 20000.0},
    [COST_SP_COALESCE_NS] = {"step_coalesce_ns", 2.45, 0.0, 100.0},
    [COST_SP_FUSED_TBE_NS] = {"step_fused_tbe_ns", 0.78, 0.0, 100.0},
    [COST_SP_HOST_OP_US] = {"step_host_op_us", 0.0, 0.0, 1000.0},
};

int cost_step_param_info(int id, const char **name, double *def, double *lo, double *hi) {
  if (id < 0 || id >= COST_SP__COUNT) return COST_EINVAL;
  if (name) *name = sp_table[id].name;
  if (def) *def = sp_table[id].def;
  if (lo) *lo = sp_table[id].lo;
  if (hi) *hi = sp_table[id].hi;
  return 0;
}

void step_profile_resolve(const cost_hw *hw, double *prof) {
  for (int i = 0; i < COST_SP__COUNT; i++) prof[i] = sp_table[i].def;
  int n = hw->calib.n < 0 ? 0 : (hw->calib.n > COST_MAX_CALIB ? COST_MAX_CALIB : hw->calib.n);
  for (int k = 0; k < n; k++)
    for (int i = 0; i < COST_SP__COUNT; i++)
      if (!strcmp(hw->calib.names[k], sp_table[i].name) && isfinite(hw->calib.values[k]))
        prof[i] = fmin(sp_table[i].hi, fmax(sp_table[i].lo, hw->calib.values[k]));
}

double cost_step_param_value(const cost_hw *hw, int id) {
  double prof[COST_SP__COUNT];
  if (!hw || id < 0 || id >= COST_SP__COUNT) return NAN;
  step_profile_resolve(hw, prof);
  return prof[id];
}

/* ---- fit ------------------------------------------------------------------ */

#define MAXP 5
static const int time_ids[MAXP] = {COST_SP_EAGER_OP_US, COST_SP_SPARSE_UPD_NS,
                                   COST_SP_INDEX_SORT_NS, COST_SP_STEP_HOST_US, COST_SP_OVERLAP_P};
/* host-placed tables: in the order they are added as samples allow */
static const int host_ids[3] = {COST_SP_HOST_MEM_GBPS, COST_SP_HOST_COPY_GBPS,
                                COST_SP_HOST_GATHER_NS};

typedef struct {
  const cost_hw *hw;
  const cost_step_sample *s;
  size_t n;
  long skip;  /* sample left out, -1 none */
  int subset; /* 0 all samples, 1 DLRM without host or uvm tables, 2 host tables, 3 uvm,
                 4 transformers */
} fit_ctx;

/* Does the sample place any table at `place` (a cost_placement)? */
static int sample_places(const cost_step_sample *s, int place) {
  if (s->w.kind != COST_WL_DLRM) return 0;
  for (size_t t = 0; t < s->w.dlrm.n_tables; t++) {
    int pc = s->w.dlrm.tables[t].placement;
    if ((pc >= 0 ? pc : s->r.placement) == place) return 1;
  }
  return 0;
}

int cost_step_sample_host(const cost_step_sample *s) { return sample_places(s, COST_PLACE_HOST); }

/* 1 plain, 2 host-placed tables, 3 uvm tables (and no host ones) */
static int group_of(const cost_step_sample *s) {
  if (s->w.kind == COST_WL_TRANSFORMER) return 4;
  return cost_step_sample_host(s) ? 2 : sample_places(s, COST_PLACE_UVM) ? 3 : 1;
}

static int in_subset(const fit_ctx *c, size_t i) {
  if ((long)i == c->skip || !(c->s[i].step_ms > 0)) return 0;
  return c->subset == 0 || c->subset == group_of(&c->s[i]);
}

static int pred(const fit_ctx *c, const double *prof, size_t i, cost_step_result *out) {
  return cost_step_p(c->hw, prof, &c->s[i].w, &c->s[i].r, out);
}

/* residuals log(pred/meas) of the used samples; returns the sum of squares */
static double residuals(const fit_ctx *c, const double *prof, double *res) {
  double ss = 0;
  size_t k = 0;
  for (size_t i = 0; i < c->n; i++) {
    cost_step_result r;
    if (!in_subset(c, i)) continue;
    int bad = pred(c, prof, i, &r) != 0 || !(r.step_ms > 0);
    double e = bad ? 5.0 : log(r.step_ms / c->s[i].step_ms);
    res[k++] = e;
    ss += e * e;
    /* the GPU's share, where a profile measured it; not with host-placed
     * tables, whose pageable copies the profiler counts as GPU time */
    if (c->s[i].gpu_busy_ms > 0 && !cost_step_sample_host(&c->s[i])) {
      e = bad || !(r.gpu_ms > 0) ? 5.0 : log(r.gpu_ms / c->s[i].gpu_busy_ms);
      res[k++] = e;
      ss += e * e;
    }
  }
  return ss;
}

static void set_x(double *prof, const int *ids, int np, const double *x) {
  for (int j = 0; j < np; j++) prof[ids[j]] = exp(x[j]);
}

/* Solve the np x np system A d = g (np <= MAXP) by Gaussian elimination. */
static int solve(double A[MAXP][MAXP], double *g, int np, double *d) {
  for (int i = 0; i < np; i++) {
    int piv = i;
    for (int r = i + 1; r < np; r++)
      if (fabs(A[r][i]) > fabs(A[piv][i])) piv = r;
    if (fabs(A[piv][i]) < 1e-300) return -1;
    for (int k = 0; k < np; k++) {
      double t = A[i][k];
      A[i][k] = A[piv][k];
      A[piv][k] = t;
    }
    double t = g[i];
    g[i] = g[piv];
    g[piv] = t;
    for (int r = i + 1; r < np; r++) {
      double f = A[r][i] / A[i][i];
      for (int k = i; k < np; k++) A[r][k] -= f * A[i][k];
      g[r] -= f * g[i];
    }
  }
  for (int i = np - 1; i >= 0; i--) {
    double s = g[i];
    for (int k = i + 1; k < np; k++) s -= A[i][k] * d[k];
    d[i] = s / A[i][i];
  }
  return 0;
}

static void fit_time(const fit_ctx *c, double *prof, const int *ids, int np, size_t m) {
  double x[MAXP], lo[MAXP], hi[MAXP], lambda = 1e-2;
  double *r0 = calloc(m, sizeof *r0), *J = calloc(m * MAXP, sizeof *J), *r1 = calloc(m, sizeof *r1);
  if (!r0 || !J || !r1) goto done;
  for (int j = 0; j < np; j++) {
    x[j] = log(prof[ids[j]]);
    lo[j] = log(sp_table[ids[j]].lo);
    hi[j] = log(sp_table[ids[j]].hi);
  }
  double ss = residuals(c, prof, r0);
  for (int it = 0; it < 60; it++) {
    for (int j = 0; j < np; j++) {
      double save = x[j], h = 1e-4;
      x[j] += h;
      set_x(prof, ids, np, x);
      residuals(c, prof, r1);
      for (size_t i = 0; i < m; i++) J[i * MAXP + j] = (r1[i] - r0[i]) / h;
      x[j] = save;
    }
    set_x(prof, ids, np, x);
    double A[MAXP][MAXP] = {{0}}, g[MAXP] = {0}, d[MAXP], xn[MAXP];
    for (size_t i = 0; i < m; i++)
      for (int j = 0; j < np; j++) {
        g[j] -= J[i * MAXP + j] * r0[i];
        for (int k = 0; k < np; k++) A[j][k] += J[i * MAXP + j] * J[i * MAXP + k];
      }
    int improved = 0;
    for (int tries = 0; tries < 8 && !improved; tries++) {
      double Al[MAXP][MAXP], gl[MAXP];
      for (int j = 0; j < np; j++) {
        for (int k = 0; k < np; k++) Al[j][k] = A[j][k];
        Al[j][j] += lambda * (A[j][j] + 1e-9);
        gl[j] = g[j];
      }
      if (solve(Al, gl, np, d)) break;
      for (int j = 0; j < np; j++) xn[j] = fmin(hi[j], fmax(lo[j], x[j] + d[j]));
      set_x(prof, ids, np, xn);
      double ssn = residuals(c, prof, r1);
      if (ssn < ss) {
        improved = 1;
        ss = ssn;
        memcpy(x, xn, sizeof x);
        memcpy(r0, r1, m * sizeof *r0);
        lambda = fmax(lambda / 4, 1e-7);
      } else {
        lambda *= 8;
      }
    }
    set_x(prof, ids, np, x);
    if (!improved) break;
  }
done:
  free(r0), free(J), free(r1);
}

/* workspace = mean of (measured - predicted without workspace) */
static void fit_workspace(const fit_ctx *c, double *prof) {
  double sum = 0;
  int k = 0;
  double save = prof[COST_SP_WORKSPACE_MB];
  prof[COST_SP_WORKSPACE_MB] = 0;
  for (size_t i = 0; i < c->n; i++) {
    cost_step_result r;
    if ((long)i == c->skip || !(c->s[i].peak_bytes > 0) || pred(c, prof, i, &r)) continue;
    sum += c->s[i].peak_bytes - r.peak_memory_bytes;
    k++;
  }
  double mb = k ? sum / k / 1048576.0 : save;
  prof[COST_SP_WORKSPACE_MB] =
      fmin(sp_table[COST_SP_WORKSPACE_MB].hi, fmax(sp_table[COST_SP_WORKSPACE_MB].lo, mb));
}

/* The eager-framework parameters are fitted on the samples without
 * host-placed tables, then the host path's on those with them (the former
 * held): each group informs its own terms, and a handful of host cases
 * cannot drag the op time away from what the GPU-resident cases say. */
static void fit_all(const fit_ctx *c, double *prof, int *fitted) {
  int ids[MAXP], np = 0, any_dot = 0, any_eager = 0, any_mem = 0, nh = 0;
  size_t m = 0, mh = 0, mu = 0;
  for (size_t i = 0; i < c->n; i++) {
    if ((long)i == c->skip) continue;
    const cost_step_sample *s = &c->s[i];
    if (s->peak_bytes > 0) any_mem = 1;
    int nres =
        s->step_ms > 0 ? 1 + (s->gpu_busy_ms > 0 && !cost_step_sample_host(s)) : 0; /* residuals */
    if (nres && group_of(s) == 4) continue; /* transformers inform no profile term here */
    if (nres && group_of(s) != 1) {
      *(group_of(s) == 2 ? &mh : &mu) += nres;
      continue;
    }
    m += nres;
    if (s->r.framework == COST_FW_PYTORCH_EAGER && s->w.kind == COST_WL_DLRM) {
      any_eager = 1;
      any_dot |= s->w.dlrm.interaction == COST_INTER_DOT;
    }
  }
  if (any_eager && m >= 3) {
    ids[np++] = time_ids[0];
    ids[np++] = time_ids[1];
    if (any_dot && m >= 4) ids[np++] = time_ids[2];
    if (m >= 6) ids[np++] = time_ids[3];
    if (m >= 8) ids[np++] = time_ids[4];
  }
  fit_ctx ch = *c, cd = *c, cu = *c;
  cd.subset = 1;
  ch.subset = 2;
  cu.subset = 3;
  if (np) fit_time(&cd, prof, ids, np, m);
  nh = mh >= 3 ? 3 : (int)mh;
  if (nh) fit_time(&ch, prof, host_ids, nh, mh);
  /* uvm tables: the exposed host time of their synchronizing backward (the
   * link and translation terms come from cost_uvm_fit's microbenchmark) */
  static const int uvm_ids[1] = {COST_SP_UVM_SYNC_US};
  if (mu >= 2) fit_time(&cu, prof, uvm_ids, 1, mu);
  if (any_mem) fit_workspace(c, prof);
  if (fitted) {
    for (int j = 0; j < np; j++) fitted[ids[j]] = 1;
    for (int j = 0; j < nh; j++) fitted[host_ids[j]] = 1;
    if (any_mem) fitted[COST_SP_WORKSPACE_MB] = 1;
    if (mu >= 2) fitted[COST_SP_UVM_SYNC_US] = 1;
  }
}

static int cmp_d(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return a < b ? -1 : a > b;
}
double step_median(double *v, int n) {
  if (n <= 0) return NAN;
  qsort(v, (size_t)n, sizeof *v, cmp_d);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* median and max |pred/meas-1| of step (which=0) or memory (1) */
static void errors(const fit_ctx *c, const double *prof, int which, double *med, double *mx) {
  double *e = calloc(c->n + 1, sizeof *e);
  int k = 0;
  *med = *mx = NAN;
  if (!e) return;
  for (size_t i = 0; i < c->n; i++) {
    cost_step_result r;
    double meas = which ? c->s[i].peak_bytes : c->s[i].step_ms;
    if (!(meas > 0) || pred(c, prof, i, &r)) continue;
    e[k++] = fabs((which ? r.peak_memory_bytes : r.step_ms) / meas - 1.0);
  }
  if (k) {
    *mx = 0;
    for (int i = 0; i < k; i++) *mx = fmax(*mx, e[i]);
    *med = step_median(e, k);
  }
  free(e);
}

int cost_step_fit(const cost_hw *hw, const cost_step_sample *s, size_t n, cost_calib *calib,
                  cost_step_fit_report *rep) {
  double def[COST_SP__COUNT], prof[COST_SP__COUNT];
  int fitted[COST_SP__COUNT] = {0};
  fit_ctx c = {.hw = hw, .s = s, .n = n, .skip = -1};
  size_t used = 0;
  if (!hw || !s || !calib) return COST_EINVAL;
  for (int i = 0; i < COST_SP__COUNT; i++) def[i] = sp_table[i].def;
  /* the uvm link and translation terms come from their own fit
   * (cost_uvm_fit, microbenchmarks): taken from hw->calib as they are */
  static const int inherit[4] = {COST_SP_UVM_READ_EFF, COST_SP_UVM_UPDATE_EFF, COST_SP_UVM_REACH_MB,
                                 COST_SP_UVM_WALK_NS};
  step_profile_resolve(hw, prof);
  for (int j = 0; j < 4; j++) def[inherit[j]] = prof[inherit[j]];
  for (size_t i = 0; i < n; i++) {
    cost_step_result r;
    if (s[i].step_ms > 0 && pred(&c, def, i, &r) == 0) used++;
  }
  if (!used) return COST_EINVAL;
  memcpy(prof, def, sizeof prof);
  fit_all(&c, prof, fitted);
  if (rep) {
    memset(rep, 0, sizeof *rep);
    rep->n = (int)used;
    errors(&c, def, 0, &rep->median_step_err_before, &rep->max_step_err_before);
    errors(&c, prof, 0, &rep->median_step_err, &rep->max_step_err);
    errors(&c, prof, 1, &rep->median_mem_err, &rep->max_mem_err);
    /* leave-one-out: refit without sample i, predict i */
    double *es = calloc(n + 1, sizeof *es), *em = calloc(n + 1, sizeof *em);
    int ks = 0, km = 0;
    rep->max_step_err_loo = rep->max_mem_err_loo = 0;
    for (size_t i = 0; es && em && i < n && n > 2; i++) {
      double pl[COST_SP__COUNT];
      cost_step_result r;
      fit_ctx cl = c;
      cl.skip = (long)i;
      memcpy(pl, def, sizeof pl);
      fit_all(&cl, pl, NULL);
      if (pred(&c, pl, i, &r)) continue;
      if (s[i].step_ms > 0) es[ks++] = fabs(r.step_ms / s[i].step_ms - 1);
      if (s[i].peak_bytes > 0) em[km++] = fabs(r.peak_memory_bytes / s[i].peak_bytes - 1);
    }
    for (int i = 0; i < ks; i++) rep->max_step_err_loo = fmax(rep->max_step_err_loo, es[i]);
    for (int i = 0; i < km; i++) rep->max_mem_err_loo = fmax(rep->max_mem_err_loo, em[i]);
    rep->median_step_err_loo = step_median(es, ks);
    rep->median_mem_err_loo = step_median(em, km);
    free(es), free(em);
    memcpy(rep->values, prof, sizeof prof);
    memcpy(rep->fitted, fitted, sizeof fitted);
  }
  for (int i = 0; i < COST_SP__COUNT; i++) {
    if (!fitted[i]) continue;
    int rc = cost_calib_set(calib, sp_table[i].name, prof[i]);
    if (rc) return rc;
  }
  return 0;
}
