/* POST /v1/estimate and `cdplan estimate`: a batch of ops priced on one
 * accelerator, results in the same order. Each op is decoded and checked
 * (kind, sizes in range, a dtype the hardware has) before anything is
 * priced, so a bad op anywhere fails the whole request with its index in
 * the field path. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"

#define MAX_OPS 4096
#define DIM_MAX 16777216LL /* 2^24 per GEMM dimension */

static const char *const gemm_fields[] = {"op", "m", "n", "k", "dtype", "batch", "layout", NULL};
static const char *const emb_fields[] = {"op",      "rows",  "dim",  "batch",
                                         "pooling", "dtype", "pass", NULL};
static const char *const ew_fields[] = {"op", "kind", "numel", "dtype", NULL};
static const char *const coll_fields[] = {"op", "bytes", "ranks", "scope", "gpus_per_node", NULL};

/* A dtype name the hardware supports; def when absent. */
static int get_dtype(const cJSON *op, const char *path, const cost_hw *hw, const char *def,
                     int *out, svc_err *err) {
  const char *s = def;
  char f[96];
  int rc = api_get_str(op, "dtype", path, 0, 8, NULL, &s, err);
  if (rc) return rc;
  int dt = cost_dtype_parse(s);
  if (dt < 0)
    return svc_err_set(err, SVC_BAD_FIELD, api_path(f, sizeof f, path, "dtype"),
                       "%s: unknown dtype '%s'", f, s);
  if (hw->peak_flops[dt] <= 0)
    return svc_err_set(err, SVC_UNSUPPORTED_DTYPE, api_path(f, sizeof f, path, "dtype"),
                       "%s: %s has no %s support", f, hw->name, s);
  *out = dt;
  return 0;
}

/* A string member that must be one of the names parse() knows. */
static int get_enum(const cJSON *op, const char *key, const char *path, int required,
                    const char *def, int (*parse)(const char *), int *out, svc_err *err) {
  const char *s = def;
  char f[96];
  int rc = api_get_str(op, key, path, required, 32, NULL, &s, err);
  if (rc) return rc;
  int v = parse(s);
  if (v < 0)
    return svc_err_set(err, SVC_BAD_FIELD, api_path(f, sizeof f, path, key),
                       "%s: unknown value '%s'", f, s);
  *out = v;
  return 0;
}

/* Map the cost model's own refusals (COST_E*) to a client error naming
 * the op: validation let the op through, but the model cannot price it. */
static int modelled(int cost_rc, const cost_hw *hw, const char *p, svc_err *err) {
  if (cost_rc >= 0) return 0;
  return svc_err_set(err, cost_rc == COST_EDTYPE ? SVC_UNSUPPORTED_DTYPE : SVC_BAD_FIELD, p,
                     "%s cannot be priced on %s (%s)", p, hw->name,
                     cost_rc == COST_ENOHW ? "the descriptor lacks a figure it needs"
                                           : "sizes out of the model's range");
}

static int price_gemm(const cost_hw *hw, const cJSON *op, const char *p, cost_result *r,
                      svc_err *err) {
  cost_gemm_op g = {.batch = 1, .layout = "nn"};
  const char *layout = "nn";
  int rc;
  if ((rc = api_check_fields(op, gemm_fields, p, err)) ||
      (rc = api_get_int(op, "m", p, 1, 1, DIM_MAX, &g.m, err)) ||
      (rc = api_get_int(op, "n", p, 1, 1, DIM_MAX, &g.n, err)) ||
      (rc = api_get_int(op, "k", p, 1, 1, DIM_MAX, &g.k, err)) ||
      (rc = api_get_int(op, "batch", p, 0, 1, 65536, &g.batch, err)) ||
      (rc = get_dtype(op, p, hw, "bf16", &g.dtype, err)) ||
      (rc = api_get_str(op, "layout", p, 0, 2, "nt", &layout, err)))
    return rc;
  if (strlen(layout) != 2) {
    char f[96];
    return svc_err_set(err, SVC_BAD_FIELD, api_path(f, sizeof f, p, "layout"),
                       "%s must be nn, nt, tn or tt", f);
  }
  memcpy(g.layout, layout, 3);
  return modelled(cost_gemm(hw, &g, r), hw, p, err);
}

static int price_embedding(const cost_hw *hw, const cJSON *op, const char *p, cost_result *r,
                           svc_err *err) {
  cost_embedding_op e = {0};
  int rc;
  if ((rc = api_check_fields(op, emb_fields, p, err)) ||
      (rc = api_get_int(op, "rows", p, 1, 1, 100000000000LL, &e.rows, err)) ||
      (rc = api_get_int(op, "dim", p, 1, 1, 65536, &e.dim, err)) ||
      (rc = api_get_int(op, "batch", p, 1, 1, 100000000, &e.batch, err)) ||
      (rc = api_get_int(op, "pooling", p, 0, 1, 100000, &e.pooling, err)) ||
      (rc = get_dtype(op, p, hw, "fp32", &e.dtype, err)) ||
      (rc = get_enum(op, "pass", p, 0, "fwd", cost_emb_pass_parse, &e.pass, err)))
    return rc;
  if (e.pooling == 0) e.pooling = 1;
  return modelled(cost_embedding_bag(hw, &e, r), hw, p, err);
}

static int price_elementwise(const cost_hw *hw, const cJSON *op, const char *p, cost_result *r,
                             svc_err *err) {
  cost_elementwise_op e = {0};
  int rc;
  if ((rc = api_check_fields(op, ew_fields, p, err)) ||
      (rc = get_enum(op, "kind", p, 1, NULL, cost_ew_kind_parse, &e.kind, err)) ||
      (rc = api_get_int(op, "numel", p, 1, 1, 1000000000000LL, &e.numel, err)) ||
      (rc = get_dtype(op, p, hw, "bf16", &e.dtype, err)))
    return rc;
  return modelled(cost_elementwise(hw, &e, r), hw, p, err);
}

static int price_collective(const cost_hw *hw, int kind, const cJSON *op, const char *p,
                            cost_result *r, svc_err *err) {
  cost_collective_op c = {.kind = kind, .ranks = 1};
  int rc;
  if ((rc = api_check_fields(op, coll_fields, p, err)) ||
      (rc = api_get_num(op, "bytes", p, 1, 1, 1e13, &c.bytes, err)) ||
      (rc = api_get_int(op, "ranks", p, 1, 1, 1000000, &c.ranks, err)) ||
      (rc = get_enum(op, "scope", p, 0, "node", cost_scope_parse, &c.scope, err)) ||
      (rc = api_get_int(op, "gpus_per_node", p, 0, 1, 1000000, &c.gpus_per_node, err)))
    return rc;
  /* One node cannot hold more GPUs than its scale-up domain: pricing 64
   * ranks at NVLink speed would be silently wrong by the NIC's ratio. */
  int64_t dom = hw->scaleup_domain > 0 ? hw->scaleup_domain : 8;
  char f[96];
  if (c.scope == COST_SCOPE_NODE && c.ranks > dom)
    return svc_err_set(err, SVC_OUT_OF_RANGE, api_path(f, sizeof f, p, "ranks"),
                       "%s: %lld ranks do not fit one scale-up domain of %s (%lld GPUs); "
                       "use scope cluster (with gpus_per_node)",
                       f, (long long)c.ranks, hw->name, (long long)dom);
  if (c.gpus_per_node > dom)
    return svc_err_set(err, SVC_OUT_OF_RANGE, api_path(f, sizeof f, p, "gpus_per_node"),
                       "%s: %s has %lld GPUs per scale-up domain (got %lld)", f, hw->name,
                       (long long)dom, (long long)c.gpus_per_node);
  return modelled(cost_collective(hw, &c, r), hw, p, err);
}

static int price(const cost_hw *hw, const cJSON *op, const char *p, const char **kind,
                 cost_result *r, svc_err *err) {
  const char *name = NULL;
  char f[96];
  int rc, coll;
  if (!cJSON_IsObject(op)) return svc_err_set(err, SVC_BAD_FIELD, p, "%s must be an object", p);
  if ((rc = api_get_str(op, "op", p, 1, 32, NULL, &name, err))) return rc;
  *kind = name;
  if (!strcmp(name, "gemm"))
    rc = price_gemm(hw, op, p, r, err);
  else if (!strcmp(name, "embedding_bag"))
    rc = price_embedding(hw, op, p, r, err);
  else if (!strcmp(name, "elementwise"))
    rc = price_elementwise(hw, op, p, r, err);
  else if ((coll = cost_coll_kind_parse(name)) >= 0)
    rc = price_collective(hw, coll, op, p, r, err);
  else
    return svc_err_set(err, SVC_BAD_FIELD, api_path(f, sizeof f, p, "op"),
                       "%s: unknown op '%.32s' (gemm, embedding_bag, elementwise, allreduce, "
                       "allgather, reducescatter, alltoall)",
                       f, name);
  return rc;
}

static cJSON *result_json(const char *kind, const cost_result *r) {
  cJSON *o = cJSON_CreateObject(), *terms;
  cJSON_AddStringToObject(o, "op", kind);
  cJSON_AddNumberToObject(o, "ms", r->ms);
  cJSON_AddStringToObject(o, "bound", cost_bound_name(r->bound));
  cJSON_AddNumberToObject(o, "flops", r->flops);
  cJSON_AddNumberToObject(o, "bytes", r->bytes);
  cJSON_AddNumberToObject(o, "achieved_tflops", r->achieved_flops_per_s / 1e12);
  cJSON_AddNumberToObject(o, "achieved_gb_per_s", r->achieved_bytes_per_s / 1e9);
  if (r->detail) cJSON_AddStringToObject(o, "algorithm", r->detail);
  terms = cJSON_AddObjectToObject(o, "terms");
  for (int i = 0; i < r->n_terms && i < COST_MAX_TERMS; i++)
    cJSON_AddNumberToObject(terms, r->terms[i].name, r->terms[i].value);
  return o;
}

int api_estimate(api_ctx *ctx, const char *body, size_t len, char **out, svc_err *err) {
  static const char *const top[] = {"hardware", "ops", "calibration", NULL};
  cJSON *req = NULL, *resp = NULL, *results;
  const char *hwname = NULL, *calib = "latest";
  cost_hw hw;
  int rc, i = 0;
  *out = NULL;
  if ((rc = api_request_hw(ctx, body, len, top, &req, &hwname, &calib, err))) return rc;
  const cJSON *ops = cJSON_GetObjectItemCaseSensitive(req, "ops");
  if (!cJSON_IsArray(ops) || cJSON_GetArraySize(ops) == 0 || cJSON_GetArraySize(ops) > MAX_OPS) {
    rc = svc_err_set(err, ops ? SVC_BAD_FIELD : SVC_MISSING_FIELD, "ops",
                     "ops must be an array of 1 to %d ops", MAX_OPS);
    goto cleanup;
  }
  if ((rc = api_hw_lookup(ctx, hwname, !strcmp(calib, "latest"), &hw, err))) goto cleanup;
  resp = cJSON_CreateObject();
  cJSON_AddStringToObject(resp, "hardware", hw.name);
  cJSON_AddItemToObject(resp, "provenance", api_provenance_json(&hw));
  cJSON_AddNumberToObject(resp, "calibration", hw.calib.version);
  results = cJSON_AddArrayToObject(resp, "results");
  for (const cJSON *op = ops->child; op; op = op->next, i++) {
    char p[32];
    const char *kind = "";
    cost_result r;
    snprintf(p, sizeof p, "ops[%d]", i);
    if ((rc = price(&hw, op, p, &kind, &r, err))) goto cleanup;
    cJSON_AddItemToArray(results, result_json(kind, &r));
  }
  if (!(*out = api_print(resp))) rc = svc_err_set(err, SVC_NOMEM, "", NULL);
cleanup:
  cJSON_Delete(req);
  cJSON_Delete(resp);
  return rc;
}
