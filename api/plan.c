/* POST /v1/plans, GET /v1/plans/{id}, POST /v1/compare (and the CLI's
 * plan / compare): decode and validate the request (the workload and
 * recipe with the step API's decoders, api/api_int.h), hand plain structs
 * to the planner, encode its answer, store it in hwdb under a random id.
 *
 * Knob defaults (what the planner may turn when the request's "knobs"
 * does not say): the embedding sharding and placement (all types, host
 * placement allowed), checkpointing (none/full) and DDP vs FSDP -- none of
 * these changes what the model computes. Batch size, precisions, padding
 * and the GPU count change only when the request lists values for them;
 * the global batch stays the baseline's unless the request lists batch
 * sizes or pins constraints.global_batch. A change that alters training
 * (global batch, fp8 compute, int8/fp8 rows) is marked affects_convergence.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/api_int.h"
#include "api/api_plan.h"
#include "api/api_step.h"

#define MAX_PLAN_TABLES 20000

/* a recipe's sharding is a plan_shard bit (baseline_shard_mask) */
_Static_assert((int)COST_SHARD_DATA_PARALLEL == (int)PLAN_SHARD_DP &&
                   (int)COST_SHARD_TABLE_WISE == (int)PLAN_SHARD_TW &&
                   (int)COST_SHARD_ROW_WISE == (int)PLAN_SHARD_RW &&
                   (int)COST_SHARD_COLUMN_WISE == (int)PLAN_SHARD_CW &&
                   (int)COST_SHARD_TABLE_ROW_WISE == (int)PLAN_SHARD_TWRW,
               "cost_sharding and plan_shard agree");

typedef struct {
  cost_workload w;
  cost_recipe base;
  int base_sharding; /* the baseline's sharding as the request names it, or -1 */
  plan_table *tables;
  size_t n;
  plan_step_dense dense;
  plan_request req;
} plan_in;

static void plan_in_dispose(plan_in *in) {
  api_workload_dispose(&in->w);
  free(in->tables);
  memset(in, 0, sizeof *in);
}

/* An array member of knobs: each item checked by fn into out[]. */
typedef int (*item_fn)(const cJSON *it, const char *path, const cost_hw *hw, int64_t *v,
                       svc_err *err);

static int get_list(const cJSON *obj, const char *key, const char *path, const cost_hw *hw,
                    item_fn fn, int64_t *out, int *n, int max, svc_err *err) {
  char f[160], fi[176];
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(obj, key);
  *n = 0;
  if (!a) return 0;
  api_path(f, sizeof f, path, key);
  int cnt = cJSON_GetArraySize(a);
  if (!cJSON_IsArray(a) || cnt < 1 || cnt > max)
    return svc_err_set(err, SVC_BAD_FIELD, f, "%s must be an array of 1 to %d values", f, max);
  int i = 0;
  for (const cJSON *it = a->child; it; it = it->next, i++) {
    snprintf(fi, sizeof fi, "%s[%d]", f, i);
    int rc = fn(it, fi, hw, &out[*n], err);
    if (rc) return rc;
    (*n)++;
  }
  return 0;
}

static int item_int(const cJSON *it, const char *p, const cost_hw *hw, int64_t *v, svc_err *err) {
  if (!cJSON_IsNumber(it) || floor(it->valuedouble) != it->valuedouble || it->valuedouble < 1 ||
      it->valuedouble > 1 << 24)
    return svc_err_set(err, SVC_BAD_FIELD, p, "%s must be an integer from 1 to 16777216", p);
  *v = (int64_t)it->valuedouble;
  return 0;
}

/* A name from a fixed set: parse(name) >= 0, else 400 "P must be NAMES". */
static int item_name(const cJSON *it, const char *p, int (*parse)(const char *), const char *names,
                     int64_t *v, svc_err *err) {
  int c = cJSON_IsString(it) ? parse(it->valuestring) : -1;
  if (c < 0) return svc_err_set(err, SVC_BAD_FIELD, p, "%s must be %s", p, names);
  *v = c;
  return 0;
}

static int item_dtype(const cJSON *it, const char *p, const cost_hw *hw, int64_t *v, svc_err *err) {
  return item_name(it, p, cost_dtype_parse, "a dtype name", v, err);
}

static int item_ckpt(const cJSON *it, const char *p, const cost_hw *hw, int64_t *v, svc_err *err) {
  return item_name(it, p, cost_ckpt_parse, "none, selective or full", v, err);
}

static int item_dp(const cJSON *it, const char *p, const cost_hw *hw, int64_t *v, svc_err *err) {
  int rc = item_name(it, p, cost_dense_parallel_parse, "ddp or fsdp", v, err);
  if (!rc) *v = *v == COST_DP_FSDP;
  return rc;
}

static int item_bool(const cJSON *it, const char *p, const cost_hw *hw, int64_t *v, svc_err *err) {
  if (!cJSON_IsBool(it)) return svc_err_set(err, SVC_BAD_FIELD, p, "%s must be true or false", p);
  *v = cJSON_IsTrue(it);
  return 0;
}

static int item_shard(const cJSON *it, const char *p, const cost_hw *hw, int64_t *v, svc_err *err) {
  return item_name(it, p, plan_shard_parse,
                   "data_parallel, table_wise, row_wise, column_wise or table_row_wise", v, err);
}

/* dtypes the hardware lacks are dropped from a knob list (a compare may
 * list fp8 for a target that has it and a source that does not). */
static void keep_supported(const cost_hw *hw, int *list, int *n) {
  int k = 0;
  for (int i = 0; i < *n; i++)
    if (hw->peak_flops[list[i]] > 0 || list[i] == COST_DT_FP32) list[k++] = list[i];
  *n = k;
}

static int decode_knobs(const cJSON *req, const cost_hw *hw, plan_knobs *k, svc_err *err) {
  static const char *const fields[] = {"batch_per_gpu",
                                       "precision",
                                       "embedding_precision",
                                       "checkpointing",
                                       "dense_parallel",
                                       "padding",
                                       "nodes",
                                       "sharding",
                                       "host_placement",
                                       NULL};
  int64_t v[PLAN_MAX_CHOICES];
  int n, rc;
  memset(k, 0, sizeof *k);
  k->allow_host = 1;
  k->n_ckpt = 2, k->ckpt[0] = COST_CKPT_NONE, k->ckpt[1] = COST_CKPT_FULL;
  k->n_fsdp = 2, k->fsdp[0] = 0, k->fsdp[1] = 1;
  const cJSON *o = cJSON_GetObjectItemCaseSensitive(req, "knobs");
  if (!o) return 0;
  if (!cJSON_IsObject(o))
    return svc_err_set(err, SVC_BAD_FIELD, "knobs", "knobs must be an object");
  if ((rc = api_check_fields(o, fields, "knobs", err))) return rc;
#define LIST(key, fn, body)                                                                        \
  do {                                                                                             \
    if ((rc = get_list(o, key, "knobs", hw, fn, v, &n, PLAN_MAX_CHOICES, err))) return rc;         \
    if (n) {                                                                                       \
      body;                                                                                        \
    }                                                                                              \
  } while (0)
  LIST("batch_per_gpu", item_int, {
    k->n_batch = n;
    memcpy(k->batch, v, (size_t)n * sizeof *v);
  });
  LIST("precision", item_dtype, {
    k->n_dense_dtype = n;
    for (int i = 0; i < n; i++) k->dense_dtype[i] = (int)v[i];
  });
  LIST("embedding_precision", item_dtype, {
    k->n_emb_dtype = n;
    for (int i = 0; i < n; i++) k->emb_dtype[i] = (int)v[i];
  });
  LIST("checkpointing", item_ckpt, {
    k->n_ckpt = n > 3 ? 3 : n;
    for (int i = 0; i < k->n_ckpt; i++) k->ckpt[i] = (int)v[i];
  });
  LIST("dense_parallel", item_dp, {
    k->n_fsdp = n > 2 ? 2 : n;
    for (int i = 0; i < k->n_fsdp; i++) k->fsdp[i] = (int)v[i];
  });
  LIST("padding", item_bool, {
    k->n_pad = n > 2 ? 2 : n;
    for (int i = 0; i < k->n_pad; i++) k->pad[i] = (int)v[i];
  });
  LIST("nodes", item_int, {
    k->n_nodes = n;
    for (int i = 0; i < n; i++) k->nodes[i] = (int)v[i];
  });
  LIST("sharding", item_shard, {
    for (int i = 0; i < n; i++) k->shard_mask |= 1u << v[i];
  });
#undef LIST
  const cJSON *h = cJSON_GetObjectItemCaseSensitive(o, "host_placement");
  if (h) {
    if (!cJSON_IsBool(h))
      return svc_err_set(err, SVC_BAD_FIELD, "knobs.host_placement",
                         "knobs.host_placement must be true or false");
    k->allow_host = cJSON_IsTrue(h);
  }
  keep_supported(hw, k->dense_dtype, &k->n_dense_dtype);
  keep_supported(hw, k->emb_dtype, &k->n_emb_dtype);
  if ((o = cJSON_GetObjectItemCaseSensitive(o, "precision")) && k->n_dense_dtype == 0)
    return svc_err_set(err, SVC_UNSUPPORTED_DTYPE, "knobs.precision",
                       "%s supports none of the listed precisions", hw->name);
  return 0;
}

/* Tables with counts expanded: copy i of "t" is named "t#i". */
static int expand_tables(plan_in *in, svc_err *err) {
  const cost_dlrm *d = &in->w.dlrm;
  size_t total = 0, k = 0;
  for (size_t i = 0; i < d->n_tables; i++)
    total += (size_t)(d->tables[i].count > 0 ? d->tables[i].count : 1);
  if (total > MAX_PLAN_TABLES)
    return svc_err_set(err, SVC_OUT_OF_RANGE, "workload.tables",
                       "the planner takes at most %d tables (counts included); got %zu",
                       MAX_PLAN_TABLES, total);
  if (!(in->tables = calloc(total ? total : 1, sizeof *in->tables)))
    return svc_err_set(err, SVC_NOMEM, "", NULL);
  for (size_t i = 0; i < d->n_tables; i++) {
    const cost_table *t = &d->tables[i];
    int64_t cnt = t->count > 0 ? t->count : 1;
    for (int64_t c = 0; c < cnt; c++, k++) {
      plan_table *p = &in->tables[k];
      const char *base = t->name[0] ? t->name : "table";
      if (cnt > 1 || !t->name[0])
        snprintf(p->name, sizeof p->name, "%.40s#%lld", base,
                 (long long)(cnt > 1 ? c : (int64_t)i));
      else
        snprintf(p->name, sizeof p->name, "%s", base);
      p->rows = t->rows, p->dim = t->dim, p->pooling = (double)t->pooling;
    }
  }
  in->n = total;
  return 0;
}

static void recipe_from(const cost_recipe *c, int gpn, int nodes, plan_recipe *r) {
  memset(r, 0, sizeof *r);
  r->gpus_per_node = gpn, r->nodes = nodes;
  r->batch_per_gpu = c->batch_per_gpu;
  r->dense_dtype = c->precision;
  r->emb_dtype = c->embedding_precision;
  r->checkpointing = c->checkpointing;
  r->fsdp = c->dense_parallel == COST_DP_FSDP;
  r->pad = c->pad_to > 1;
}

/* Decode the common part of plan and compare requests for hardware hw. */
static int decode_common(api_ctx *ctx, const cJSON *req, const char *hwname, plan_in *in,
                         svc_err *err) {
  const char *calib = "latest", *objective = "throughput", *host_tables = NULL;
  int64_t gpn = 0, nodes = 1, gb = 0;
  double tl = 10, price = 0, host_bw = 0, cache = 0;
  plan_request *pr = &in->req;
  int rc;
  if ((rc = api_get_str(req, "calibration", "", 0, 16, NULL, &calib, err)) ||
      (rc = api_get_str(req, "objective", "", 0, 16, NULL, &objective, err)) ||
      (rc = api_get_str(req, "host_tables", "", 0, 16, NULL, &host_tables, err)) ||
      (rc = api_get_num(req, "time_limit_s", "", 0, 0.01, API_PLAN_MAX_TIME_S, &tl, err)) ||
      (rc = api_get_num(req, "price_per_hour", "", 0, 0, 1e6, &price, err)) ||
      (rc = api_get_num(req, "host_bandwidth_bytes_per_s", "", 0, 1e6, 1e15, &host_bw, err)) ||
      (rc = api_get_num(req, "cache_ratio", "", 0, 0.001, 1, &cache, err)))
    return rc;
  if (strcmp(calib, "latest") && strcmp(calib, "none"))
    return svc_err_set(err, SVC_BAD_FIELD, "calibration", "calibration must be latest or none");
  if (strcmp(objective, "throughput") && strcmp(objective, "cost"))
    return svc_err_set(err, SVC_BAD_FIELD, "objective", "objective must be throughput or cost");
  if ((rc = api_hw_lookup(ctx, hwname, !strcmp(calib, "latest"), &pr->hw, err))) return rc;
  const cJSON *cl = cJSON_GetObjectItemCaseSensitive(req, "cluster");
  if (cl) {
    static const char *const cf[] = {"gpus_per_node",
                                     "nodes",
                                     "scaleout_bandwidth_bytes_per_s",
                                     "scaleup_bandwidth_bytes_per_s",
                                     "in_switch_reduction",
                                     "host_memory_bytes",
                                     NULL};
    if (!cJSON_IsObject(cl))
      return svc_err_set(err, SVC_BAD_FIELD, "cluster", "cluster must be an object");
    /* host memory per node for host-placed tables: overrides the
     * descriptor's host_memory_bytes_per_node (1 GB .. 1 PB) */
    if ((rc = api_check_fields(cl, cf, "cluster", err)) ||
        (rc = api_get_num(cl, "host_memory_bytes", "cluster", 0, 1e9, 1e15,
                          &pr->hw.host_mem_per_node, err)) ||
        (rc = api_get_int(cl, "gpus_per_node", "cluster", 0, 1, 1024, &gpn, err)) ||
        (rc = api_get_int(cl, "nodes", "cluster", 0, 1, 4096, &nodes, err)) ||
        (rc = api_fabric_decode(cl, "cluster", &pr->hw, err)))
      return rc;
    /* A node's GPUs share its scale-up domain: more than it holds would be
     * priced at link speeds the machine does not have. */
    if (pr->hw.scaleup_domain > 0 && gpn > pr->hw.scaleup_domain)
      return svc_err_set(err, SVC_OUT_OF_RANGE, "cluster.gpus_per_node",
                         "cluster.gpus_per_node: %s has %d GPUs per scale-up domain (got %lld)",
                         pr->hw.name, pr->hw.scaleup_domain, (long long)gpn);
  }
  if (gpn == 0) gpn = pr->hw.scaleup_domain > 0 ? pr->hw.scaleup_domain : 8;
  const cJSON *cons = cJSON_GetObjectItemCaseSensitive(req, "constraints");
  if (cons) {
    static const char *const cf[] = {"global_batch", NULL};
    if (!cJSON_IsObject(cons))
      return svc_err_set(err, SVC_BAD_FIELD, "constraints", "constraints must be an object");
    /* at most 2^31 samples per GPU on one node (recipe.batch_per_gpu's
     * bound): the step model prices no more, and failed past 2^32 with
     * a bare "cannot price the dense part" blamed on knobs */
    int64_t gb_max = (1LL << 31) * gpn < (1LL << 40) ? (1LL << 31) * gpn : 1LL << 40;
    if ((rc = api_check_fields(cons, cf, "constraints", err)) ||
        (rc = api_get_int(cons, "global_batch", "constraints", 0, 1, gb_max, &gb, err)))
      return rc;
  }
  if ((rc = api_workload_decode(cJSON_GetObjectItemCaseSensitive(req, "workload"), "workload",
                                &in->w, err)))
    return rc;
  if (in->w.kind != COST_WL_DLRM)
    return svc_err_set(err, SVC_BAD_FIELD, "workload.kind",
                       "the planner plans dlrm workloads (sharded embedding tables)");
  if ((rc = api_recipe_decode(cJSON_GetObjectItemCaseSensitive(req, "baseline"), "baseline",
                              &in->base, err)))
    return rc;
  /* The cluster sets the GPUs: a baseline that states others would be
   * planned silently on a cluster it did not describe. */
  const cJSON *bl = cJSON_GetObjectItemCaseSensitive(req, "baseline");
  if (cJSON_GetObjectItemCaseSensitive(bl, "gpus") && in->base.gpus != gpn * nodes)
    return svc_err_set(err, SVC_BAD_FIELD, "baseline.gpus",
                       "baseline.gpus (%lld) differs from the cluster's %lld GPUs "
                       "(gpus_per_node %lld x nodes %lld); drop it or match the cluster",
                       (long long)in->base.gpus, (long long)(gpn * nodes), (long long)gpn,
                       (long long)nodes);
  if (cJSON_GetObjectItemCaseSensitive(bl, "gpus_per_node") && in->base.gpus_per_node != gpn)
    return svc_err_set(err, SVC_BAD_FIELD, "baseline.gpus_per_node",
                       "baseline.gpus_per_node (%lld) differs from the cluster's gpus_per_node "
                       "(%lld); set it in cluster",
                       (long long)in->base.gpus_per_node, (long long)gpn);
  in->base.gpus = gpn * nodes;
  in->base.gpus_per_node = gpn;
  if ((rc = api_step_check(&pr->hw, &in->w, &in->base, "workload", "baseline", err)) ||
      (rc = api_recipe_host_mini(&pr->hw, &in->w, &in->base, "baseline", NULL, err)) ||
      (rc = decode_knobs(req, &pr->hw, &pr->knobs, err)) || (rc = expand_tables(in, err)))
    return rc;
  pr->knobs.global_batch = gb;
  in->dense.w = in->w;
  in->dense.base = in->base;
  pr->gpus_per_node = (int)gpn;
  pr->tables = in->tables, pr->n_tables = in->n;
  pr->sparse_opt = in->w.dlrm.sparse_optimizer; /* plan_sparse_opt takes cost_optimizer's values */
  pr->host_bw = host_bw, pr->cache_ratio = cache, pr->price_per_hour = price;
  /* how host tables are served: the request's host_tables, else by the
   * framework (plain PyTorch: the CPU; TorchRec: its UVM cache) */
  pr->host_mode = in->base.framework == COST_FW_PYTORCH_EAGER ? PLAN_HOST_CPU : PLAN_HOST_UVM_CACHE;
  if (host_tables) {
    pr->host_mode = plan_host_mode_parse(host_tables);
    if (pr->host_mode < 0)
      return svc_err_set(err, SVC_BAD_FIELD, "host_tables",
                         "host_tables must be cpu, uvm or uvm_caching");
    if (pr->host_mode == PLAN_HOST_UVM && !(pr->hw.host_link_bw > 0))
      return svc_err_set(err, SVC_BAD_FIELD, "host_tables",
                         "host_tables uvm needs the hardware's host_link_bandwidth_bytes_per_s, "
                         "which %s does not list",
                         pr->hw.name);
  }
  recipe_from(&in->base, (int)gpn, (int)nodes, &pr->baseline);
  /* A baseline that names its sharding is priced with it (as POST
   * /v1/step prices that recipe), not with the planner's pick. */
  in->base_sharding = cJSON_GetObjectItemCaseSensitive(bl, "sharding") ? in->base.sharding : -1;
  if (in->base_sharding >= 0) {
    /* where the type has no meaning: one GPU holds whole tables, and
     * table_row_wise within one node is row_wise */
    pr->baseline_shard_mask = 1u << in->base.sharding;
    if (gpn * nodes == 1) pr->baseline_shard_mask |= 1u << PLAN_SHARD_TW;
    if (in->base.sharding == COST_SHARD_TABLE_ROW_WISE && nodes == 1)
      pr->baseline_shard_mask |= 1u << PLAN_SHARD_RW;
    /* placement stays the planner's unless the baseline names one */
    pr->baseline_allow_host = cJSON_GetObjectItemCaseSensitive(bl, "placement")
                                  ? in->base.placement > COST_PLACE_HBM
                                  : pr->knobs.allow_host;
  }
  pr->objective = strcmp(objective, "cost") ? PLAN_OBJ_THROUGHPUT : PLAN_OBJ_COST;
  pr->dense = plan_dense_step;
  pr->dense_user = &in->dense;
  pr->solve.time_limit_s = tl;
  pr->solve.mip_gap = 0.005;
  return 0;
}

/* ---- encoding ------------------------------------------------------------------ */

static cJSON *recipe_json(const plan_request *pr, const plan_recipe *r, int framework) {
  cJSON *o = cJSON_CreateObject();
  int gpus = r->gpus_per_node * r->nodes;
  cJSON_AddNumberToObject(o, "gpus", gpus);
  cJSON_AddNumberToObject(o, "gpus_per_node", r->gpus_per_node);
  cJSON_AddNumberToObject(o, "nodes", r->nodes);
  cJSON_AddNumberToObject(o, "batch_per_gpu", (double)r->batch_per_gpu);
  cJSON_AddNumberToObject(o, "global_batch", (double)r->batch_per_gpu * gpus);
  cJSON_AddStringToObject(o, "precision", cost_dtype_name((cost_dtype)r->dense_dtype));
  cJSON_AddStringToObject(o, "embedding_precision", cost_dtype_name((cost_dtype)r->emb_dtype));
  cJSON_AddStringToObject(o, "checkpointing", cost_ckpt_name(r->checkpointing));
  cJSON_AddStringToObject(o, "dense_parallel", r->fsdp ? "fsdp" : "ddp");
  cJSON_AddNumberToObject(o, "pad_to",
                          r->pad ? (double)plan_pad_multiple(&pr->hw, r->dense_dtype) : 0);
  cJSON_AddStringToObject(o, "framework", cost_framework_name(framework));
  return o;
}

static cJSON *emb_plan_json(const plan_request *pr, const plan_eval *e) {
  cJSON *o = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(o, "tables");
  const plan_recipe *r = &e->recipe;
  int R = r->gpus_per_node * r->nodes;
  for (size_t i = 0; i < e->emb.n_tables; i++) {
    const plan_table_plan *p = &e->emb.tables[i];
    cJSON *t = cJSON_CreateObject(), *ranks;
    cJSON_AddStringToObject(t, "name", pr->tables[i].name);
    cJSON_AddStringToObject(t, "sharding_type", plan_shard_name(p->shard));
    cJSON_AddStringToObject(t, "compute_kernel", plan_place_kernel(p->place, pr->host_mode));
    ranks = cJSON_AddArrayToObject(t, "ranks");
    if (p->shard == PLAN_SHARD_TW) {
      cJSON_AddItemToArray(ranks, cJSON_CreateNumber(p->rank));
    } else if (p->shard == PLAN_SHARD_CW) {
      for (int j = 0; j < p->k; j++)
        cJSON_AddItemToArray(ranks, cJSON_CreateNumber(p->cw_ranks[j]));
    } else if (p->shard == PLAN_SHARD_TWRW) {
      for (int g = 0; g < r->gpus_per_node; g++)
        cJSON_AddItemToArray(ranks, cJSON_CreateNumber(p->node * r->gpus_per_node + g));
    } else {
      for (int q = 0; q < R; q++) cJSON_AddItemToArray(ranks, cJSON_CreateNumber(q));
    }
    cJSON_AddItemToArray(arr, t);
  }
  return o;
}

static const char *method_name(int m) { return plan_method_name(m); }

/* step_ms, samples_per_s, memory, fits of one evaluation. */
static void add_prediction(cJSON *o, const plan_request *pr, const plan_eval *e) {
  cJSON_AddNumberToObject(o, "step_ms", e->step_ms);
  cJSON_AddNumberToObject(o, "samples_per_s", e->samples_per_s);
  if (e->usd_per_msample > 0)
    cJSON_AddNumberToObject(o, "usd_per_million_samples", e->usd_per_msample);
  cJSON_AddNumberToObject(o, "peak_memory_bytes", e->peak_bytes);
  cJSON_AddNumberToObject(o, "hbm_usable_bytes", pr->hw.hbm_usable_bytes);
  cJSON_AddBoolToObject(o, "fits", e->fits);
}

static cJSON *explanation_json(const plan_request *pr, const plan_result *res) {
  const plan_eval *b = &res->best;
  cJSON *x = cJSON_CreateObject(), *ch = cJSON_AddArrayToObject(x, "changes");
  for (int i = 0; i < res->n_changes; i++) {
    const plan_change *c = &res->changes[i];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "knob", c->knob);
    cJSON_AddStringToObject(o, "from", c->from);
    cJSON_AddStringToObject(o, "to", c->to);
    if (c->gain > 0) {
      cJSON_AddNumberToObject(o, "samples_per_s", c->samples_per_s);
      cJSON_AddNumberToObject(o, "gain", c->gain);
    } else {
      cJSON_AddNullToObject(o, "gain");
    }
    if (c->note[0]) cJSON_AddStringToObject(o, "note", c->note);
    cJSON_AddBoolToObject(o, "affects_convergence", c->affects_convergence);
    if (c->affects_convergence) cJSON_AddStringToObject(o, "why", c->why);
    cJSON_AddItemToArray(ch, o);
  }
  cJSON *bind = cJSON_AddArrayToObject(x, "binding_constraints");
  for (int i = 0; i < res->n_binding; i++)
    cJSON_AddItemToArray(bind, cJSON_CreateString(res->binding[i]));
  cJSON *bound = cJSON_AddArrayToObject(x, "step_bound");
  for (int i = 0; i < res->n_bound; i++)
    cJSON_AddItemToArray(bound, cJSON_CreateString(res->bound[i]));
  cJSON *d = cJSON_AddObjectToObject(x, "dense");
  cJSON_AddNumberToObject(d, "ms", b->dense.ms);
  cJSON_AddNumberToObject(d, "memory_bytes", b->dense.bytes);
  cJSON_AddNumberToObject(d, "weights_bytes", b->dense.weights_bytes);
  cJSON_AddNumberToObject(d, "gradients_bytes", b->dense.grads_bytes);
  cJSON_AddNumberToObject(d, "optimizer_state_bytes", b->dense.optim_bytes);
  cJSON_AddNumberToObject(d, "activations_bytes", b->dense.act_bytes);
  cJSON_AddNumberToObject(d, "workspace_bytes", b->dense.workspace_bytes);
  cJSON_AddNumberToObject(d, "communication_ms", b->dense.comm_ms);
  cJSON_AddNumberToObject(d, "host_overhead_ms", b->dense.overhead_ms);
  cJSON *e = cJSON_AddObjectToObject(x, "embedding");
  double mean = 0;
  for (int r = 0; r < b->emb.ranks; r++) mean += b->emb.rank_ms[r] / b->emb.ranks;
  cJSON_AddNumberToObject(e, "max_rank_ms", b->emb.max_ms);
  cJSON_AddNumberToObject(e, "mean_rank_ms", mean);
  cJSON_AddNumberToObject(e, "bound_ms", b->emb.bound_ms);
  if (isfinite(b->emb.greedy_ms))
    cJSON_AddNumberToObject(e, "greedy_ms", b->emb.greedy_ms);
  else
    cJSON_AddNullToObject(e, "greedy_ms");
  cJSON_AddStringToObject(e, "method", method_name(b->emb.method));
  cJSON_AddStringToObject(e, "limit", plan_limit_name(b->emb.limit));
  cJSON *ranks = cJSON_AddArrayToObject(x, "ranks");
  for (int r = 0; r < b->emb.ranks; r++) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "rank", r);
    cJSON_AddNumberToObject(o, "embedding_ms", b->emb.rank_ms[r]);
    cJSON_AddNumberToObject(o, "step_ms", b->dense.ms + b->emb.rank_ms[r]);
    cJSON_AddNumberToObject(o, "memory_bytes", b->dense.bytes + b->emb.rank_bytes[r]);
    cJSON_AddItemToArray(ranks, o);
  }
  return x;
}

static cJSON *plan_json(const plan_in *in, const plan_result *res) {
  const plan_request *pr = &in->req;
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "hardware", pr->hw.name);
  cJSON_AddItemToObject(o, "provenance", api_provenance_json(&pr->hw));
  cJSON_AddStringToObject(o, "objective", pr->objective == PLAN_OBJ_COST ? "cost" : "throughput");
  cJSON_AddItemToObject(o, "recipe", recipe_json(pr, &res->best.recipe, in->base.framework));
  add_prediction(o, pr, &res->best);
  cJSON_AddNumberToObject(o, "gap", res->gap);
  cJSON_AddNumberToObject(o, "search_gap", res->global_gap);
  cJSON *bl = cJSON_AddObjectToObject(o, "baseline");
  cJSON_AddItemToObject(bl, "recipe", recipe_json(pr, &pr->baseline, in->base.framework));
  cJSON_AddStringToObject(
      bl, "sharding", in->base_sharding >= 0 ? cost_sharding_name(in->base_sharding) : "planner");
  if (res->baseline.emb.tables) {
    add_prediction(bl, pr, &res->baseline);
    /* what a validation run of the baseline places where (plan_validate.c) */
    cJSON_AddItemToObject(bl, "embedding_plan", emb_plan_json(pr, &res->baseline));
  } else {
    cJSON_AddBoolToObject(bl, "fits", 0);
  }
  if (res->baseline_reason[0]) cJSON_AddStringToObject(bl, "reason", res->baseline_reason);
  if (res->baseline_fits && res->baseline.samples_per_s > 0)
    cJSON_AddNumberToObject(o, "gain", res->best.samples_per_s / res->baseline.samples_per_s);
  else
    cJSON_AddNullToObject(o, "gain");
  int conv = 0;
  for (int i = 0; i < res->n_changes; i++) conv |= res->changes[i].affects_convergence;
  cJSON_AddBoolToObject(o, "affects_convergence", conv);
  cJSON_AddItemToObject(o, "embedding_plan", emb_plan_json(pr, &res->best));
  cJSON_AddItemToObject(o, "explanation", explanation_json(pr, res));
  if (in->w.kind == COST_WL_DLRM && in->w.dlrm.block.out > 0)
    cJSON_AddItemToObject(o, "dense_block", api_dense_block_json(&in->w.dlrm));
  cJSON *s = cJSON_AddObjectToObject(o, "search");
  cJSON_AddNumberToObject(s, "combinations", res->combos);
  cJSON_AddNumberToObject(s, "pruned", res->combos_pruned);
  cJSON_AddNumberToObject(s, "infeasible", res->combos_infeasible);
  cJSON_AddNumberToObject(s, "solve_s", res->solve_s);
  /* "time": the wall clock cut the search, and the same request may give
   * another answer on a busier machine; "work"/"none": it will not */
  cJSON_AddStringToObject(s, "limit", plan_limit_name(res->limit));
  return o;
}

/* ---- storing -------------------------------------------------------------------- */

static int new_id(char *id, size_t size, svc_err *err) {
  unsigned char b[8];
  if (getentropy(b, sizeof b))
    return svc_err_set(err, SVC_INTERNAL, "", "no entropy for a plan id");
  for (int i = 0; i < 8; i++) snprintf(id + 2 * i, size - 2 * (size_t)i, "%02x", b[i]);
  return 0;
}

/* Add "id" to doc, print it, store it with the request; r gets both. */
static int store(api_ctx *ctx, const char *kind, const char *hw, const char *body, size_t len,
                 cJSON *doc, api_reply *r, svc_err *err) {
  char *id = r->id, **out = &r->json, *req = NULL;
  int rc;
  if ((rc = new_id(id, sizeof r->id, err))) return rc;
  cJSON_AddStringToObject(doc, "id", id);
  if (!(*out = api_print(doc)) || !(req = malloc(len + 1))) {
    free(*out);
    *out = NULL;
    return svc_err_set(err, SVC_NOMEM, "", NULL);
  }
  memcpy(req, body, len);
  req[len] = '\0';
  rc = hwdb_plan_put(ctx->db, id, kind, hw, req, *out, err);
  free(req);
  if (rc) {
    free(*out);
    *out = NULL;
  }
  return rc;
}

/* Top-level fields a plan and a compare request share (decode_common);
 * each adds the hardware it names. */
#define PLAN_REQUEST_FIELDS                                                                        \
  "workload", "cluster", "baseline", "knobs", "constraints", "objective", "time_limit_s",          \
      "price_per_hour", "host_bandwidth_bytes_per_s", "host_tables", "cache_ratio", "calibration"

static int plan_op(api_ctx *ctx, const char *body, size_t len, plan_progress_fn progress,
                   void *progress_user, api_reply *r, svc_err *err) {
  static const char *const top[] = {PLAN_REQUEST_FIELDS, "hardware", NULL};
  cJSON *req = NULL, *doc = NULL;
  char *over = NULL; /* the request as stored when the context overrides its hardware */
  plan_in in;
  plan_result res;
  const char *hw = NULL;
  int rc;
  memset(&in, 0, sizeof in);
  memset(&res, 0, sizeof res);
  r->json = NULL;
  if ((rc = api_parse_request(ctx, body, len, &req, err))) return rc;
  if (ctx->hw_override && !(over = api_print(req))) {
    rc = svc_err_set(err, SVC_NOMEM, "", NULL);
    goto cleanup;
  }
  if ((rc = api_check_fields(req, top, "", err)) ||
      (rc = api_get_str(req, "hardware", "", 1, 63, NULL, &hw, err)) ||
      (rc = decode_common(ctx, req, hw, &in, err)))
    goto cleanup;
  in.req.solve.progress = progress, in.req.solve.progress_user = progress_user;
  if ((rc = plan_run(&in.req, NULL, &res, err))) goto cleanup;
  if (!(doc = plan_json(&in, &res))) {
    rc = svc_err_set(err, SVC_NOMEM, "", NULL);
    goto cleanup;
  }
  rc = store(ctx, "plan", in.req.hw.name, over ? over : body, over ? strlen(over) : len, doc, r,
             err);
cleanup:
  plan_result_dispose(&res);
  plan_in_dispose(&in);
  cJSON_Delete(doc);
  cJSON_Delete(req);
  free(over);
  return rc;
}

int api_plan_ex(api_ctx *ctx, const char *body, size_t len, plan_progress_fn progress,
                void *progress_user, char **out, svc_err *err) {
  api_reply r = {0};
  int rc = plan_op(ctx, body, len, progress, progress_user, &r, err);
  *out = r.json;
  return rc;
}

int api_plan(api_ctx *ctx, const char *body, size_t len, char **out, svc_err *err) {
  return api_plan_ex(ctx, body, len, NULL, NULL, out, err);
}

int api_plan_reply(api_ctx *ctx, const char *body, size_t len, api_reply *r, svc_err *err) {
  return plan_op(ctx, body, len, NULL, NULL, r, err);
}

/* The plan validation's least final side: "running" or "queued" while
 * either job may still change, else "". */
static void validation_state(const cJSON *v, char *state, size_t size) {
  static const char *const sides[] = {"baseline", "planned"};
  state[0] = '\0';
  for (int i = 0; i < 2; i++) {
    const char *st = cJSON_GetStringValue(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(v, sides[i]), "state"));
    if (st && (!strcmp(st, "running") || (!strcmp(st, "queued") && !state[0])))
      snprintf(state, size, "%s", st);
  }
}

int api_plan_get(api_ctx *ctx, const char *id, char **out, svc_err *err) {
  api_reply r = {0};
  int rc = api_plan_get_reply(ctx, id, &r, err);
  *out = r.json;
  return rc;
}

int api_plan_get_reply(api_ctx *ctx, const char *id, api_reply *r, svc_err *err) {
  hwdb_plan p;
  char **out = &r->json;
  *out = NULL;
  size_t n = id ? strlen(id) : 0;
  if (n != 16 || strspn(id, "0123456789abcdef") != n)
    return svc_err_set(err, SVC_NOT_FOUND, "id", "no plan '%.40s'", id ? id : "");
  cJSON *v = NULL, *doc = NULL;
  int rc = hwdb_plan_get(ctx->db, id, &p, err);
  if (rc) return rc;
  /* a validated plan carries its runs' predicted against measured */
  if ((rc = api_plan_validation_json(ctx, id, &v, err))) goto cleanup;
  snprintf(r->id, sizeof r->id, "%s", id);
  if (v && (doc = cJSON_Parse(p.result))) {
    validation_state(v, r->state, sizeof r->state);
    cJSON_AddItemToObject(doc, "validation", v);
    v = NULL;
    if (!(*out = api_print(doc))) rc = svc_err_set(err, SVC_NOMEM, "", NULL);
  } else {
    *out = p.result;
    p.result = NULL;
  }
cleanup:
  cJSON_Delete(v);
  cJSON_Delete(doc);
  hwdb_plan_dispose(&p);
  return rc;
}

/* ---- compare ---------------------------------------------------------------------- */

static cJSON *side_json(const plan_request *pr, const plan_eval *e, int framework) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "hardware", pr->hw.name);
  cJSON_AddItemToObject(o, "provenance", api_provenance_json(&pr->hw));
  cJSON_AddItemToObject(o, "recipe", recipe_json(pr, &e->recipe, framework));
  add_prediction(o, pr, e);
  return o;
}

/* A recipe run unchanged on pr's hardware (r's baseline): its prediction,
 * or "fits": false, and why it does not fit. */
static cJSON *run_as_is_json(const plan_request *pr, const plan_recipe *recipe, int framework,
                             const plan_result *r) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "hardware", pr->hw.name);
  cJSON_AddItemToObject(o, "recipe", recipe_json(pr, recipe, framework));
  if (r->baseline.emb.tables)
    add_prediction(o, pr, &r->baseline);
  else
    cJSON_AddBoolToObject(o, "fits", 0);
  if (r->baseline_reason[0]) cJSON_AddStringToObject(o, "reason", r->baseline_reason);
  return o;
}

static double ratio(const plan_eval *num, int num_ok, const plan_eval *den, int den_ok) {
  return num_ok && den_ok && den->samples_per_s > 0 ? num->samples_per_s / den->samples_per_s : 0;
}

static void add_ratio(cJSON *o, const char *key, double r) {
  if (r > 0)
    cJSON_AddNumberToObject(o, key, r);
  else
    cJSON_AddNullToObject(o, key);
}

/* An error decoding one side says which; one about its accelerator names
 * the member that gave it (a compare request has no "hardware"). */
static void side_err(svc_err *err, const char *side) {
  svc_err_prefix(err, side);
  if (!strcmp(err->field, "hardware")) svc_strlcpy(err->field, side, sizeof err->field);
}

/* Four answers on one workload and one set of constraints: the baseline
 * recipe on the source; the source re-planned on its own hardware (the
 * tuned source, exactly `cdplan plan` on it); that tuned recipe and table
 * placement run unchanged on the target (the direct port); the target's
 * plan. gain = plan / port (the co-design share: the recipe re-planned for
 * the chip), hardware_share = port / tuned source (same recipe, other
 * chip), total = plan / tuned source = hardware_share x gain; tuning the
 * source alone (tuned / baseline) is source_tuning_gain, credited to
 * neither. */
int api_compare_ex(api_ctx *ctx, const char *body, size_t len, plan_progress_fn progress,
                   void *progress_user, char **out, svc_err *err) {
  static const char *const top[] = {PLAN_REQUEST_FIELDS, "from", "to", "tune_from", NULL};
  cJSON *req = NULL, *doc = NULL;
  plan_in a, b;
  plan_result ra, rb;
  const char *from = NULL, *to = NULL;
  int rc;
  memset(&a, 0, sizeof a), memset(&b, 0, sizeof b);
  memset(&ra, 0, sizeof ra), memset(&rb, 0, sizeof rb);
  *out = NULL;
  if ((rc = api_parse_body(body, len, &req, err))) return rc;
  if ((rc = api_check_fields(req, top, "", err)) ||
      (rc = api_get_str(req, "from", "", 1, 63, NULL, &from, err)) ||
      (rc = api_get_str(req, "to", "", 1, 63, NULL, &to, err)))
    goto cleanup;
  /* tune_from is deprecated (the tuned source is always computed): still
   * checked and accepted for one release, and ignored with a note */
  const cJSON *tf = cJSON_GetObjectItemCaseSensitive(req, "tune_from");
  if (tf && !cJSON_IsBool(tf)) {
    rc = svc_err_set(err, SVC_BAD_FIELD, "tune_from", "tune_from must be true or false");
    goto cleanup;
  }
  if ((rc = decode_common(ctx, req, from, &a, err))) {
    side_err(err, "from");
    goto cleanup;
  }
  if ((rc = decode_common(ctx, req, to, &b, err))) {
    side_err(err, "to");
    goto cleanup;
  }
  a.req.solve.progress = b.req.solve.progress = progress;
  a.req.solve.progress_user = b.req.solve.progress_user = progress_user;
  /* 1-2. the baseline and the tuned source: the same solve as a plan */
  if ((rc = plan_run(&a.req, NULL, &ra, err))) {
    svc_err_prefix(err, from);
    goto cleanup;
  }
  /* 3-4. the plan for "to", whose baseline is the direct port: the tuned
   * recipe and table placement run unchanged */
  b.req.baseline = ra.best.recipe;
  /* the same accelerator (name and figures): the problem was solved in
   * step 2, so the plan is the port (a second time-limited solve could
   * land elsewhere and credit the difference to the hardware) */
  if (!strcmp(a.req.hw.name, b.req.hw.name) && !memcmp(&a.req.hw, &b.req.hw, sizeof a.req.hw)) {
    plan_knobs *k = &b.req.knobs;
    k->n_batch = k->n_dense_dtype = k->n_emb_dtype = k->n_ckpt = k->n_fsdp = k->n_pad = 0;
    k->n_nodes = 0, k->global_batch = 0;
    k->keep_baseline_sharding = 1;
  }
  if ((rc = plan_run(&b.req, ra.best.emb.tables, &rb, err))) {
    svc_err_prefix(err, to);
    goto cleanup;
  }
  doc = cJSON_CreateObject();
  cJSON_AddItemToObject(doc, "source_baseline",
                        run_as_is_json(&a.req, &a.req.baseline, a.base.framework, &ra));
  cJSON_AddItemToObject(doc, "tuned_source", plan_json(&a, &ra));
  cJSON_AddItemToObject(doc, "from", side_json(&a.req, &ra.best, a.base.framework));
  cJSON_AddItemToObject(doc, "direct_port",
                        run_as_is_json(&b.req, &ra.best.recipe, a.base.framework, &rb));
  cJSON *planned = plan_json(&b, &rb);
  cJSON_AddItemToObject(doc, "to", planned);
  double gain = ratio(&rb.best, 1, &rb.baseline, rb.baseline_fits);
  double hw_share = ratio(&rb.baseline, rb.baseline_fits, &ra.best, 1);
  add_ratio(doc, "gain", gain);
  add_ratio(doc, "hardware_share", hw_share);
  add_ratio(doc, "total", ratio(&rb.best, 1, &ra.best, 1));
  add_ratio(doc, "source_tuning_gain", ratio(&ra.best, 1, &ra.baseline, ra.baseline_fits));
  cJSON *by = cJSON_GetObjectItemCaseSensitive(
      cJSON_GetObjectItemCaseSensitive(planned, "explanation"), "changes");
  cJSON_AddItemToObject(doc, "gain_by_change", cJSON_Duplicate(by, 1));
  cJSON_AddItemToObject(doc, "gain_confidence", api_ratio_confidence_json(&a.req.hw, &b.req.hw));
  if ((rc = api_compare_basis(ctx, &a.req, &b.req, &ra.best, hw_share, doc, err))) goto cleanup;
  if (tf) {
    cJSON *notes = cJSON_AddArrayToObject(doc, "notes");
    cJSON_AddItemToArray(notes, cJSON_CreateString("tune_from is deprecated and ignored: the tuned "
                                                   "source is always computed (tuned_source)"));
  }
  api_reply r = {0};
  rc = store(ctx, "compare", b.req.hw.name, body, len, doc, &r, err);
  *out = r.json;
cleanup:
  plan_result_dispose(&ra), plan_result_dispose(&rb);
  plan_in_dispose(&a), plan_in_dispose(&b);
  cJSON_Delete(doc);
  cJSON_Delete(req);
  return rc;
}

int api_compare(api_ctx *ctx, const char *body, size_t len, char **out, svc_err *err) {
  return api_compare_ex(ctx, body, len, NULL, NULL, out, err);
}
