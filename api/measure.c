/* api/measure.c: decode measurement files into cost_sample arrays (see
 * measure.h). The format is told by the rows' fields:
 *   {m, n, k, dtype, ms}                       gemm.json (batch 1, layout nn)
 *   {op: "embedding_bag_sum", rows, dim, dtype, batch, pooling,
 *    fwd_ms, fwd_bwd_sparse_ms}                memory_ops.json (two samples)
 *   {op: "add"|"gelu"|"layernorm"|"softmax" (a "_1024" suffix allowed),
 *    numel, dtype, ms}                         memory_ops.json
 *   {op: "gemm"|"embedding_bag"|"elementwise", ...estimate fields..., ms}
 * Every number is checked finite and in range; a row that fits no format
 * is an error naming it, so a wrong file is never half-used silently.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/measure.h"

static int num(const cJSON *row, const char *key, const char *path, double lo, double hi,
               double *out, svc_err *err) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(row, key);
  char f[128];
  snprintf(f, sizeof f, "%s.%s", path, key);
  if (!v) return svc_err_set(err, SVC_MISSING_FIELD, f, "%s is missing", f);
  if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
    return svc_err_set(err, SVC_BAD_FIELD, f, "%s must be a finite number", f);
  if (v->valuedouble < lo || v->valuedouble > hi)
    return svc_err_set(err, SVC_OUT_OF_RANGE, f, "%s must be in [%g, %g]", f, lo, hi);
  *out = v->valuedouble;
  return 0;
}

static int integer(const cJSON *row, const char *key, const char *path, double lo, double hi,
                   int64_t *out, svc_err *err) {
  double d = 0;
  int rc = num(row, key, path, lo, hi, &d, err);
  if (rc) return rc;
  if (d != floor(d)) {
    char f[128];
    snprintf(f, sizeof f, "%s.%s", path, key);
    return svc_err_set(err, SVC_BAD_FIELD, f, "%s must be an integer", f);
  }
  *out = (int64_t)d;
  return 0;
}

static int dtype_of(const cJSON *row, const char *path, int *out, svc_err *err) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(row, "dtype");
  char f[128];
  snprintf(f, sizeof f, "%s.dtype", path);
  if (!cJSON_IsString(v)) return svc_err_set(err, SVC_MISSING_FIELD, f, "%s must be a string", f);
  int dt = cost_dtype_parse(v->valuestring);
  if (dt < 0) return svc_err_set(err, SVC_BAD_FIELD, f, "unknown dtype in %s", f);
  *out = dt;
  return 0;
}

static const char *op_name(const cJSON *row) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(row, "op");
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* "softmax_1024" -> "softmax", "layer_norm" -> "layernorm". */
static int ew_kind(const char *op) {
  char buf[32];
  size_t n = strcspn(op, "_");
  if (strncmp(op, "layer_norm", 10) == 0) return COST_EW_LAYERNORM;
  if (n >= sizeof buf) return -1;
  memcpy(buf, op, n);
  buf[n] = '\0';
  return cost_ew_kind_parse(buf);
}

#define BIG 1e15

static int gemm_row(const cJSON *row, const char *path, cost_sample *s, svc_err *err) {
  int rc;
  memset(s, 0, sizeof *s);
  s->kind = COST_OP_GEMM;
  s->u.gemm.batch = 1;
  memcpy(s->u.gemm.layout, "nn", 3);
  if ((rc = integer(row, "m", path, 1, BIG, &s->u.gemm.m, err)) ||
      (rc = integer(row, "n", path, 1, BIG, &s->u.gemm.n, err)) ||
      (rc = integer(row, "k", path, 1, BIG, &s->u.gemm.k, err)) ||
      (rc = dtype_of(row, path, &s->u.gemm.dtype, err)) ||
      (rc = num(row, "ms", path, 1e-6, 1e7, &s->ms, err)))
    return rc;
  if (cJSON_GetObjectItemCaseSensitive(row, "batch") &&
      (rc = integer(row, "batch", path, 1, 1e9, &s->u.gemm.batch, err)))
    return rc;
  const cJSON *lay = cJSON_GetObjectItemCaseSensitive(row, "layout");
  if (cJSON_IsString(lay) && strlen(lay->valuestring) == 2)
    memcpy(s->u.gemm.layout, lay->valuestring, 3);
  return 0;
}

static int emb_rows(const cJSON *row, const char *path, cost_sample *s, int *k, svc_err *err) {
  int rc;
  cost_embedding_op e = {0};
  double fwd = 0, both = 0;
  if ((rc = integer(row, "rows", path, 1, BIG, &e.rows, err)) ||
      (rc = integer(row, "dim", path, 1, 1 << 20, &e.dim, err)) ||
      (rc = integer(row, "batch", path, 1, BIG, &e.batch, err)) ||
      (rc = integer(row, "pooling", path, 1, 1 << 20, &e.pooling, err)) ||
      (rc = dtype_of(row, path, &e.dtype, err)))
    return rc;
  *k = 0;
  int has_fwd = cJSON_GetObjectItemCaseSensitive(row, "fwd_ms") != NULL;
  int has_bwd = cJSON_GetObjectItemCaseSensitive(row, "fwd_bwd_sparse_ms") != NULL;
  int has_ms = cJSON_GetObjectItemCaseSensitive(row, "ms") != NULL;
  if (has_fwd && (rc = num(row, "fwd_ms", path, 1e-6, 1e7, &fwd, err))) return rc;
  if (has_bwd && (rc = num(row, "fwd_bwd_sparse_ms", path, 1e-6, 1e7, &both, err))) return rc;
  if (has_fwd) {
    memset(&s[*k], 0, sizeof *s);
    s[*k].kind = COST_OP_EMBEDDING;
    s[*k].u.emb = e;
    s[*k].u.emb.pass = COST_EMB_FWD;
    s[(*k)++].ms = fwd;
  }
  if (has_bwd) {
    memset(&s[*k], 0, sizeof *s);
    s[*k].kind = COST_OP_EMBEDDING;
    s[*k].u.emb = e;
    s[*k].u.emb.pass = COST_EMB_FWD_BWD;
    s[(*k)++].ms = both;
  }
  if (!has_fwd && !has_bwd && has_ms) { /* estimate schema: "pass" + "ms" */
    const cJSON *pv = cJSON_GetObjectItemCaseSensitive(row, "pass");
    e.pass = cJSON_IsString(pv) ? cost_emb_pass_parse(pv->valuestring) : COST_EMB_FWD;
    if (e.pass < 0) {
      char f[128];
      snprintf(f, sizeof f, "%s.pass", path);
      return svc_err_set(err, SVC_BAD_FIELD, f, "%s must be fwd or fwd_bwd", f);
    }
    memset(&s[0], 0, sizeof *s);
    s[0].kind = COST_OP_EMBEDDING;
    s[0].u.emb = e;
    if ((rc = num(row, "ms", path, 1e-6, 1e7, &s[0].ms, err))) return rc;
    *k = 1;
  }
  if (*k == 0) {
    char f[128];
    snprintf(f, sizeof f, "%s.fwd_ms", path);
    return svc_err_set(err, SVC_MISSING_FIELD, f, "%s: no timing (fwd_ms, fwd_bwd_sparse_ms or ms)",
                       path);
  }
  return 0;
}

static int ew_row(const cJSON *row, const char *path, int kind, cost_sample *s, svc_err *err) {
  int rc;
  memset(s, 0, sizeof *s);
  s->kind = COST_OP_ELEMENTWISE;
  s->u.ew.kind = kind;
  if ((rc = integer(row, "numel", path, 1, BIG, &s->u.ew.numel, err)) ||
      (rc = dtype_of(row, path, &s->u.ew.dtype, err)) ||
      (rc = num(row, "ms", path, 1e-6, 1e7, &s->ms, err)))
    return rc;
  return 0;
}

/* Decode one row into s (room for 2); *k samples written. */
static int decode_row(const cJSON *row, const char *path, cost_sample *s, int *k, svc_err *err) {
  *k = 0;
  if (!cJSON_IsObject(row))
    return svc_err_set(err, SVC_BAD_FIELD, path, "%s must be an object", path);
  const char *op = op_name(row);
  if (!op) {
    if (cJSON_GetObjectItemCaseSensitive(row, "m") && cJSON_GetObjectItemCaseSensitive(row, "ms")) {
      *k = 1;
      return gemm_row(row, path, s, err);
    }
    if (cJSON_GetObjectItemCaseSensitive(row, "bm") ||
        cJSON_GetObjectItemCaseSensitive(row, "cublas_ms"))
      return svc_err_set(
          err, SVC_BAD_FIELD, path,
          "Triton config sweeps are not cost samples (use them for kernel selection)");
    if (cJSON_GetObjectItemCaseSensitive(row, "step_ms"))
      return svc_err_set(err, SVC_BAD_FIELD, path,
                         "whole-step timings are not per-op cost samples");
    return svc_err_set(err, SVC_BAD_FIELD, path, "%s: not a gemm, embedding or elementwise timing",
                       path);
  }
  if (strcmp(op, "gemm") == 0) {
    *k = 1;
    return gemm_row(row, path, s, err);
  }
  if (strncmp(op, "embedding_bag", 13) == 0) return emb_rows(row, path, s, k, err);
  /* host-mapped tables and the host link: no op-model sample (the uvm
   * rows go to the uvm fit through api_measure_load_all) */
  if (!strcmp(op, "uvm_embedding_bag_sum") || !strcmp(op, "host_copy")) return 0;
  int kind = strcmp(op, "elementwise") == 0 ? -2 : ew_kind(op);
  if (kind == -2) {
    const cJSON *kv = cJSON_GetObjectItemCaseSensitive(row, "kind");
    kind = cJSON_IsString(kv) ? ew_kind(kv->valuestring) : -1;
  }
  if (kind >= 0) {
    *k = 1;
    return ew_row(row, path, kind, s, err);
  }
  char f[128];
  snprintf(f, sizeof f, "%s.op", path);
  return svc_err_set(err, SVC_BAD_FIELD, f, "unknown op \"%.40s\" in %s", op, f);
}

/* One host-mapped embedding row ({op: "uvm_embedding_bag_sum", rows, dim,
 * dtype, batch, pooling, fwd_ms, fwd_bwd_ms?}). */
static int uvm_row(const cJSON *row, const char *path, cost_uvm_sample *u, svc_err *err) {
  int rc;
  memset(u, 0, sizeof *u);
  if ((rc = integer(row, "rows", path, 1, BIG, &u->rows, err)) ||
      (rc = integer(row, "dim", path, 1, 1 << 20, &u->dim, err)) ||
      (rc = integer(row, "batch", path, 1, BIG, &u->batch, err)) ||
      (rc = integer(row, "pooling", path, 1, 1 << 20, &u->pooling, err)) ||
      (rc = dtype_of(row, path, &u->dtype, err)) ||
      (rc = num(row, "fwd_ms", path, 1e-6, 1e7, &u->fwd_ms, err)))
    return rc;
  if (cJSON_GetObjectItemCaseSensitive(row, "fwd_bwd_ms") &&
      (rc = num(row, "fwd_bwd_ms", path, 1e-6, 1e7, &u->fwd_bwd_ms, err)))
    return rc;
  return 0;
}

int api_measure_load(const char *json_text, size_t len, cost_sample **out, size_t *n,
                     svc_err *err) {
  return api_measure_load_all(json_text, len, out, n, NULL, NULL, err);
}

const char *api_measure_not_samples(const char *json_text, size_t len) {
  cJSON *doc = json_text ? cJSON_ParseWithLength(json_text, len) : NULL;
  const char *why = NULL;
  if (!doc) return NULL; /* the loader reports bad JSON */
  const cJSON *rows = cJSON_IsArray(doc) ? doc : cJSON_GetObjectItemCaseSensitive(doc, "rows");
  const cJSON *r0 = cJSON_IsArray(rows) ? rows->child : NULL;
  if (!cJSON_IsArray(rows) && cJSON_GetObjectItemCaseSensitive(doc, "copy_GBps"))
    why = "device ceilings, not per-op samples";
  else if (cJSON_IsObject(r0) && (cJSON_GetObjectItemCaseSensitive(r0, "configs") ||
                                  cJSON_GetObjectItemCaseSensitive(r0, "cublas_ms") ||
                                  cJSON_GetObjectItemCaseSensitive(r0, "bm")))
    why = "a Triton tile-config sweep (kernel selection data, not cost samples)";
  else if (cJSON_IsObject(r0) && cJSON_GetObjectItemCaseSensitive(r0, "shared_bytes"))
    why = "Triton compile facts (kernel selection data, not cost samples)";
  cJSON_Delete(doc);
  return why;
}

int api_measure_load_all(const char *json_text, size_t len, cost_sample **out, size_t *n,
                         cost_uvm_sample **uvm, size_t *nu, svc_err *err) {
  int rc = 0;
  cJSON *doc = NULL;
  cost_sample *s = NULL;
  cost_uvm_sample *u = NULL;
  size_t mu = 0;
  *out = NULL;
  *n = 0;
  if (uvm) *uvm = NULL, *nu = 0;
  if (!json_text) return svc_err_set(err, SVC_BAD_JSON, "", "no measurement text");
  doc = cJSON_ParseWithLength(json_text, len);
  if (!doc) {
    rc = svc_err_set(err, SVC_BAD_JSON, "", "measurement file is not valid JSON");
    goto cleanup;
  }
  const cJSON *rows = cJSON_IsArray(doc) ? doc : cJSON_GetObjectItemCaseSensitive(doc, "rows");
  if (!cJSON_IsArray(rows)) {
    if (cJSON_GetObjectItemCaseSensitive(doc, "copy_GBps"))
      rc = svc_err_set(err, SVC_BAD_FIELD, "rows",
                       "a ceilings file holds device ceilings, not per-op samples");
    else
      rc = svc_err_set(err, SVC_MISSING_FIELD, "rows", "measurement file has no \"rows\" array");
    goto cleanup;
  }
  int nr = cJSON_GetArraySize(rows);
  if (nr <= 0 || nr > API_MEASURE_MAX_ROWS) {
    rc = svc_err_set(err, SVC_OUT_OF_RANGE, "rows", "rows must hold 1..%d entries",
                     API_MEASURE_MAX_ROWS);
    goto cleanup;
  }
  s = malloc((size_t)nr * 2 * sizeof *s);
  if (uvm) u = malloc((size_t)nr * sizeof *u);
  if (!s || (uvm && !u)) {
    rc = svc_err_set(err, SVC_NOMEM, "", NULL);
    goto cleanup;
  }
  size_t m = 0;
  int i = 0;
  const cJSON *row;
  cJSON_ArrayForEach(row, rows) {
    char path[48];
    int k = 0;
    snprintf(path, sizeof path, "rows[%d]", i++);
    const char *op = cJSON_IsObject(row) ? op_name(row) : NULL;
    if (uvm && op && !strcmp(op, "uvm_embedding_bag_sum")) {
      if ((rc = uvm_row(row, path, &u[mu++], err))) goto cleanup;
      continue;
    }
    if ((rc = decode_row(row, path, &s[m], &k, err))) goto cleanup;
    m += (size_t)k;
  }
  *out = s;
  *n = m;
  s = NULL;
  if (uvm && mu) *uvm = u, *nu = mu, u = NULL;
cleanup:
  free(s);
  free(u);
  cJSON_Delete(doc);
  return rc;
}

int api_flash_load(const char *json_text, size_t len, cost_flash_sample **out, size_t *n,
                   svc_err *err) {
  *out = NULL;
  *n = 0;
  cJSON *doc = json_text ? cJSON_ParseWithLength(json_text, len) : NULL;
  const cJSON *kind = doc ? cJSON_GetObjectItemCaseSensitive(doc, "kind") : NULL;
  if (!cJSON_IsString(kind) || strcmp(kind->valuestring, "attention_sweep")) {
    cJSON_Delete(doc);
    return 1;
  }
  const cJSON *rows = cJSON_GetObjectItemCaseSensitive(doc, "rows");
  int m = cJSON_IsArray(rows) ? cJSON_GetArraySize(rows) : 0, rc = 0;
  if (m < 1 || m > API_MEASURE_MAX_ROWS) {
    cJSON_Delete(doc);
    return svc_err_set(err, SVC_BAD_FIELD, "rows", "an attention sweep needs 1 to %d rows",
                       API_MEASURE_MAX_ROWS);
  }
  cost_flash_sample *s = calloc((size_t)m, sizeof *s);
  if (!s) {
    cJSON_Delete(doc);
    return svc_err_set(err, SVC_NOMEM, "", NULL);
  }
  int k = 0, i = 0;
  for (const cJSON *r = rows->child; r && !rc; r = r->next, i++) {
    char p[32];
    double fb = 0;
    snprintf(p, sizeof p, "rows[%d]", i);
    if (cJSON_GetObjectItemCaseSensitive(r, "error")) continue; /* a shape that did not run */
    cost_flash_sample *o = &s[k];
    if ((rc = integer(r, "b", p, 1, 1 << 20, &o->b, err)) ||
        (rc = integer(r, "heads", p, 1, 4096, &o->heads, err)) ||
        (rc = integer(r, "kv_heads", p, 1, 4096, &o->kv_heads, err)) ||
        (rc = integer(r, "s", p, 1, 1 << 22, &o->s, err)) ||
        (rc = integer(r, "hd", p, 1, 1024, &o->hd, err)) ||
        (rc = num(r, "fwd_ms", p, 1e-6, 1e7, &o->fwd_ms, err)) ||
        (rc = num(r, "fwd_bwd_ms", p, 1e-6, 1e7, &fb, err)))
      break;
    if (fb <= o->fwd_ms) {
      rc = svc_err_set(err, SVC_OUT_OF_RANGE, "rows", "%s: fwd_bwd_ms must exceed fwd_ms", p);
      break;
    }
    o->bwd_ms = fb - o->fwd_ms;
    k++;
  }
  cJSON_Delete(doc);
  if (rc) {
    free(s);
    return rc;
  }
  *out = s;
  *n = (size_t)k;
  return 0;
}
