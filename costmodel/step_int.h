/* costmodel/step internals: the accumulator a step's kernels are added to,
 * and the helpers the step_*.c files share. Not for use outside costmodel/.
 *
 * Timeline model (docs/step-model.md): the host dispatches every op of the
 * step; the GPU runs them in order. Where nothing synchronizes, the host
 * runs ahead and a phase takes max(host, GPU). The eager sparse optimizer
 * synchronizes (coalesce needs the unique count on the host), so its phase
 * is serial: host + GPU.
 */
#ifndef CDPLAN_COSTMODEL_STEP_INT_H
#define CDPLAN_COSTMODEL_STEP_INT_H

#include "costmodel/costmodel_int.h"
#include "costmodel/step.h"

enum { PH_FB = 0, PH_OPT = 1, PH__COUNT };

/* Host time of a step captured as one CUDA graph: one cudaGraphLaunch
 * (a few us: NVIDIA technical blog "Constant Time Launch for Straight-Line
 * CUDA Graphs and Other Performance Enhancements", 2024) plus the C++
 * loop around it; an order of magnitude, not fitted: MLPerf steps are
 * 1.4-3.8 ms of GPU work, which it never approaches. */
#define STEP_GRAPH_US 20.0

typedef struct {
  const cost_hw *hw;
  const double *prof; /* profile vector, COST_SP__COUNT */
  double p[P__COUNT]; /* op-model parameters (hw->calib resolved once) */
  double bw;          /* streaming bytes/s: hbm_bw * stream_eff */
  double launch_s;    /* per-kernel GPU floor (a kernel timed alone) */
  double gap_s;       /* per-kernel GPU time of tiny kernels queued back to back */
  double op_s;        /* host time per op of the framework */
  double triton_s;    /* fused_triton: host time per Triton launch (0: op_s) */
  double host_scale;  /* the recipe's measured op time over the profile's (1: none given) */
  cost_step_result *r;
  double gpu[PH__COUNT], host[PH__COUNT]; /* seconds */
  double comm_exposed;                    /* seconds on the critical path */
  double host_ws;     /* bytes the host-placed tables' CPU work touches per step */
  double host_serial; /* seconds of host-placed tables' CPU work, serial with the GPU */
  int sync_opt;       /* optimizer phase is serial */
  double lead_host,
      lead_gpu;     /* fused_triton: host and GPU seconds before the interaction (step_fused.c) */
  int graph;        /* the step is one captured CUDA graph (HugeCTR) */
  double gpu_scale; /* step_add's kernel-time factor (DLRM: step_dlrm_gpu_scale; else 1) */
  int err;          /* first op-model error */
  /* cost_step_gemms: where the priced GEMMs go (NULL: not recorded), named
   * by tag (set by step_tag) and the pass given to step_gemm_as */
  cost_step_gemm *gemms;
  size_t gemm_cap, n_gemms;
  char tag[24];
} step_acc;

void step_acc_init(step_acc *a, const cost_hw *hw, const double *prof, int framework,
                   cost_step_result *r);
/* Add GPU time (seconds) of n kernels of a class to a component and phase;
 * host_ops framework ops are dispatched for them. */
void step_add(step_acc *a, int kclass, int comp, int phase, double s, int64_t kernels,
              int64_t host_ops);
/* A collective: full time into its class, the exposed part onto the
 * critical path. */
void step_comm(step_acc *a, int kclass, double s, double exposed_s, int64_t kernels);
/* Host-only time (dispatch the GPU can run ahead of), seconds. */
void step_host(step_acc *a, int phase, double s);
/* Host-placed tables' CPU work: serial with the GPU (the pageable copies of
 * the pooled rows gate the interaction; the gradient's copy back waits for
 * the GPU's backward), seconds. */
void step_host_serial(step_acc *a, double s);

/* Seconds of a GEMM / a streaming kernel of `bytes` / a collective. */
double step_gemm(step_acc *a, int64_t m, int64_t n, int64_t k, int64_t batch, int dtype,
                 const char *layout);
/* The same, listed for cost_step_gemms as "TAG PASS" (pass may be NULL). */
double step_gemm_as(step_acc *a, const char *pass, int64_t m, int64_t n, int64_t k, int64_t batch,
                    int dtype, const char *layout);
/* List a GEMM priced some other way (a roofline), seconds s of one call. */
void step_gemm_list(step_acc *a, const char *pass, const cost_gemm_op *g, double s, double flops,
                    double bytes, int bound);
/* Name the GEMMs priced next ("bottom[%d]", "qkv"). */
void step_tag(step_acc *a, const char *fmt, ...);
double step_stream(step_acc *a, double bytes);
double step_coll(step_acc *a, int kind, double bytes, int64_t ranks, int64_t gpus_per_node);

/* Combine the phases into step_ms, the components and shares. */
void step_finish(step_acc *a);

/* Round x up to a multiple of m (m <= 1: x). */
int64_t step_pad(int64_t x, int64_t m);

int step_dlrm(step_acc *a, const cost_dlrm *d, const cost_recipe *r);

/* FSDP of a transformer (step_fsdp.c): one stage's weights sharded over dg
 * ranks, gdp of them per scale-up domain. */
typedef struct {
  double layer_params;   /* one layer's parameters on this rank's TP shard */
  double root_params;    /* the embedding and output layer's, likewise */
  int64_t layers;        /* layers of this pipeline stage */
  int64_t micro_batches; /* per step */
  int64_t dg, gdp;
  double fwd_s, bwd_s; /* one layer's forward / backward (with recompute) per micro-batch */
  double head_b_s;     /* the output layer's and the loss's backward per micro-batch */
  int framework, precision;
} step_fsdp_in;
/* Price the per-micro-batch gathers and reduce-scatters into a. */
void step_fsdp(step_acc *a, const step_fsdp_in *in);
/* Bytes of gathered weights alive at once; *grad_bytes (may be NULL) the
 * unsharded gradient buffers. */
double step_fsdp_buffers(const step_fsdp_in *in, double *grad_bytes);
/* fused_triton's per-table views, zero fills and casts (step_fused.c) */
void step_fused_glue(step_acc *a, const cost_recipe *r, int64_t B, double n_tables, double sum_dim);
/* fused_triton's forward lead-in: the host's ops before the interaction and
 * its per-step serial time, against the GPU's work there (step_fused.c) */
void step_fused_lead(step_acc *a, const cost_recipe *r, int64_t n_bottom, double n_tables,
                     double gpu_s);
int step_transformer(step_acc *a, const cost_transformer *t, const cost_recipe *r);

/* Median of v[0..n) (sorts v in place); NAN when n <= 0. */
double step_median(double *v, int n);

/* Resolve the profile vector from hw->calib (defaults elsewhere). */
void step_profile_resolve(const cost_hw *hw, double *prof);

#endif
