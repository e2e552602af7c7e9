/* api/workload.c: JSON <-> the step model's workload and recipe structs,
 * and the loader of whole-step measurement files. Every number is checked
 * (integer, range) and every object's members are whitelisted, so a bad
 * workload fails with 400 naming its field ("workload.tables[3].rows");
 * the cross-field checks (dims vs the bottom MLP, parallel sizes, byte
 * counts that would overflow) live in api_step_check.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#include "api/api_meas.h"
#include "api/api_step.h"

#define SIZE_MAX_ROWS 4611686018427387904LL /* 2^62 */

static int get_enum(const cJSON *o, const char *key, const char *path, int (*parse)(const char *),
                    int *out, svc_err *err) {
  const char *s = NULL;
  char f[160];
  int rc = api_get_str(o, key, path, 0, 32, NULL, &s, err);
  if (rc || !s) return rc;
  int v = parse(s);
  if (v < 0)
    return svc_err_set(err, SVC_BAD_FIELD, api_path(f, sizeof f, path, key),
                       "%s: unknown value '%s'", f, s);
  *out = v;
  return 0;
}

static int parse_dtype_dense(const char *s) {
  int dt = cost_dtype_parse(s);
  return dt == COST_DT_FP32 || dt == COST_DT_TF32 || dt == COST_DT_BF16 || dt == COST_DT_FP16 ||
                 dt == COST_DT_FP8
             ? dt
             : -1;
}
static int parse_dtype_emb(const char *s) {
  int dt = cost_dtype_parse(s);
  return dt == COST_DT_FP32 || dt == COST_DT_BF16 || dt == COST_DT_FP16 || dt == COST_DT_FP8 ||
                 dt == COST_DT_INT8
             ? dt
             : -1;
}

/* An array of 1..COST_STEP_MAX_LAYERS positive integer widths. */
static int get_widths(const cJSON *o, const char *key, const char *path, int64_t *out, int *n,
                      svc_err *err) {
  char f[160], fi[176];
  const cJSON *arr = cJSON_GetObjectItemCaseSensitive(o, key);
  api_path(f, sizeof f, path, key);
  if (!arr) return svc_err_set(err, SVC_MISSING_FIELD, f, "%s is required", f);
  if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) < 1 ||
      cJSON_GetArraySize(arr) > COST_STEP_MAX_LAYERS)
    return svc_err_set(err, SVC_BAD_FIELD, f, "%s must be an array of 1 to %d widths", f,
                       COST_STEP_MAX_LAYERS);
  int i = 0;
  for (const cJSON *it = arr->child; it; it = it->next, i++) {
    snprintf(fi, sizeof fi, "%s[%d]", f, i);
    if (!cJSON_IsNumber(it) || !isfinite(it->valuedouble) ||
        floor(it->valuedouble) != it->valuedouble)
      return svc_err_set(err, SVC_BAD_FIELD, fi, "%s must be an integer", fi);
    if (it->valuedouble < 1 || it->valuedouble > 1048576)
      return svc_err_set(err, SVC_OUT_OF_RANGE, fi, "%s must be between 1 and 1048576", fi);
    out[i] = (int64_t)it->valuedouble;
  }
  *n = i;
  return 0;
}

static int decode_table(const cJSON *t, const char *p, cost_table *o, svc_err *err) {
  static const char *const fields[] = {"name",     "rows",      "dim",        "pooling", "count",
                                       "sharding", "placement", "row_shards", NULL};
  const char *name = NULL;
  int rc;
  memset(o, 0, sizeof *o);
  o->pooling = 1;
  o->count = 1;
  o->sharding = o->placement = -1;
  if (!cJSON_IsObject(t)) return svc_err_set(err, SVC_BAD_FIELD, p, "%s must be an object", p);
  if ((rc = api_check_fields(t, fields, p, err)) ||
      (rc = api_get_str(t, "name", p, 0, sizeof o->name - 1, NULL, &name, err)) ||
      (rc = api_get_int(t, "rows", p, 1, 1, SIZE_MAX_ROWS, &o->rows, err)) ||
      (rc = api_get_int(t, "dim", p, 1, 1, 65536, &o->dim, err)) ||
      (rc = api_get_int(t, "pooling", p, 0, 1, 100000, &o->pooling, err)) ||
      (rc = api_get_int(t, "count", p, 0, 1, API_STEP_MAX_TABLE_COUNT, &o->count, err)) ||
      (rc = get_enum(t, "sharding", p, cost_sharding_parse, &o->sharding, err)) ||
      (rc = get_enum(t, "placement", p, cost_placement_parse, &o->placement, err)) ||
      (rc = api_get_int(t, "row_shards", p, 0, 1, 1048576, &o->row_shards, err)))
    return rc;
  if (name) svc_strlcpy(o->name, name, sizeof o->name);
  return 0;
}

/* workload.dense_block: {"out", "gemms": [{"in", "out", "count",
 * "rows_per_sample"}]} or {"out", "params", "flops_per_sample"}. */
static int decode_block(const cJSON *doc, const char *path, cost_dense_block *b, svc_err *err) {
  static const char *const fields[] = {"out", "gemms", "params", "flops_per_sample", NULL};
  static const char *const g_fields[] = {"in", "out", "count", "rows_per_sample", NULL};
  char f[176], fi[192];
  int rc;
  memset(b, 0, sizeof *b);
  if (!cJSON_IsObject(doc))
    return svc_err_set(err, SVC_BAD_FIELD, path, "%s must be an object", path);
  if ((rc = api_check_fields(doc, fields, path, err)) ||
      (rc = api_get_int(doc, "out", path, 1, 1, 1048576, &b->out, err)) ||
      (rc = api_get_num(doc, "params", path, 0, 1.0, 1e13, &b->params, err)) ||
      (rc = api_get_num(doc, "flops_per_sample", path, 0, 1.0, 1e15, &b->flops_per_sample, err)))
    return rc;
  const cJSON *gemms = cJSON_GetObjectItemCaseSensitive(doc, "gemms");
  int opaque = b->params > 0 || b->flops_per_sample > 0;
  api_path(f, sizeof f, path, "gemms");
  if (gemms && opaque)
    return svc_err_set(err, SVC_BAD_FIELD, f,
                       "%s: give either gemms or params and flops_per_sample, not both", f);
  if (!gemms) {
    if (!(b->params > 0) || !(b->flops_per_sample > 0))
      return svc_err_set(
          err, SVC_MISSING_FIELD,
          api_path(fi, sizeof fi, path, b->params > 0 ? "flops_per_sample" : "params"),
          "%s is required (a dense block is gemms, or params and flops_per_sample)", fi);
    return 0;
  }
  int n = cJSON_GetArraySize(gemms);
  if (!cJSON_IsArray(gemms) || n < 1 || n > COST_STEP_MAX_BLOCK_GEMMS)
    return svc_err_set(err, SVC_BAD_FIELD, f, "%s must be an array of 1 to %d GEMMs", f,
                       COST_STEP_MAX_BLOCK_GEMMS);
  int i = 0;
  for (const cJSON *g = gemms->child; g; g = g->next, i++) {
    cost_block_gemm *o = &b->gemms[i];
    snprintf(fi, sizeof fi, "%s[%d]", f, i);
    o->count = o->rows = 1;
    if (!cJSON_IsObject(g)) return svc_err_set(err, SVC_BAD_FIELD, fi, "%s must be an object", fi);
    if ((rc = api_check_fields(g, g_fields, fi, err)) ||
        (rc = api_get_int(g, "in", fi, 1, 1, 1048576, &o->in, err)) ||
        (rc = api_get_int(g, "out", fi, 1, 1, 1048576, &o->out, err)) ||
        (rc = api_get_int(g, "count", fi, 0, 1, 4096, &o->count, err)) ||
        (rc = api_get_int(g, "rows_per_sample", fi, 0, 1, 65536, &o->rows, err)))
      return rc;
  }
  b->n_gemms = (size_t)n;
  return 0;
}

cJSON *api_dense_block_json(const cost_dlrm *d) {
  const cost_dense_block *b = &d->block;
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  double params, flops, layers;
  cost_dense_block_size(b, &params, &flops, &layers);
  cJSON_AddStringToObject(o, "form", b->n_gemms ? "gemms" : "params_flops");
  cJSON_AddNumberToObject(o, "params", params);
  cJSON_AddNumberToObject(o, "forward_flops_per_sample", flops);
  cJSON_AddNumberToObject(o, "out", (double)b->out);
  if (!b->n_gemms) {
    int64_t w, rows;
    cost_dense_block_square(b, &w, &rows);
    cJSON *sq = cJSON_AddObjectToObject(o, "priced_as");
    cJSON_AddNumberToObject(sq, "width", (double)w);
    cJSON_AddNumberToObject(sq, "rows_per_sample", (double)rows);
    cJSON_AddStringToObject(o, "meaning",
                            "one square linear layer with the block's parameters and FLOPs: "
                            "large square GEMMs run nearest peak, so this is the fast end of what "
                            "the block can take; give its gemms for a sure time");
  } else {
    cJSON_AddStringToObject(o, "meaning",
                            "each GEMM priced as a linear layer (forward, dgrad, wgrad, bias and "
                            "activation kernels) over rows_per_sample x batch rows");
  }
  return o;
}

static int decode_dlrm(const cJSON *doc, const char *path, cost_dlrm *d, cost_table **tabs,
                       svc_err *err) {
  static const char *const fields[] = {"kind",
                                       "name",
                                       "dense_features",
                                       "tables",
                                       "bottom_mlp",
                                       "top_mlp",
                                       "interaction",
                                       "cross_layers",
                                       "cross_rank",
                                       "pad_interaction_to",
                                       "optimizers",
                                       "dense_block",
                                       NULL};
  static const char *const opt_fields[] = {"dense", "sparse", NULL};
  char f[160], fi[176];
  int rc;
  d->interaction = COST_INTER_DOT;
  d->dense_optimizer = COST_OPT_ADAM;
  d->sparse_optimizer = COST_OPT_SGD;
  if ((rc = api_check_fields(doc, fields, path, err)) ||
      (rc = api_get_int(doc, "dense_features", path, 1, 1, 1048576, &d->dense_features, err)) ||
      (rc = get_widths(doc, "bottom_mlp", path, d->bottom, &d->n_bottom, err)) ||
      (rc = get_widths(doc, "top_mlp", path, d->top, &d->n_top, err)) ||
      (rc = get_enum(doc, "interaction", path, cost_interaction_parse, &d->interaction, err)) ||
      (rc = api_get_int(doc, "cross_layers", path, 0, 0, 64, &d->cross_layers, err)) ||
      (rc = api_get_int(doc, "cross_rank", path, 0, 1, 1 << 20, &d->cross_rank, err)) ||
      (rc = api_get_int(doc, "pad_interaction_to", path, 0, 0, 1 << 24, &d->pad_interaction_to,
                        err)))
    return rc;
  const cJSON *opt = cJSON_GetObjectItemCaseSensitive(doc, "optimizers");
  if (opt) {
    api_path(f, sizeof f, path, "optimizers");
    if (!cJSON_IsObject(opt)) return svc_err_set(err, SVC_BAD_FIELD, f, "%s must be an object", f);
    if ((rc = api_check_fields(opt, opt_fields, f, err)) ||
        (rc = get_enum(opt, "dense", f, cost_optimizer_parse, &d->dense_optimizer, err)) ||
        (rc = get_enum(opt, "sparse", f, cost_optimizer_parse, &d->sparse_optimizer, err)))
      return rc;
    if (d->dense_optimizer == COST_OPT_ROWWISE_ADAGRAD)
      return svc_err_set(err, SVC_BAD_FIELD, api_path(fi, sizeof fi, f, "dense"),
                         "%s: rowwise_adagrad is for embedding tables (sparse)", fi);
  }
  if (d->interaction == COST_INTER_DCN && d->cross_layers == 0) d->cross_layers = 3;
  if (d->cross_layers > 0 && d->interaction != COST_INTER_DCN)
    return svc_err_set(err, SVC_BAD_FIELD, api_path(f, sizeof f, path, "cross_layers"),
                       "%s: cross_layers needs interaction dcn", f);
  const cJSON *blk = cJSON_GetObjectItemCaseSensitive(doc, "dense_block");
  if (blk && (rc = decode_block(blk, api_path(f, sizeof f, path, "dense_block"), &d->block, err)))
    return rc;
  if (d->cross_rank > 0 && d->interaction != COST_INTER_DCN)
    return svc_err_set(err, SVC_BAD_FIELD, api_path(f, sizeof f, path, "cross_rank"),
                       "%s: cross_rank needs interaction dcn", f);
  const cJSON *tables = cJSON_GetObjectItemCaseSensitive(doc, "tables");
  api_path(f, sizeof f, path, "tables");
  if (!tables) return svc_err_set(err, SVC_MISSING_FIELD, f, "%s is required", f);
  int n = cJSON_GetArraySize(tables);
  if (!cJSON_IsArray(tables) || n < 1 || n > API_STEP_MAX_TABLES)
    return svc_err_set(err, SVC_BAD_FIELD, f, "%s must be an array of 1 to %d tables", f,
                       API_STEP_MAX_TABLES);
  if (!(*tabs = calloc((size_t)n, sizeof **tabs))) return svc_err_set(err, SVC_NOMEM, "", NULL);
  int i = 0;
  int64_t total = 0;
  for (const cJSON *t = tables->child; t; t = t->next, i++) {
    snprintf(fi, sizeof fi, "%s[%d]", f, i);
    if ((rc = decode_table(t, fi, &(*tabs)[i], err))) return rc;
    total += (*tabs)[i].count;
    if (total > API_STEP_MAX_TABLE_COUNT)
      return svc_err_set(err, SVC_OUT_OF_RANGE, fi, "%s: more than %d tables in total", fi,
                         API_STEP_MAX_TABLE_COUNT);
  }
  d->tables = *tabs;
  d->n_tables = (size_t)n;
  return 0;
}

static int decode_transformer(const cJSON *doc, const char *path, cost_transformer *t,
                              svc_err *err) {
  static const char *const fields[] = {
      "kind", "name",      "layers", "hidden", "heads", "kv_heads", "ffn",      "seq_len", "vocab",
      "moe",  "attention", "mlp",    "norm",   "loss",  "dropout",  "position", NULL};
  static const char *const moe_fields[] = {"experts", "top_k", NULL};
  char f[160];
  int rc;
  if ((rc = api_check_fields(doc, fields, path, err)) ||
      (rc = api_get_int(doc, "layers", path, 1, 1, 100000, &t->layers, err)) ||
      (rc = api_get_int(doc, "hidden", path, 1, 1, 1 << 20, &t->hidden, err)) ||
      (rc = api_get_int(doc, "heads", path, 1, 1, 1 << 16, &t->heads, err)) ||
      (rc = api_get_int(doc, "kv_heads", path, 0, 1, 1 << 16, &t->kv_heads, err)) ||
      (rc = api_get_int(doc, "ffn", path, 0, 1, 1 << 22, &t->ffn, err)) ||
      (rc = api_get_int(doc, "seq_len", path, 1, 1, 1 << 22, &t->seq_len, err)) ||
      (rc = api_get_int(doc, "vocab", path, 1, 1, 1 << 24, &t->vocab, err)) ||
      (rc = get_enum(doc, "attention", path, cost_attention_parse, &t->attention, err)) ||
      (rc = get_enum(doc, "mlp", path, cost_mlp_parse, &t->mlp, err)) ||
      (rc = get_enum(doc, "norm", path, cost_norm_parse, &t->norm, err)) ||
      (rc = get_enum(doc, "loss", path, cost_loss_parse, &t->loss, err)) ||
      (rc = get_enum(doc, "position", path, cost_position_parse, &t->position, err)) ||
      (rc = api_get_num(doc, "dropout", path, 0, 0.0, 0.9, &t->dropout, err)))
    return rc;
  const cJSON *moe = cJSON_GetObjectItemCaseSensitive(doc, "moe");
  if (moe) {
    api_path(f, sizeof f, path, "moe");
    if (!cJSON_IsObject(moe)) return svc_err_set(err, SVC_BAD_FIELD, f, "%s must be an object", f);
    t->moe_top_k = 1;
    if ((rc = api_check_fields(moe, moe_fields, f, err)) ||
        (rc = api_get_int(moe, "experts", f, 1, 1, 4096, &t->moe_experts, err)) ||
        (rc = api_get_int(moe, "top_k", f, 0, 1, 64, &t->moe_top_k, err)))
      return rc;
  }
  return 0;
}

void api_workload_dispose(cost_workload *w) {
  if (!w) return;
  free((void *)w->dlrm.tables);
  w->dlrm.tables = NULL;
  w->dlrm.n_tables = 0;
}

int api_workload_decode(const cJSON *doc, const char *path, cost_workload *out, svc_err *err) {
  const char *kind = NULL, *name = NULL;
  char f[160];
  cost_table *tabs = NULL;
  int rc;
  memset(out, 0, sizeof *out);
  if (!cJSON_IsObject(doc))
    return svc_err_set(err, doc ? SVC_BAD_FIELD : SVC_MISSING_FIELD, path, "%s must be an object",
                       path);
  if ((rc = api_get_str(doc, "kind", path, 1, 16, NULL, &kind, err)) ||
      (rc = api_get_str(doc, "name", path, 0, 128, NULL, &name, err)))
    return rc;
  if (!strcmp(kind, "dlrm")) {
    out->kind = COST_WL_DLRM;
    rc = decode_dlrm(doc, path, &out->dlrm, &tabs, err);
    if (rc)
      free(tabs);
    else
      out->dlrm.tables = tabs;
    if (rc) out->dlrm.tables = NULL;
    return rc;
  }
  if (!strcmp(kind, "transformer")) {
    out->kind = COST_WL_TRANSFORMER;
    return decode_transformer(doc, path, &out->tf, err);
  }
  return svc_err_set(err, SVC_BAD_FIELD, api_path(f, sizeof f, path, "kind"),
                     "%s must be dlrm or transformer", f);
}

int api_recipe_decode(const cJSON *doc, const char *path, cost_recipe *r, svc_err *err) {
  static const char *const fields[] = {"gpus",
                                       "batch_per_gpu",
                                       "tp",
                                       "pp",
                                       "global_batch",
                                       "gpus_per_node",
                                       "precision",
                                       "embedding_precision",
                                       "framework",
                                       "sharding",
                                       "placement",
                                       "checkpointing",
                                       "dense_parallel",
                                       "pad_to",
                                       "sequence_parallel",
                                       "vp",
                                       "cp",
                                       "host_op_us",
                                       "triton_launch_us",
                                       "host_mini_batch",
                                       "host_mini_step_ms",
                                       NULL};
  char f[160];
  int rc;
  cost_recipe_init(r);
  if (!cJSON_IsObject(doc))
    return svc_err_set(err, doc ? SVC_BAD_FIELD : SVC_MISSING_FIELD, path, "%s must be an object",
                       path);
  if ((rc = api_check_fields(doc, fields, path, err)) ||
      (rc = api_get_int(doc, "gpus", path, 0, 1, 1000000, &r->gpus, err)) ||
      (rc = api_get_int(doc, "batch_per_gpu", path, 1, 1, 1LL << 31, &r->batch_per_gpu, err)) ||
      (rc = api_get_int(doc, "tp", path, 0, 1, 1024, &r->tp, err)) ||
      (rc = api_get_int(doc, "pp", path, 0, 1, 4096, &r->pp, err)) ||
      (rc = api_get_int(doc, "global_batch", path, 0, 1, 1LL << 40, &r->global_batch, err)) ||
      (rc = api_get_int(doc, "gpus_per_node", path, 0, 1, 1024, &r->gpus_per_node, err)) ||
      (rc = get_enum(doc, "precision", path, parse_dtype_dense, &r->precision, err)) ||
      (rc = get_enum(doc, "embedding_precision", path, parse_dtype_emb, &r->embedding_precision,
                     err)) ||
      (rc = get_enum(doc, "framework", path, cost_framework_parse, &r->framework, err)) ||
      (rc = get_enum(doc, "sharding", path, cost_sharding_parse, &r->sharding, err)) ||
      (rc = get_enum(doc, "placement", path, cost_placement_parse, &r->placement, err)) ||
      (rc = get_enum(doc, "checkpointing", path, cost_ckpt_parse, &r->checkpointing, err)) ||
      (rc = get_enum(doc, "dense_parallel", path, cost_dense_parallel_parse, &r->dense_parallel,
                     err)) ||
      (rc = api_get_int(doc, "pad_to", path, 0, 0, 4096, &r->pad_to, err)) ||
      (rc = api_get_int(doc, "vp", path, 0, 1, 1024, &r->vp, err)) ||
      (rc = api_get_int(doc, "cp", path, 0, 1, 1024, &r->cp, err)) ||
      /* host speed per machine: a measured host time per op / per Triton
       * launch (us; the runner's host probe) */
      (rc = api_get_num(doc, "host_op_us", path, 0, 0.1, 10000, &r->host_op_us, err)) ||
      (rc = api_get_num(doc, "triton_launch_us", path, 0, 0.1, 10000, &r->triton_launch_us, err)) ||
      /* the host as the case's own model stepped at a small batch (the
       * runner's host_mini): the batch and its step time, ms */
      (rc = api_get_int(doc, "host_mini_batch", path, 0, 1, 1 << 20, &r->host_mini_batch, err)) ||
      (rc = api_get_num(doc, "host_mini_step_ms", path, 0, 0.001, 1e6, &r->host_mini_step_ms, err)))
    return rc;
  if ((r->host_mini_batch > 0) != (r->host_mini_step_ms > 0)) {
    const char *miss = r->host_mini_batch > 0 ? "host_mini_step_ms" : "host_mini_batch";
    return svc_err_set(err, SVC_MISSING_FIELD, api_path(f, sizeof f, path, miss),
                       "%s is needed with %s (the runner's host_mini: its batch and step_ms)", f,
                       r->host_mini_batch > 0 ? "host_mini_batch" : "host_mini_step_ms");
  }
  if (r->host_mini_batch > 0 && r->host_op_us > 0)
    return svc_err_set(err, SVC_BAD_FIELD, api_path(f, sizeof f, path, "host_mini_step_ms"),
                       "%s: give host_op_us or a host mini step, not both", f);
  const cJSON *sp = cJSON_GetObjectItemCaseSensitive(doc, "sequence_parallel");
  if (sp) {
    if (!cJSON_IsBool(sp))
      return svc_err_set(err, SVC_BAD_FIELD, api_path(f, sizeof f, path, "sequence_parallel"),
                         "%s must be true or false", f);
    r->sequence_parallel = cJSON_IsTrue(sp);
  }
  return 0;
}

int api_meas_case_decode(const char *text, size_t len, cost_workload *w, cost_recipe *r,
                         svc_err *err) {
  cJSON *doc = NULL;
  int rc;
  memset(w, 0, sizeof *w);
  if ((rc = api_parse_body(text, len, &doc, err))) return rc;
  if ((rc = api_workload_decode(cJSON_GetObjectItem(doc, "workload"), "workload", w, err)))
    goto cleanup;
  if ((rc = api_recipe_decode(cJSON_GetObjectItem(doc, "recipe"), "recipe", r, err)))
    api_workload_dispose(w);
cleanup:
  cJSON_Delete(doc);
  return rc;
}

int api_recipe_host_mini(const cost_hw *hw, const cost_workload *w, cost_recipe *r,
                         const char *rpath, int *clamped, svc_err *err) {
  char f[200];
  double op = 0;
  int cl = 0;
  if (clamped) *clamped = 0;
  if (!(r->host_mini_step_ms > 0)) return 0;
  api_path(f, sizeof f, rpath, "host_mini_step_ms");
  int rc = cost_step_host_mini(hw, w, r, &op, &cl);
  if (rc == COST_EINVAL)
    return svc_err_set(err, SVC_BAD_FIELD, f,
                       "%s: this step dispatches no op from the host (%s), so no host time to "
                       "fit",
                       f, cost_framework_name(r->framework));
  if (rc)
    return svc_err_set(err, SVC_BAD_FIELD, f,
                       "%s: the step at host_mini_batch cannot be priced "
                       "(code %d)",
                       f, rc);
  r->host_op_us = op;
  if (clamped) *clamped = cl;
  return 0;
}

int api_step_check(const cost_hw *hw, const cost_workload *w, const cost_recipe *r, const char *wp,
                   const char *rp, svc_err *err) {
  char f[200];
  if (hw->peak_flops[r->precision] <= 0)
    return svc_err_set(err, SVC_UNSUPPORTED_DTYPE, api_path(f, sizeof f, rp, "precision"),
                       "%s: %s has no %s support", f, hw->name,
                       cost_dtype_name((cost_dtype)r->precision));
  if (w->kind == COST_WL_TRANSFORMER) {
    const cost_transformer *t = &w->tf;
    int64_t tp = r->tp, pp = r->pp, vp = r->vp > 1 ? r->vp : 1, cp = r->cp > 1 ? r->cp : 1;
    if (t->hidden % t->heads)
      return svc_err_set(err, SVC_BAD_FIELD, api_path(f, sizeof f, wp, "heads"),
                         "%s must divide hidden (%lld)", f, (long long)t->hidden);
    if (t->kv_heads > 0 && t->heads % t->kv_heads)
      return svc_err_set(err, SVC_BAD_FIELD, api_path(f, sizeof f, wp, "kv_heads"),
                         "%s must divide heads", f);
    if (t->heads % tp || (t->ffn > 0 ? t->ffn : 4 * t->hidden) % tp || t->vocab < tp)
      return svc_err_set(err, SVC_BAD_FIELD, api_path(f, sizeof f, rp, "tp"),
                         "%s must divide heads and ffn", f);
    if (pp > t->layers)
      return svc_err_set(err, SVC_BAD_FIELD, api_path(f, sizeof f, rp, "pp"),
                         "%s must not exceed the layers", f);
    if (vp > 1 && pp < 2)
      return svc_err_set(err, SVC_BAD_FIELD, api_path(f, sizeof f, rp, "vp"), "%s needs pp > 1", f);
    if (t->seq_len % cp)
      return svc_err_set(err, SVC_BAD_FIELD, api_path(f, sizeof f, rp, "cp"),
                         "%s must divide seq_len (%lld)", f, (long long)t->seq_len);
    if (r->gpus % (tp * pp * cp))
      return svc_err_set(err, SVC_BAD_FIELD, api_path(f, sizeof f, rp, "gpus"),
                         "%s must be a multiple of tp x pp x cp", f);
    int64_t dp = r->gpus / (tp * pp * cp);
    if (r->global_batch > 0 && r->global_batch % (r->batch_per_gpu * dp))
      return svc_err_set(err, SVC_BAD_FIELD, api_path(f, sizeof f, rp, "global_batch"),
                         "%s must be a multiple of batch_per_gpu x data-parallel size (%lld)", f,
                         (long long)(r->batch_per_gpu * dp));
    return 0;
  }
  if (r->framework == COST_FW_MEGATRON)
    return svc_err_set(err, SVC_BAD_FIELD, api_path(f, sizeof f, rp, "framework"),
                       "%s: megatron prices transformers only", f);
  const cost_dlrm *d = &w->dlrm;
  double eb = cost_dtype_bytes((cost_dtype)r->embedding_precision);
  int64_t pad = r->pad_to > 1 ? r->pad_to : 1;
  int64_t xdim = (d->bottom[d->n_bottom - 1] + pad - 1) / pad * pad, F = 1, x0 = xdim;
  for (size_t i = 0; i < d->n_tables; i++) {
    const cost_table *t = &d->tables[i];
    int64_t dim = (t->dim + pad - 1) / pad * pad;
    char tp[64];
    snprintf(tp, sizeof tp, "%s.tables[%zu]", wp, i);
    /* rows x dim x bytes must stay inside a 64-bit byte count (with room
     * for the optimizer state): 2^62 */
    if ((double)t->rows * (double)dim * (eb + 8.0) > 4.6e18)
      return svc_err_set(err, SVC_OUT_OF_RANGE, api_path(f, sizeof f, tp, "rows"),
                         "%s: rows x dim x bytes overflows a 64-bit byte count", f);
    if (d->interaction == COST_INTER_DOT && dim != xdim)
      return svc_err_set(err, SVC_BAD_FIELD, api_path(f, sizeof f, tp, "dim"),
                         "%s (%lld) must equal the bottom MLP's output width (%lld) for the dot "
                         "interaction",
                         f, (long long)dim, (long long)xdim);
    /* row_shards: the GPUs a row_wise table is split over, the nodes
     * (scale-up domains) a table_row_wise one is */
    int tsh = t->sharding >= 0 ? t->sharding : r->sharding;
    int64_t gpn = r->gpus_per_node > 0 && r->gpus_per_node < r->gpus ? r->gpus_per_node : r->gpus;
    int64_t most = tsh == COST_SHARD_ROW_WISE ? r->gpus : (r->gpus + gpn - 1) / gpn;
    if (t->row_shards > 0 && tsh != COST_SHARD_ROW_WISE && tsh != COST_SHARD_TABLE_ROW_WISE)
      return svc_err_set(err, SVC_BAD_FIELD, api_path(f, sizeof f, tp, "row_shards"),
                         "%s applies to row_wise and table_row_wise tables only", f);
    if (t->row_shards > most)
      return svc_err_set(err, SVC_OUT_OF_RANGE, api_path(f, sizeof f, tp, "row_shards"),
                         "%s (%lld) must not exceed the %s (%lld)", f, (long long)t->row_shards,
                         tsh == COST_SHARD_ROW_WISE ? "gpus" : "nodes", (long long)most);
    if ((t->placement >= 0 ? t->placement : r->placement) == COST_PLACE_UVM &&
        !(hw->host_link_bw > 0))
      return svc_err_set(err, SVC_BAD_FIELD,
                         api_path(f, sizeof f, t->placement >= 0 ? tp : rp, "placement"),
                         "%s: uvm tables cross the host link, and %s lists no "
                         "host_link_bandwidth_bytes_per_s",
                         f, hw->name);
    F += t->count;
    x0 += dim * t->count;
  }
  if (d->top[d->n_top - 1] != 1)
    return svc_err_set(err, SVC_BAD_FIELD, api_path(f, sizeof f, wp, "top_mlp"),
                       "%s must end with width 1 (the logit)", f);
  if (d->pad_interaction_to > 0) {
    int64_t width = d->interaction == COST_INTER_DOT ? F * (F - 1) / 2 + xdim : x0;
    if (d->pad_interaction_to < width)
      return svc_err_set(err, SVC_BAD_FIELD, api_path(f, sizeof f, wp, "pad_interaction_to"),
                         "%s (%lld) is smaller than the interaction width (%lld)", f,
                         (long long)d->pad_interaction_to, (long long)width);
  }
  if (hw->peak_flops[r->embedding_precision] <= 0 && r->embedding_precision != COST_DT_FP32)
    return svc_err_set(err, SVC_UNSUPPORTED_DTYPE, api_path(f, sizeof f, rp, "embedding_precision"),
                       "%s: %s has no %s support", f, hw->name,
                       cost_dtype_name((cost_dtype)r->embedding_precision));
  return 0;
}

/* ---- whole-step measurement files ---------------------------------------- */

int api_step_meas_detect(const cJSON *doc) {
  const cJSON *rows = cJSON_GetObjectItemCaseSensitive(doc, "rows");
  const cJSON *first = cJSON_IsArray(rows) ? rows->child : NULL;
  return first && cJSON_GetObjectItemCaseSensitive(first, "step_ms") &&
         (cJSON_GetObjectItemCaseSensitive(doc, "table_rows") ||
          cJSON_GetObjectItemCaseSensitive(first, "table_rows"));
}

void api_step_meas_dispose(api_step_meas *m) {
  if (!m) return;
  free(m->s);
  for (size_t i = 0; i < m->n_blocks; i++) free(m->blocks[i]);
  free(m->blocks);
  memset(m, 0, sizeof *m);
}

static int meas_int(const cJSON *o, const char *key, const char *p, int required, int64_t lo,
                    int64_t hi, int64_t *out, svc_err *err) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  if (v && cJSON_IsNull(v)) return 0;
  return api_get_int(o, key, p, required, lo, hi, out, err);
}

/* One row of dlrm_step.json -> a sample (the runner's model: 13 dense
 * features, sum-pooled EmbeddingBags with SGD on sparse grads, dot
 * interaction, fused Adam, eager PyTorch, one GPU). */
static int meas_row(const cJSON *row, const char *p, const cJSON *rows_arr, cost_table *tabs,
                    cost_step_sample *s, svc_err *err) {
  const char *prec = NULL, *place = NULL;
  int64_t batch = 0, dim = 0, pooling = 1, pad = 0;
  double step_ms = 0, peak = 0;
  char f[160];
  int rc;
  memset(s, 0, sizeof *s);
  cost_recipe_init(&s->r);
  if ((rc = meas_int(row, "batch", p, 1, 1, 1LL << 31, &batch, err)) ||
      (rc = meas_int(row, "dim", p, 1, 1, 65536, &dim, err)) ||
      (rc = meas_int(row, "pooling", p, 0, 1, 100000, &pooling, err)) ||
      (rc = meas_int(row, "pad_interaction_to", p, 0, 0, 1 << 24, &pad, err)) ||
      (rc = api_get_str(row, "precision", p, 1, 8, NULL, &prec, err)) ||
      (rc = api_get_num(row, "step_ms", p, 1, 0, 1e9, &step_ms, err)))
    return rc;
  const cJSON *pk = cJSON_GetObjectItemCaseSensitive(row, "peak_mem_bytes");
  if (pk && !cJSON_IsNull(pk) &&
      (rc = api_get_num(row, "peak_mem_bytes", p, 0, 0, 1e15, &peak, err)))
    return rc;
  const cJSON *pl = cJSON_GetObjectItemCaseSensitive(row, "placement");
  if (pl && cJSON_IsString(pl)) place = pl->valuestring;
  int dt = parse_dtype_dense(prec);
  if (dt < 0)
    return svc_err_set(err, SVC_BAD_FIELD, api_path(f, sizeof f, p, "precision"),
                       "%s: unknown precision", f);
  cost_dlrm *d = &s->w.dlrm;
  s->w.kind = COST_WL_DLRM;
  d->dense_features = 13;
  d->interaction = COST_INTER_DOT;
  d->dense_optimizer = COST_OPT_ADAM;
  d->sparse_optimizer = COST_OPT_SGD;
  d->pad_interaction_to = pad;
  if ((rc = get_widths(row, "bottom", p, d->bottom, &d->n_bottom, err)) ||
      (rc = get_widths(row, "top", p, d->top, &d->n_top, err)))
    return rc;
  int i = 0;
  for (const cJSON *it = rows_arr->child; it; it = it->next, i++) {
    if (!cJSON_IsNumber(it) || it->valuedouble < 1 || it->valuedouble > 1e13)
      return svc_err_set(err, SVC_BAD_FIELD, "table_rows", "table_rows[%d] must be a row count", i);
    memset(&tabs[i], 0, sizeof tabs[i]);
    tabs[i].rows = (int64_t)it->valuedouble;
    tabs[i].dim = dim;
    tabs[i].pooling = pooling;
    tabs[i].count = 1;
    tabs[i].sharding = -1;
    tabs[i].placement = -1;
  }
  d->tables = tabs;
  d->n_tables = (size_t)i;
  /* the runner's mixed placement: indices of the tables kept in host memory
   * (CPU lookups) and of those in pinned host memory read by the GPU (uvm) */
  static const char *const keys[2] = {"host_tables", "uvm_tables"};
  static const int places[2] = {COST_PLACE_HOST, COST_PLACE_UVM};
  for (int k = 0; k < 2; k++) {
    const cJSON *ht = cJSON_GetObjectItemCaseSensitive(row, keys[k]);
    if (!ht || cJSON_IsNull(ht)) continue;
    if (!cJSON_IsArray(ht))
      return svc_err_set(err, SVC_BAD_FIELD, api_path(f, sizeof f, p, keys[k]),
                         "%s must be an array of table indices", f);
    for (const cJSON *it = ht->child; it; it = it->next) {
      if (!cJSON_IsNumber(it) || it->valuedouble < 0 || it->valuedouble >= i ||
          it->valuedouble != (double)(int)it->valuedouble)
        return svc_err_set(err, SVC_BAD_FIELD, api_path(f, sizeof f, p, keys[k]),
                           "%s: a table index past table_rows", f);
      tabs[(int)it->valuedouble].placement = places[k];
    }
  }
  s->r.batch_per_gpu = batch;
  s->r.precision = dt;
  s->r.placement = place && !strcmp(place, "host") ? COST_PLACE_HOST : COST_PLACE_HBM;
  s->step_ms = step_ms;
  s->peak_bytes = peak;
  /* the runner's "profile": GPU busy time, which separates the GPU's share
   * of the step from the host's */
  const cJSON *prof = cJSON_GetObjectItemCaseSensitive(row, "profile");
  if (prof && !cJSON_IsNull(prof)) {
    char pp[160];
    double busy = 0;
    api_path(pp, sizeof pp, p, "profile");
    if (!cJSON_IsObject(prof))
      return svc_err_set(err, SVC_BAD_FIELD, pp, "%s must be an object", pp);
    if ((rc = api_get_num(prof, "gpu_busy_ms", pp, 0, 0, 1e9, &busy, err))) return rc;
    s->gpu_busy_ms = busy;
  }
  return 0;
}

int api_step_meas_load(const char *text, size_t len, api_step_meas *out, svc_err *err) {
  cJSON *doc = NULL;
  int rc;
  memset(out, 0, sizeof *out);
  if ((rc = api_parse_body(text, len, &doc, err))) return rc;
  const cJSON *rows = cJSON_GetObjectItemCaseSensitive(doc, "rows");
  const cJSON *top_rows = cJSON_GetObjectItemCaseSensitive(doc, "table_rows");
  int n = cJSON_IsArray(rows) ? cJSON_GetArraySize(rows) : 0;
  if (!api_step_meas_detect(doc) || n < 1) {
    rc = svc_err_set(err, SVC_BAD_FIELD, "rows",
                     "not a step-measurement file (rows with step_ms "
                     "and table_rows)");
    goto cleanup;
  }
  size_t per = 0;
  for (const cJSON *r = rows->child; r; r = r->next) {
    const cJSON *tr = cJSON_GetObjectItemCaseSensitive(r, "table_rows");
    if (!cJSON_IsArray(tr)) tr = top_rows;
    if (!cJSON_IsArray(tr) || cJSON_GetArraySize(tr) < 1 || cJSON_GetArraySize(tr) > 100000) {
      rc = svc_err_set(err, SVC_BAD_FIELD, "table_rows", "table_rows must be an array of counts");
      goto cleanup;
    }
    per += (size_t)cJSON_GetArraySize(tr);
  }
  out->s = calloc((size_t)n, sizeof *out->s);
  out->blocks = calloc(1, sizeof *out->blocks);
  if (out->blocks) out->blocks[0] = calloc(per, sizeof **out->blocks);
  if (out->blocks && out->blocks[0]) out->n_blocks = 1;
  if (!out->s || !out->n_blocks) {
    rc = svc_err_set(err, SVC_NOMEM, "", NULL);
    goto cleanup;
  }
  size_t off = 0;
  int i = 0;
  for (const cJSON *r = rows->child; r; r = r->next, i++) {
    char p[32];
    const cJSON *tr = cJSON_GetObjectItemCaseSensitive(r, "table_rows");
    if (!cJSON_IsArray(tr)) tr = top_rows;
    snprintf(p, sizeof p, "rows[%d]", i);
    if ((rc = meas_row(r, p, tr, out->blocks[0] + off, &out->s[i], err))) goto cleanup;
    off += (size_t)cJSON_GetArraySize(tr);
  }
  out->n = (size_t)n;
cleanup:
  cJSON_Delete(doc);
  if (rc) api_step_meas_dispose(out);
  return rc;
}
