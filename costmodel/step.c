/* step.c: the entry point of the step model, the accumulator the workload
 * files add their kernels to, the timeline that turns kernels into a step
 * time, and the wire names of the step enums.
 *
 * Timeline (docs/step-model.md, "Host and GPU"): each phase takes
 * max(host dispatch, GPU busy + exposed communication) when the host can
 * run ahead, host + GPU when the phase synchronizes (eager sparse
 * optimizer). The "overhead" component is the part of the step in which
 * the GPU idles waiting for the host.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "costmodel/step_int.h"

static int parse_in(const char *const *names, int n, const char *s) {
  if (!s) return -1;
  for (int i = 0; i < n; i++)
    if (!strcmp(names[i], s)) return i;
  return -1;
}
#define NAMES(fn, arr, count)                                                                      \
  int cost_##fn##_parse(const char *s) { return parse_in(arr, count, s); }                         \
  const char *cost_##fn##_name(int v) { return v >= 0 && v < count ? arr[v] : "unknown"; }

static const char *const opt_names[] = {"sgd", "adam", "adagrad", "rowwise_adagrad"};
static const char *const shard_names[] = {"data_parallel", "table_wise", "row_wise", "column_wise",
                                          "table_row_wise"};
static const char *const place_names[] = {"hbm", "host", "uvm"};
static const char *const ckpt_names[] = {"none", "selective", "full"};
static const char *const fw_names[] = {"pytorch_eager", "torchrec_fbgemm", "hugectr", "megatron",
                                       "fused_triton"};
static const char *const dp_names[] = {"ddp", "fsdp"};
static const char *const inter_names[] = {"dot", "dcn", "concat"};
static const char *const attn_names[] = {"flash", "unfused", "fused_softmax"};
static const char *const mlp_names[] = {"gelu", "swiglu"};
static const char *const norm_names[] = {"layernorm", "rmsnorm"};
static const char *const loss_names[] = {"eager", "fused"};
static const char *const pos_names[] = {"learned", "rotary"};
NAMES(optimizer, opt_names, COST_OPT__COUNT)
NAMES(sharding, shard_names, COST_SHARD__COUNT)
NAMES(placement, place_names, COST_PLACE__COUNT)
NAMES(ckpt, ckpt_names, COST_CKPT__COUNT)
NAMES(framework, fw_names, COST_FW__COUNT)
NAMES(dense_parallel, dp_names, COST_DP__COUNT)
NAMES(interaction, inter_names, COST_INTER__COUNT)
NAMES(attention, attn_names, COST_ATTN__COUNT)
NAMES(mlp, mlp_names, COST_MLP__COUNT)
NAMES(norm, norm_names, COST_NORM__COUNT)
NAMES(loss, loss_names, COST_LOSS__COUNT)
NAMES(position, pos_names, COST_POS__COUNT)

static const char *const comp_names[COST_COMP__COUNT] = {"gemm",      "embedding", "communication",
                                                         "optimizer", "other",     "overhead"};
static const char *const mem_names[COST_MEM__COUNT] = {
    "weights", "gradients", "optimizer_state", "activations", "embeddings", "workspace"};
static const char *const kc_names[COST_KC__COUNT] = {
    "gemm_fwd",      "gemm_bwd",         "attention",
    "interaction",   "elementwise",      "embedding_fwd",
    "embedding_bwd", "sparse_optimizer", "dense_optimizer",
    "alltoall",      "allreduce",        "allgather_reducescatter",
    "p2p",           "pipeline_bubble",  "host_dispatch"};
const char *cost_component_name(int c) {
  return c >= 0 && c < COST_COMP__COUNT ? comp_names[c] : "unknown";
}
const char *cost_mem_use_name(int u) {
  return u >= 0 && u < COST_MEM__COUNT ? mem_names[u] : "unknown";
}
const char *cost_kclass_name(int k) {
  return k >= 0 && k < COST_KC__COUNT ? kc_names[k] : "unknown";
}

void cost_recipe_init(cost_recipe *r) {
  memset(r, 0, sizeof *r);
  r->gpus = 1;
  r->batch_per_gpu = 1;
  r->tp = r->pp = 1;
  r->precision = COST_DT_FP32;
  r->embedding_precision = COST_DT_FP32;
}

int64_t step_pad(int64_t x, int64_t m) { return m > 1 ? (x + m - 1) / m * m : x; }

void step_acc_init(step_acc *a, const cost_hw *hw, const double *prof, int framework,
                   cost_step_result *r) {
  memset(a, 0, sizeof *a);
  a->host_scale = 1.0;
  a->hw = hw;
  a->prof = prof;
  a->r = r;
  cost_params_resolve(hw, a->p);
  a->bw = hw->hbm_bw * a->p[P_STREAM_EFF];
  a->launch_s = a->p[P_LAUNCH_US] * 1e-6;
  a->gap_s = 1e-6;
  /* HugeCTR captures the whole iteration in one CUDA graph (the MLPerf
   * submissions' train.py: use_cuda_graph=True; HugeCTR v3.1 release
   * notes, "Holistic CUDA graph - full iteration graph capture to reduce
   * launch latencies"): no op is dispatched from the host in a step. */
  /* the runner's fused_triton step is eager PyTorch but for its embedding
   * kernels (validate/gpu/dlrm_step.py): its ops dispatch as eager's */
  a->op_s = framework == COST_FW_HUGECTR           ? 0.0
            : framework == COST_FW_TORCHREC_FBGEMM ? prof[COST_SP_FUSED_OP_US] * 1e-6
                                                   : prof[COST_SP_EAGER_OP_US] * 1e-6;
  a->graph = framework == COST_FW_HUGECTR;
  a->gpu_scale = 1.0;
}

void step_add(step_acc *a, int kclass, int comp, int phase, double s, int64_t kernels,
              int64_t host_ops) {
  if (!(s >= 0) || !isfinite(s)) s = 0;
  /* The op models' floor is one kernel timed alone with CUDA events
   * (launch_us); queued back to back on a stream, kernels follow each
   * other ~1 us apart (gap_s), so the difference is taken off per kernel. */
  if (kernels > 0 && a->launch_s > a->gap_s)
    s = fmax((double)kernels * a->gap_s, s - (double)kernels * (a->launch_s - a->gap_s));
  s *= a->gpu_scale;
  a->gpu[phase] += s;
  a->host[phase] += (double)host_ops * a->op_s;
  a->r->class_ms[kclass] += s * 1e3;
  a->r->class_kernels[kclass] += kernels;
  a->r->comp_ms[comp] += s * 1e3;
  a->r->kernels += kernels;
}

void step_comm(step_acc *a, int kclass, double s, double exposed_s, int64_t kernels) {
  a->r->class_ms[kclass] += s * 1e3;
  a->r->class_kernels[kclass] += kernels;
  a->r->kernels += kernels;
  a->comm_exposed += fmax(0.0, fmin(s, exposed_s));
  a->host[PH_FB] += (double)kernels * a->op_s;
}

void step_host(step_acc *a, int phase, double s) { a->host[phase] += s; }

void step_host_serial(step_acc *a, double s) {
  if (s > 0 && isfinite(s)) a->host_serial += s;
}

void step_tag(step_acc *a, const char *fmt, ...) {
  va_list ap;
  if (!a->gemms) return;
  va_start(ap, fmt);
  vsnprintf(a->tag, sizeof a->tag, fmt, ap);
  va_end(ap);
}

void step_gemm_list(step_acc *a, const char *pass, const cost_gemm_op *g, double s, double flops,
                    double bytes, int bound) {
  char name[sizeof a->gemms[0].name] = "";
  if (!a->gemms) return;
  snprintf(name, sizeof name, "%s%s%s", a->tag, pass && a->tag[0] ? " " : "", pass ? pass : "");
  for (size_t i = 0; i < a->n_gemms && i < a->gemm_cap; i++) /* once per distinct GEMM */
    if (!strcmp(a->gemms[i].name, name) && !memcmp(&a->gemms[i].op, g, sizeof *g)) return;
  if (a->n_gemms < a->gemm_cap) {
    cost_step_gemm *e = &a->gemms[a->n_gemms];
    memset(e, 0, sizeof *e);
    memcpy(e->name, name, sizeof name);
    e->op = *g;
    e->ms = s * 1e3;
    e->flops = flops;
    e->bytes = bytes;
    e->bound = bound;
  }
  a->n_gemms++;
}

double step_gemm_as(step_acc *a, const char *pass, int64_t m, int64_t n, int64_t k, int64_t batch,
                    int dtype, const char *layout) {
  cost_gemm_op g;
  cost_result res;
  memset(&g, 0, sizeof g); /* padding too: entries are compared bytewise */
  g.m = m, g.n = n, g.k = k, g.batch = batch, g.dtype = dtype;
  memcpy(g.layout, layout, 3);
  if (m <= 0 || n <= 0 || k <= 0) return 0;
  int rc = cost_gemm_p(a->hw, a->p, &g, &res);
  if (rc) {
    if (!a->err) a->err = rc;
    return 0;
  }
  step_gemm_list(a, pass, &g, res.ms * 1e-3, res.flops, res.bytes, res.bound);
  return res.ms * 1e-3;
}

double step_gemm(step_acc *a, int64_t m, int64_t n, int64_t k, int64_t batch, int dtype,
                 const char *layout) {
  return step_gemm_as(a, NULL, m, n, k, batch, dtype, layout);
}

double step_stream(step_acc *a, double bytes) {
  return a->launch_s + (bytes > 0 ? bytes / a->bw : 0);
}

double step_coll(step_acc *a, int kind, double bytes, int64_t ranks, int64_t gpus_per_node) {
  if (ranks <= 1 || bytes <= 0) return 0;
  cost_collective_op c = {.kind = kind, .bytes = bytes, .ranks = ranks};
  int64_t gpn =
      gpus_per_node > 0 ? gpus_per_node : (a->hw->scaleup_domain > 0 ? a->hw->scaleup_domain : 8);
  c.scope = ranks <= gpn ? COST_SCOPE_NODE : COST_SCOPE_CLUSTER;
  c.gpus_per_node = gpn;
  cost_result res;
  int rc = cost_collective_p(a->hw, a->p, &c, &res);
  if (rc) {
    if (!a->err) a->err = rc;
    return 0;
  }
  return res.ms * 1e-3;
}

void step_finish(step_acc *a) {
  cost_step_result *r = a->r;
  double fb_gpu = a->gpu[PH_FB] + a->comm_exposed;
  double t;
  if (a->sync_opt)
    /* The optimizer waits for the forward and backward (its first
     * cudaStreamSynchronize), then each table's coalesce reads its unique
     * count back (5 syncs a table, torch.profiler in data/measurements/
     * h100-dcn-mlperf/profile5.json): a synchronize blocks the host until the
     * stream's earlier work is done (CUDA C++ Programming Guide,
     * "Asynchronous Concurrent Execution"), so between syncs the GPU waits
     * for the host's launches and the host for the GPU's kernels -- the
     * phase is their sum, plus each sync's wait and restart
     * (step_coalesce_sync_us per table, host_serial). The overlapping form
     * (max of the two) fitted the default-host sets slightly better, but
     * with the host measured on its own (each case's mini step at batch 256,
     * data/measurements/dcn-blind7: blind7 9.4 / 22.7 % overlapping, 3.7 /
     * 13.8 % serial) the serial one is what the steps do. */
    t = fmax(a->host[PH_FB], fb_gpu) + a->host[PH_OPT] + a->gpu[PH_OPT];
  else if (a->lead_host > 0) {
    /* fused_triton (step_fused.c): the GPU waits for the host's forward
     * lead-in, then host and GPU overlap on the rest */
    double lg = fmin(a->lead_gpu, fb_gpu + a->gpu[PH_OPT]);
    double lh = fmin(a->lead_host, a->host[PH_FB] + a->host[PH_OPT]);
    t = fmax(lh, lg) + cost_pnorm(a->host[PH_FB] + a->host[PH_OPT] - lh,
                                  fb_gpu + a->gpu[PH_OPT] - lg, a->prof[COST_SP_OVERLAP_P]);
  } else
    t = cost_pnorm(a->host[PH_FB] + a->host[PH_OPT], fb_gpu + a->gpu[PH_OPT],
                   a->prof[COST_SP_OVERLAP_P]);
  t += a->host_serial; /* host-placed tables: the GPU waits for their CPU work */
  r->step_ms = t * 1e3;
  r->gpu_ms = (a->gpu[PH_FB] + a->gpu[PH_OPT]) * 1e3;
  r->host_ms = (a->host[PH_FB] + a->host[PH_OPT] + a->host_serial) * 1e3;
  r->comp_ms[COST_COMP_COMMUNICATION] = a->comm_exposed * 1e3;
  double busy = 0;
  for (int c = 0; c < COST_COMP__COUNT; c++)
    if (c != COST_COMP_OVERHEAD) busy += r->comp_ms[c];
  r->comp_ms[COST_COMP_OVERHEAD] = fmax(0.0, r->step_ms - busy);
  r->class_ms[COST_KC_HOST] = r->host_ms;
}

const char *cost_host_op_source_name(int s) {
  static const char *const n[] = {"default", "calibration", "recipe", "mini_step"};
  return s >= 0 && s <= COST_HOSTOP_MINI ? n[s] : "unknown";
}

/* Host speed per machine (docs/step-model.md, "Host speed per machine"): a
 * recipe's measured host_op_us (the runner's host probe) replaces the
 * profile's per-op time of every framework that dispatches from Python
 * (all but HugeCTR's captured graph), and host_scale (its ratio to the
 * profile's) scales the other host terms: the coalesce syncs' wait and
 * restart, the per-step fixed time -- the same host's waits, wake-ups and
 * Python (data/measurements/h200-dcn-host: with the per-op time alone a fast
 * host's row-wise Adagrad steps stayed 43-70 % slow). triton_launch_us
 * prices fused_triton's two Triton launches. A calibration's step_host_op_us
 * (the machine's probe, stored by cdplan calibrate --host-probe) stands in
 * for a recipe that gives none. The result says which per-op time was used. */
static void step_host_speed(step_acc *a, const double *prof, const cost_recipe *r) {
  int pi = r->framework == COST_FW_TORCHREC_FBGEMM ? COST_SP_FUSED_OP_US : COST_SP_EAGER_OP_US;
  double def = 0;
  cost_step_param_info(pi, NULL, &def, NULL, NULL);
  a->r->host_op_source = prof[pi] != def ? COST_HOSTOP_CALIBRATION : COST_HOSTOP_DEFAULT;
  if (a->graph) {
    a->r->host_op_us = 0;
    return;
  }
  a->host_scale = 1.0;
  /* The recipe's figure first, else the machine's stored in the
   * calibration (cdplan calibrate --host-probe): the same use of it. */
  double m = r->host_op_us > 0 && isfinite(r->host_op_us) ? r->host_op_us : 0;
  /* a recipe's host_op_us beside its mini step is the figure fitted to it
   * (cost_step_host_mini) */
  int src = r->host_mini_step_ms > 0 ? COST_HOSTOP_MINI : COST_HOSTOP_RECIPE;
  if (m <= 0 && prof[COST_SP_HOST_OP_US] > 0 && isfinite(prof[COST_SP_HOST_OP_US])) {
    m = prof[COST_SP_HOST_OP_US];
    src = COST_HOSTOP_CALIBRATION;
    a->r->host_op_probe = 1;
  }
  if (m > 0) {
    if (a->op_s > 0) a->host_scale = m * 1e-6 / a->op_s;
    a->op_s = m * 1e-6;
    a->r->host_op_source = src;
  }
  a->r->host_op_us = a->op_s * 1e6;
  if (r->triton_launch_us > 0 && isfinite(r->triton_launch_us))
    a->triton_s = r->triton_launch_us * 1e-6;
}

/* cost_step_p, the GEMMs it prices listed into g[0..cap) when g is set. */
static int step_run(const cost_hw *hw, const double *prof, const cost_workload *w,
                    const cost_recipe *r, cost_step_result *out, cost_step_gemm *g, size_t cap,
                    size_t *n_g) {
  step_acc a;
  int rc;
  if (!out) return COST_EINVAL;
  memset(out, 0, sizeof *out);
  if (!hw || !w || !r || !prof) return COST_EINVAL;
  if (!(hw->hbm_bw > 0) || hw->compute_units <= 0) return COST_ENOHW;
  if (r->gpus < 1 || r->batch_per_gpu < 1 || r->precision < 0 || r->precision >= COST_DT__COUNT ||
      r->embedding_precision < 0 || r->embedding_precision >= COST_DT__COUNT || r->framework < 0 ||
      r->framework >= COST_FW__COUNT)
    return COST_EINVAL;
  if (!(hw->peak_flops[r->precision] > 0)) return COST_EDTYPE;
  step_acc_init(&a, hw, prof, r->framework, out);
  step_host_speed(&a, prof, r);
  a.gemms = g;
  a.gemm_cap = g ? cap : 0;
  if (w->kind == COST_WL_DLRM)
    rc = step_dlrm(&a, &w->dlrm, r);
  else if (w->kind == COST_WL_TRANSFORMER)
    rc = step_transformer(&a, &w->tf, r);
  else
    rc = COST_EINVAL;
  if (!rc && a.err) rc = a.err;
  if (n_g) *n_g = a.n_gemms;
  if (rc) {
    memset(out, 0, sizeof *out);
    return rc;
  }
  /* the loop around the ops; a captured step is one graph launch from
   * HugeCTR's C++ training loop (STEP_GRAPH_US) */
  step_host(&a, PH_FB,
            a.graph ? STEP_GRAPH_US * 1e-6 : prof[COST_SP_STEP_HOST_US] * 1e-6 * a.host_scale);
  step_finish(&a);
  out->hbm_usable_bytes = hw->hbm_usable_bytes > 0 ? hw->hbm_usable_bytes : hw->hbm_bytes;
  out->peak_memory_bytes = 0;
  for (int u = 0; u < COST_MEM__COUNT; u++) out->peak_memory_bytes += out->mem_bytes[u];
  out->fits = out->peak_memory_bytes <= out->hbm_usable_bytes;
  if (out->step_ms > 0) {
    double per_step = (double)r->gpus * (double)r->batch_per_gpu;
    if (w->kind == COST_WL_TRANSFORMER) {
      int64_t tp = r->tp > 0 ? r->tp : 1, pp = r->pp > 0 ? r->pp : 1, cp = r->cp > 1 ? r->cp : 1;
      per_step = r->global_batch > 0
                     ? (double)r->global_batch
                     : (double)r->batch_per_gpu * (double)(r->gpus / (tp * pp * cp));
      out->tokens_per_s = per_step * (double)w->tf.seq_len / (out->step_ms * 1e-3);
    }
    out->samples_per_s = per_step / (out->step_ms * 1e-3);
  }
  if (out->step_ms > 0 && hw->peak_flops[r->precision] > 0)
    out->mfu = out->model_flops / (out->step_ms * 1e-3) / hw->peak_flops[r->precision];
  return 0;
}

int cost_step_p(const cost_hw *hw, const double *prof, const cost_workload *w, const cost_recipe *r,
                cost_step_result *out) {
  return step_run(hw, prof, w, r, out, NULL, 0, NULL);
}

int cost_step_gemms(const cost_hw *hw, const cost_workload *w, const cost_recipe *r,
                    cost_step_gemm *out, size_t cap, size_t *n) {
  double prof[COST_SP__COUNT];
  cost_step_result res;
  if (n) *n = 0;
  if (!hw || !n || (cap && !out)) return COST_EINVAL;
  step_profile_resolve(hw, prof);
  int rc = step_run(hw, prof, w, r, &res, out, cap, n);
  if (rc) *n = 0;
  return rc;
}

int cost_step(const cost_hw *hw, const cost_workload *w, const cost_recipe *r,
              cost_step_result *out) {
  double prof[COST_SP__COUNT];
  if (!hw) {
    if (out) memset(out, 0, sizeof *out);
    return COST_EINVAL;
  }
  step_profile_resolve(hw, prof);
  return cost_step_p(hw, prof, w, r, out);
}

int cost_step_host_mini(const cost_hw *hw, const cost_workload *w, const cost_recipe *r,
                        double *host_op_us, int *clamped) {
  double prof[COST_SP__COUNT];
  cost_step_result res;
  if (!hw || !w || !r || !host_op_us || !clamped) return COST_EINVAL;
  *host_op_us = 0;
  *clamped = 0;
  double ms = r->host_mini_step_ms;
  if (r->host_mini_batch < 1 || !(ms > 0) || !isfinite(ms)) return COST_EINVAL;
  step_profile_resolve(hw, prof);
  cost_recipe m = *r;
  m.batch_per_gpu = r->host_mini_batch;
  m.host_mini_batch = 0;
  m.host_mini_step_ms = 0;
  double lo = COST_HOST_MINI_LO_US, hi = COST_HOST_MINI_HI_US;
  m.host_op_us = lo;
  int rc = cost_step_p(hw, prof, w, &m, &res);
  if (rc) return rc;
  if (res.host_op_us <= 0) return COST_EINVAL; /* nothing dispatched: no host to fit */
  if (res.step_ms >= ms) {
    *host_op_us = lo;
    *clamped = 1;
    return 0;
  }
  m.host_op_us = hi;
  if ((rc = cost_step_p(hw, prof, w, &m, &res))) return rc;
  if (res.step_ms <= ms) {
    *host_op_us = hi;
    *clamped = 1;
    return 0;
  }
  /* the step rises with the per-op time (every host term scales with it) */
  for (int i = 0; i < 40 && hi - lo > 1e-6; i++) {
    m.host_op_us = 0.5 * (lo + hi);
    if ((rc = cost_step_p(hw, prof, w, &m, &res))) return rc;
    if (res.step_ms < ms)
      lo = m.host_op_us;
    else
      hi = m.host_op_us;
  }
  *host_op_us = 0.5 * (lo + hi);
  return 0;
}
