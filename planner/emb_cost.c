/* emb_cost.c: the priced option catalogue of one embedding problem.
 *
 * For every table and every sharding x placement option this computes the
 * work one rank does for it per step and the HBM it occupies there
 * (TorchRec's model of sharded EmbeddingBagCollection; the cost of each
 * piece comes from the cost model, costmodel/costmodel.h):
 *  - lookups, forward + backward: cost_embedding_bag(fwd_bwd) on the
 *    shard's rows and dim, over the bags the shard serves: the global batch
 *    B*R for model-parallel shards (inputs are redistributed by all-to-all),
 *    the local batch B for data-parallel replicas;
 *  - communication, priced per byte from cost_collective: pooled outputs
 *    (and their gradients) by all-to-all for TW/CW, reduce-scatter +
 *    all-gather of partial sums for RW (and inside the node for TWRW), the
 *    indices (8 bytes per lookup) by all-to-all, the dense gradient
 *    all-reduce of a replicated (DP) table. Per-byte slopes are taken from
 *    the collective model at 1 GB so that rank loads add up; the latency
 *    terms are one per-rank constant (fixed_ms).
 *  - host placement (fused_uvm_caching): the HBM cache holds cache_ratio of
 *    the rows; with Zipf(1)-skewed ids the hit rate of a cache of c*rows
 *    hottest rows is ln(1 + c*rows) / ln(1 + rows) (the harmonic-number
 *    share of the top rows); misses cross the host link (host_bw) twice
 *    (read forward, write back the update).
 * Memory per shard: rows x dim x dtype bytes, the sparse optimizer's state
 * (row-wise Adagrad: one fp32 per row; Adam: two fp32 per element), the
 * pooled output and its gradient (bags x dim x act_bytes), and for DP the
 * dense gradient of the whole table. Host-placed shards keep only the
 * cache (and the output buffers) in HBM.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/planner_int.h"

/* Index of name in names[0..n), -1 when absent: the wire names' parser. */
static int name_index(const char *const *names, int n, const char *name) {
  for (int i = 0; name && i < n; i++)
    if (!strcmp(name, names[i])) return i;
  return -1;
}

/* One sharding vocabulary: the planner's values are the cost model's, and
 * so are the names (costmodel/step.c's table). */
_Static_assert((int)PLAN_SHARD_DP == (int)COST_SHARD_DATA_PARALLEL &&
                   (int)PLAN_SHARD_TW == (int)COST_SHARD_TABLE_WISE &&
                   (int)PLAN_SHARD_RW == (int)COST_SHARD_ROW_WISE &&
                   (int)PLAN_SHARD_CW == (int)COST_SHARD_COLUMN_WISE &&
                   (int)PLAN_SHARD_TWRW == (int)COST_SHARD_TABLE_ROW_WISE &&
                   (int)PLAN_SHARD__COUNT == (int)COST_SHARD__COUNT,
               "plan_shard and cost_sharding must agree");

const char *plan_shard_name(int s) { return cost_sharding_name(s); }

int plan_shard_parse(const char *name) { return cost_sharding_parse(name); }

const char *plan_place_kernel(int place, int host_mode) {
  static const char *const kern[PLAN_HOST__COUNT] = {"fused_uvm_caching", "cpu", "fused_uvm"};
  if (place != PLAN_PLACE_HOST) return "fused";
  return host_mode >= 0 && host_mode < PLAN_HOST__COUNT ? kern[host_mode] : "unknown";
}

int plan_host_mode_parse(const char *name) {
  static const char *const host_names[PLAN_HOST__COUNT] = {"uvm_caching", "cpu", "uvm"};
  return name_index(host_names, PLAN_HOST__COUNT, name);
}

void emb_fmt_gb(char *buf, size_t size, double bytes) {
  if (bytes >= 10e9)
    snprintf(buf, size, "%.0f GB", bytes / 1e9);
  else
    snprintf(buf, size, "%.1f GB", bytes / 1e9);
}

typedef struct {
  double a2a, rs, node_rs; /* ms per byte */
  double host_bw, cache;
  double B, R, G;
  double eb, ab;
  double gpu_scale; /* step_dlrm_gpu_scale: the step model's whole-step kernel factor */
} prices;

/* Per-byte slope of a collective: (t(2X) - t(X)) / X at X = 1 GB. */
static double slope(const cost_hw *hw, int kind, int64_t ranks, int scope, int64_t gpn) {
  if (ranks <= 1) return 0;
  cost_collective_op op = {
      .kind = kind, .bytes = 1e9, .ranks = ranks, .scope = scope, .gpus_per_node = gpn};
  cost_result a, b;
  if (cost_collective(hw, &op, &a)) return NAN;
  op.bytes = 2e9;
  if (cost_collective(hw, &op, &b)) return NAN;
  return (b.ms - a.ms) / 1e9;
}

/* fwd+bwd lookup time of `lookups` lookups spread over `bags` bags. */
static double lookup_ms(const plan_emb_problem *p, double rows, double dim, double bags,
                        double lookups) {
  cost_embedding_op op = {.dim = (int64_t)dim, .dtype = p->emb_dtype, .pass = COST_EMB_FWD_BWD};
  double pool = lookups / bags;
  op.rows = (int64_t)fmax(1, ceil(rows));
  if (pool >= 1) {
    op.batch = (int64_t)fmax(1, bags);
    op.pooling = (int64_t)fmax(1, llround(pool));
  } else { /* fewer lookups than bags: one lookup per touched bag */
    op.batch = (int64_t)fmax(1, ceil(lookups));
    op.pooling = 1;
  }
  cost_result r;
  if (cost_embedding_bag(&p->hw, &op, &r)) return NAN;
  return r.ms;
}

static double opt_bytes(int sopt, double rows, double dim) {
  if (sopt == PLAN_SOPT_ROWWISE_ADAGRAD) return rows * 4.0;
  if (sopt == PLAN_SOPT_ADAGRAD) return rows * dim * 4.0;
  if (sopt == PLAN_SOPT_ADAM) return rows * dim * 8.0;
  return 0;
}

/* Host placement: extra ms of the misses and the HBM the cache takes. */
static double host_extra_ms(const prices *pr, double rows, double dim, double lookups) {
  double hit = log1p(pr->cache * rows) / log1p(rows);
  double sector = 32.0 * ceil(dim * pr->eb / 32.0);
  return (1.0 - hit) * lookups * sector * 2.0 / pr->host_bw * 1e3;
}

/* Plain PyTorch: the shard's CPU work (host_mode cpu) or its host-mapped
 * GPU work over the host link (uvm) instead of its HBM work, from the step
 * model's paths (costmodel/step.h, cost_step_host_table_ms). */
static double cpu_extra_ms(const plan_emb_problem *p, double rows, double dim, double bags,
                           double lookups) {
  cost_dlrm d = {0};
  cost_recipe r;
  cost_recipe_init(&r);
  r.framework = COST_FW_PYTORCH_EAGER;
  r.embedding_precision = p->emb_dtype;
  d.sparse_optimizer =
      p->sparse_opt >= 0 && p->sparse_opt < COST_OPT__COUNT ? p->sparse_opt : COST_OPT_SGD;
  int64_t b = (int64_t)fmax(1, ceil(bags));
  int64_t pool = (int64_t)fmax(1, llround(lookups / fmax(1, bags)));
  double ms;
  int place = p->host_mode == PLAN_HOST_UVM ? COST_PLACE_UVM : COST_PLACE_HOST;
  if (cost_step_host_table_ms(&p->hw, &d, &r, place, (int64_t)fmax(1, ceil(rows)), (int64_t)dim, b,
                              pool, &ms))
    return NAN;
  return ms;
}

static void price(const emb_inst *in, const prices *pr, const plan_table *t, emb_opt *o) {
  const plan_emb_problem *p = in->p;
  double rows = (double)t->rows, dim = (double)t->dim, P = t->pooling;
  double B = pr->B, R = pr->R, G = pr->G, gb = B * R;
  double sopt = p->sparse_opt;
  double srows = rows, sdim = dim, bags = gb, lookups = gb * P, comm = 0;
  switch (o->shard) {
  case PLAN_SHARD_DP:
    bags = B, lookups = B * P;
    {
      cost_collective_op ar = {.kind = COST_COLL_ALLREDUCE,
                               .bytes = rows * dim * pr->eb,
                               .ranks = in->R,
                               .scope = in->N > 1 ? COST_SCOPE_CLUSTER : COST_SCOPE_NODE,
                               .gpus_per_node = in->G};
      cost_result r;
      comm = cost_collective(&p->hw, &ar, &r) ? NAN : r.ms;
    }
    break;
  case PLAN_SHARD_TW:
    comm = pr->a2a * (gb * dim * pr->ab * 2.0 + lookups * 8.0);
    break;
  case PLAN_SHARD_CW:
    sdim = dim / o->k;
    comm = pr->a2a * (gb * sdim * pr->ab * 2.0 + lookups * 8.0);
    break;
  case PLAN_SHARD_RW:
    srows = rows / R, lookups = gb * P / R;
    comm = pr->rs * gb * dim * pr->ab * 2.0 + pr->a2a * lookups * 8.0;
    break;
  default: /* TWRW */
    srows = rows / G, lookups = gb * P / G;
    comm = pr->node_rs * gb * dim * pr->ab * 2.0 +
           pr->a2a * (gb * dim / G * pr->ab * 2.0 + lookups * 8.0);
    break;
  }
  double table_b = srows * sdim * pr->eb;
  double out_b = bags * sdim * pr->ab * 2.0;
  o->ms = pr->gpu_scale * lookup_ms(p, srows, sdim, bags, lookups) + comm;
  o->host_bytes = 0;
  if (o->place == PLAN_PLACE_HOST) /* the rows and their optimizer state live in host memory */
    o->host_bytes = table_b + opt_bytes((int)sopt, srows, sdim);
  if (o->place == PLAN_PLACE_HOST && p->host_mode != PLAN_HOST_UVM_CACHE) {
    o->ms += cpu_extra_ms(p, srows, sdim, bags, lookups);
    o->bytes = out_b; /* the rows stay in CPU memory */
  } else if (o->place == PLAN_PLACE_HOST) {
    o->ms += host_extra_ms(pr, srows, sdim, lookups);
    o->bytes = pr->cache * table_b + out_b;
  } else {
    o->bytes = table_b + opt_bytes((int)sopt, srows, sdim) + out_b;
    if (o->shard == PLAN_SHARD_DP) o->bytes += table_b; /* dense gradient */
  }
  o->allowed = isfinite(o->ms);
  /* a piece's node holds G pieces of a uniform or node option */
  double node_host = o->host_bytes * (o->kind == EK_ITEM ? 1 : G);
  o->ok = o->allowed && o->bytes <= p->cap_bytes && node_host <= in->host_cap;
}

static int allowed(const plan_emb_problem *p, int shard) {
  return p->shard_mask == 0 || (p->shard_mask >> shard) & 1u;
}

/* The fixed option list: DP, then per placement RW, TW, CW(k=2,4,8..),
 * TWRW. Options that make no sense for the cluster are still listed with
 * ok = 0 so that every table has the same list. */
static int build_list(emb_inst *in, emb_opt *list) {
  const plan_emb_problem *p = in->p;
  int n = 0, cwmax = p->cw_max > 0 ? p->cw_max : 4;
  if (cwmax > PLAN_MAX_CW) cwmax = PLAN_MAX_CW;
  list[n++] = (emb_opt){.shard = PLAN_SHARD_DP,
                        .place = PLAN_PLACE_HBM,
                        .k = 1,
                        .kind = EK_UNIFORM,
                        .ok = in->R > 1 && allowed(p, PLAN_SHARD_DP)};
  for (int pl = 0; pl < PLAN_PLACE__COUNT; pl++) {
    int pok = pl == PLAN_PLACE_HBM || p->allow_host;
    list[n++] = (emb_opt){.shard = PLAN_SHARD_TW,
                          .place = pl,
                          .k = 1,
                          .kind = EK_ITEM,
                          .ok = pok && allowed(p, PLAN_SHARD_TW)};
    list[n++] = (emb_opt){.shard = PLAN_SHARD_RW,
                          .place = pl,
                          .k = 1,
                          .kind = EK_UNIFORM,
                          .ok = pok && in->R > 1 && allowed(p, PLAN_SHARD_RW)};
    for (int k = 2; k <= cwmax; k *= 2)
      list[n++] = (emb_opt){.shard = PLAN_SHARD_CW,
                            .place = pl,
                            .k = k,
                            .kind = EK_ITEM,
                            .ok = pok && in->R > 1 && allowed(p, PLAN_SHARD_CW)};
    list[n++] = (emb_opt){.shard = PLAN_SHARD_TWRW,
                          .place = pl,
                          .k = 1,
                          .kind = EK_NODE,
                          .ok = pok && in->N > 1 && in->G > 1 && allowed(p, PLAN_SHARD_TWRW)};
  }
  return n;
}

static int same_table(const plan_table *a, const plan_table *b) {
  return a->rows == b->rows && a->dim == b->dim && a->pooling == b->pooling;
}

static int cmp_tab(const void *x, const void *y, void *ctx) {
  const plan_table *t = ctx;
  size_t i = *(const size_t *)x, j = *(const size_t *)y;
  const plan_table *a = &t[i], *b = &t[j];
  if (a->rows != b->rows) return a->rows < b->rows ? -1 : 1;
  if (a->dim != b->dim) return a->dim < b->dim ? -1 : 1;
  if (a->pooling != b->pooling) return a->pooling < b->pooling ? -1 : 1;
  return i < j ? -1 : i > j;
}

/* qsort without a context argument: a small merge sort over indices. */
static void sort_idx(size_t *v, size_t *tmp, size_t n, const plan_table *t) {
  if (n < 2) return;
  size_t h = n / 2;
  sort_idx(v, tmp, h, t);
  sort_idx(v + h, tmp, n - h, t);
  size_t i = 0, j = h, k = 0;
  while (i < h && j < n) tmp[k++] = cmp_tab(&v[i], &v[j], (void *)t) <= 0 ? v[i++] : v[j++];
  while (i < h) tmp[k++] = v[i++];
  while (j < n) tmp[k++] = v[j++];
  memcpy(v, tmp, n * sizeof *v);
}

static int classes(emb_inst *in, svc_err *err) {
  size_t n = in->n, *ord = malloc(n * sizeof *ord), *tmp = malloc(n * sizeof *tmp);
  in->cls_of = malloc(n * sizeof *in->cls_of);
  in->cls_rep = malloc(n * sizeof *in->cls_rep);
  in->cls_count = calloc(n, sizeof *in->cls_count);
  if (!ord || !tmp || !in->cls_of || !in->cls_rep || !in->cls_count) {
    free(ord), free(tmp);
    return svc_err_set(err, SVC_NOMEM, "", NULL);
  }
  for (size_t i = 0; i < n; i++) ord[i] = i;
  sort_idx(ord, tmp, n, in->t);
  in->nclass = 0;
  for (size_t i = 0; i < n; i++) {
    size_t t = ord[i];
    if (i == 0 || !same_table(&in->t[t], &in->t[in->cls_rep[in->nclass - 1]]))
      in->cls_rep[in->nclass++] = t;
    in->cls_of[t] = in->nclass - 1;
    in->cls_count[in->nclass - 1]++;
  }
  free(ord), free(tmp);
  return 0;
}

static int check(const plan_emb_problem *p, const plan_table *t, size_t n, svc_err *err) {
  if (p->gpus_per_node < 1 || p->nodes < 1 || (int64_t)p->gpus_per_node * p->nodes > 65536)
    return svc_err_set(err, SVC_BAD_FIELD, "cluster", "cluster must have 1 to 65536 GPUs");
  if (p->batch_per_gpu < 1)
    return svc_err_set(err, SVC_BAD_FIELD, "recipe.batch_per_gpu", "batch_per_gpu must be >= 1");
  if (p->emb_dtype < 0 || p->emb_dtype >= COST_DT__COUNT || !(p->act_bytes > 0))
    return svc_err_set(err, SVC_BAD_FIELD, "recipe.embedding_precision", "bad embedding dtype");
  for (size_t i = 0; i < n; i++)
    if (t[i].rows < 1 || t[i].dim < 1 || !(t[i].pooling > 0))
      return svc_err_set(err, SVC_BAD_FIELD, "workload.tables",
                         "table %zu needs rows, dim >= 1 and pooling > 0", i);
  return 0;
}

int emb_inst_init(emb_inst *in, const plan_emb_problem *p, const plan_table *t, size_t n,
                  svc_err *err) {
  emb_opt list[32];
  int rc;
  memset(in, 0, sizeof *in);
  if ((rc = check(p, t, n, err))) return rc;
  in->p = p, in->t = t, in->n = n;
  in->G = p->gpus_per_node, in->N = p->nodes, in->R = in->G * in->N;
  in->host_cap = p->host_cap_bytes > 0         ? p->host_cap_bytes
                 : p->hw.host_mem_per_node > 0 ? p->hw.host_mem_per_node
                                               : PLAN_DEFAULT_HOST_MEM;
  in->nopt = build_list(in, list);
  if (n && !(in->opt = malloc(n * (size_t)in->nopt * sizeof *in->opt)))
    return svc_err_set(err, SVC_NOMEM, "", NULL);
  int scope = in->N > 1 ? COST_SCOPE_CLUSTER : COST_SCOPE_NODE;
  prices pr = {.host_bw = p->host_bw > 0 ? p->host_bw : PLAN_DEFAULT_HOST_BW,
               .cache = p->cache_ratio > 0 ? p->cache_ratio : PLAN_DEFAULT_CACHE_RATIO,
               .B = (double)p->batch_per_gpu,
               .R = in->R,
               .G = in->G,
               .eb = cost_dtype_bytes((cost_dtype)p->emb_dtype),
               .ab = p->act_bytes,
               .gpu_scale = cost_step_param_value(&p->hw, COST_SP_DLRM_GPU_SCALE)};
  pr.a2a = slope(&p->hw, COST_COLL_ALLTOALL, in->R, scope, in->G);
  pr.rs = slope(&p->hw, COST_COLL_REDUCESCATTER, in->R, scope, in->G);
  pr.node_rs = slope(&p->hw, COST_COLL_REDUCESCATTER, in->G, COST_SCOPE_NODE, in->G);
  if (!isfinite(pr.a2a) || !isfinite(pr.rs) || !isfinite(pr.node_rs)) {
    emb_inst_dispose(in);
    return svc_err_set(err, SVC_BAD_FIELD, "hardware",
                       "%s: the descriptor lacks the link bandwidths the embedding "
                       "communication needs",
                       p->hw.name);
  }
  if (in->R > 1) { /* forward + backward all-to-all latency */
    cost_collective_op op = {.kind = COST_COLL_ALLTOALL,
                             .bytes = 1,
                             .ranks = in->R,
                             .scope = scope,
                             .gpus_per_node = in->G};
    cost_result r;
    in->fixed_ms = cost_collective(&p->hw, &op, &r) ? 0 : 2.0 * r.ms;
  }
  for (size_t i = 0; i < n; i++)
    for (int o = 0; o < in->nopt; o++) {
      emb_opt *e = EOPT(in, i, o);
      *e = list[o];
      if (e->shard == PLAN_SHARD_CW && (t[i].dim % e->k != 0 || t[i].dim / e->k < PLAN_MIN_CW_DIM))
        e->ok = 0;
      if (e->ok)
        price(in, &pr, &t[i], e);
      else
        e->allowed = 0;
    }
  if ((rc = classes(in, err))) {
    emb_inst_dispose(in);
    return rc;
  }
  return 0;
}

void emb_inst_dispose(emb_inst *in) {
  if (!in) return;
  free(in->opt), free(in->cls_of), free(in->cls_rep), free(in->cls_count);
  memset(in, 0, sizeof *in);
}

int emb_opt_index(const emb_inst *in, int shard, int place, int k) {
  for (int o = 0; o < in->nopt; o++) {
    const emb_opt *e = &in->opt[o];
    if (e->shard == shard && e->place == place && (shard != PLAN_SHARD_CW || e->k == k)) return o;
  }
  return -1;
}

/* Bytes per GPU if every table takes its smallest-footprint option and the
 * footprint spreads perfectly over the ranks. */
double emb_min_bytes_per_gpu(const emb_inst *in) {
  double total = 0;
  for (size_t i = 0; i < in->n; i++) {
    double best = INFINITY;
    for (int o = 0; o < in->nopt; o++) {
      const emb_opt *e = EOPT(in, i, o);
      double per = e->kind == EK_UNIFORM ? e->bytes * in->R
                   : e->kind == EK_ITEM  ? e->bytes * e->k
                                         : e->bytes * in->G;
      if (e->allowed && per < best) best = per;
    }
    total += best;
  }
  return total / in->R;
}
