/* torchrec_export.c: a stored plan's embedding_plan as a Python module that
 * builds TorchRec's ShardingPlan with TorchRec's own helpers
 * (torchrec/distributed/sharding_plan.py at the commit named in
 * tests/fixtures/torchrec_facts.json):
 *   data_parallel(), table_wise(rank=, compute_kernel=),
 *   row_wise(compute_kernel=), column_wise(ranks=, compute_kernel=),
 *   table_row_wise(host_index=), construct_module_sharding_plan(...).
 * What cdplan's plan says and TorchRec does not take is translated, and the
 * module says so in a comment:
 *  - copies of a table with a count (cdplan "t#i") are TorchRec tables "t_i";
 *  - data-parallel tables take TorchRec's only data-parallel kernel, dense;
 *  - "cpu" (a host table served by the CPU in plain PyTorch) is fused_uvm;
 *  - a column split whose shards would be narrower than MIN_CW_DIM (128) or
 *    would not divide the dim evenly keeps the most ranks that do (one rank:
 *    table_wise on the first);
 *  - table_row_wise and data_parallel take no compute_kernel: the kernel is
 *    set on the ParameterSharding construct_module_sharding_plan returns,
 *    and so is CacheParams(load_factor=) for fused_uvm_caching tables (the
 *    plan's cache_ratio, else the planner's default, TorchRec's 0.2).
 */
#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#include "api/api_torchrec.h"
#include "hwdb/hwdb.h"
#include "planner/planner.h"

/* A growing text; on allocation failure it stays failed (bad = 1). */
typedef struct {
  char *s;
  size_t len, cap;
  int bad;
} text;

static void put(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(text *t, const char *fmt, ...) {
  if (t->bad) return;
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t->s ? t->s + t->len : NULL, t->s ? t->cap - t->len : 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
      t->bad = 1;
      return;
    }
    if (t->s && t->len + (size_t)n < t->cap) {
      t->len += (size_t)n;
      return;
    }
    size_t cap = (t->cap ? t->cap * 2 : 4096) + (size_t)n;
    char *ns = realloc(t->s, cap);
    if (!ns) {
      t->bad = 1;
      return;
    }
    t->s = ns, t->cap = cap;
  }
}

/* A Python string literal: quotes, backslashes and control bytes escaped;
 * other bytes (UTF-8) as they are. */
static void put_str(text *t, const char *s) {
  put(t, "\"");
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\')
      put(t, "\\%c", *p);
    else if (*p < 0x20 || *p == 0x7f)
      put(t, "\\x%02x", *p);
    else
      put(t, "%c", *p);
  }
  put(t, "\"");
}

static int module_ok(const char *m) {
  size_t n = strlen(m);
  if (n == 0 || n > 200) return 0;
  int start = 1;
  for (const char *p = m; *p; p++) {
    char c = *p;
    if (c == '.') {
      if (start) return 0;
      start = 1;
    } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
               (!start && c >= '0' && c <= '9')) {
      start = 0;
    } else {
      return 0;
    }
  }
  return !start;
}

/* One workload table copy: the cdplan name ("t#i"), TorchRec's ("t_i"). */
typedef struct {
  char cd[64], tr[64];
  long long rows, dim;
} tr_table;

static int by_tr_name(const void *a, const void *b) {
  return strcmp(((const tr_table *)a)->tr, ((const tr_table *)b)->tr);
}

/* TorchRec keys the plan (and the EmbeddingBagCollection) by table name:
 * a name twice (given twice, or "large" x 2 expanded to large_1 beside a
 * table named large_1) would make TABLES and the plan dict literals hold
 * a key twice, the last silently replacing the first table's sharding. */
static int distinct_names(const tr_table *t, size_t n, svc_err *err) {
  tr_table *c = n > 1 ? malloc(n * sizeof *c) : NULL;
  int rc = 0;
  if (n > 1 && !c) return svc_err_set(err, SVC_NOMEM, "", NULL);
  if (c) memcpy(c, t, n * sizeof *c);
  if (c) qsort(c, n, sizeof *c, by_tr_name);
  for (size_t i = 1; i < n && !rc; i++)
    if (!strcmp(c[i - 1].tr, c[i].tr))
      rc = svc_err_set(err, SVC_BAD_FIELD, "workload.tables",
                       "table name '%s' is given to two tables; TorchRec needs distinct names",
                       c[i].tr);
  free(c);
  return rc;
}

/* The workload's tables expanded as api/plan.c's expand_tables does. */
static int expand(const cJSON *req, tr_table **out, size_t *n, svc_err *err) {
  const cJSON *w = cJSON_GetObjectItemCaseSensitive(req, "workload");
  const cJSON *tabs = cJSON_GetObjectItemCaseSensitive(w, "tables"), *t;
  size_t k = 0, cap = 0;
  *out = NULL, *n = 0;
  if (!cJSON_IsArray(tabs)) return svc_err_set(err, SVC_INTERNAL, "", "stored plan has no tables");
  int i = 0;
  cJSON_ArrayForEach(t, tabs) {
    const cJSON *nm = cJSON_GetObjectItemCaseSensitive(t, "name");
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(t, "count");
    const char *base = cJSON_IsString(nm) && nm->valuestring[0] ? nm->valuestring : "table";
    long long cnt = cJSON_IsNumber(c) && c->valuedouble >= 1 ? (long long)c->valuedouble : 1;
    for (long long j = 0; j < cnt; j++, k++) {
      if (k == cap) {
        tr_table *nt = realloc(*out, (cap = cap ? cap * 2 : 64) * sizeof *nt);
        if (!nt) return svc_err_set(err, SVC_NOMEM, "", NULL);
        *out = nt;
      }
      tr_table *p = &(*out)[k];
      long long idx = cnt > 1 ? j : i;
      if (cnt > 1 || !cJSON_IsString(nm) || !nm->valuestring[0]) {
        snprintf(p->cd, sizeof p->cd, "%.40s#%lld", base, idx);
        snprintf(p->tr, sizeof p->tr, "%.40s_%lld", base, idx);
      } else {
        snprintf(p->cd, sizeof p->cd, "%s", base);
        snprintf(p->tr, sizeof p->tr, "%s", base);
      }
      /* an EmbeddingBagCollection's tables are ModuleDict keys: no '.' */
      if (strchr(p->tr, '.'))
        return svc_err_set(err, SVC_BAD_FIELD, "workload.tables",
                           "table '%s': TorchRec table names hold no '.'", p->cd);
      p->rows = (long long)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(t, "rows"));
      p->dim = (long long)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(t, "dim"));
      *n = k + 1;
    }
    i++;
  }
  return distinct_names(*out, *n, err);
}

/* The number of column shards TorchRec takes for dim from a split in k:
 * equal shards (dim % k == 0) no narrower than MIN_CW_DIM. */
static int cw_shards(long long dim, int k) {
  for (; k > 1; k--)
    if (dim % k == 0 && dim / k >= API_TORCHREC_MIN_CW_DIM) return k;
  return 1;
}

static const char *kernel_for(const char *cd) {
  if (!strcmp(cd, "cpu")) return "fused_uvm";
  if (!strcmp(cd, "fused_uvm") || !strcmp(cd, "fused_uvm_caching")) return cd;
  return "fused";
}

/* One per_param_sharding entry, and the lines to run after the plan is
 * built (kernel and cache params the helper cannot take) into *after. */
static int emit_table(text *t, text *after, const tr_table *tt, const cJSON *tp, int gpn, int world,
                      double load, svc_err *err) {
  const char *st = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(tp, "sharding_type"));
  const char *ck = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(tp, "compute_kernel"));
  const cJSON *ranks = cJSON_GetObjectItemCaseSensitive(tp, "ranks");
  int nr = cJSON_GetArraySize(ranks),
      r0 = nr > 0 ? (int)cJSON_GetArrayItem(ranks, 0)->valuedouble : 0;
  if (!st || !ck || !cJSON_IsArray(ranks) || r0 < 0 || r0 >= world)
    return svc_err_set(err, SVC_INTERNAL, "", "stored plan table '%s' is malformed", tt->cd);
  const char *kern = kernel_for(ck);
  if (strcmp(kern, ck) && strcmp(st, "data_parallel"))
    put(t,
        "            # cdplan's kernel %s is no TorchRec kernel: %s serves the table from host "
        "memory\n",
        ck, kern);
  put(t, "            ");
  put_str(t, tt->tr);
  put(t, ": ");
  if (!strcmp(st, "data_parallel")) {
    if (strcmp(ck, "dense"))
      put(t, "data_parallel(),  # TorchRec's data-parallel kernel is dense (cdplan: %s)\n", ck);
    else
      put(t, "data_parallel(),\n");
    return 0;
  }
  if (!strcmp(st, "table_wise")) {
    put(t, "table_wise(rank=%d, compute_kernel=\"%s\"),\n", r0, kern);
  } else if (!strcmp(st, "row_wise")) {
    put(t, "row_wise(compute_kernel=\"%s\"),\n", kern);
  } else if (!strcmp(st, "column_wise")) {
    int k = cw_shards(tt->dim, nr);
    if (k != nr)
      put(t,
          "# cdplan split dim %lld in %d; TorchRec takes %d (MIN_CW_DIM %d, equal shards)\n        "
          "    ",
          tt->dim, nr, k, API_TORCHREC_MIN_CW_DIM);
    if (k == 1) {
      put(t, "table_wise(rank=%d, compute_kernel=\"%s\"),\n", r0, kern);
    } else {
      put(t, "column_wise(ranks=[");
      for (int j = 0; j < k; j++)
        put(t, "%s%d", j ? ", " : "", (int)cJSON_GetArrayItem(ranks, j)->valuedouble);
      put(t, "], compute_kernel=\"%s\"),\n", kern);
    }
  } else if (!strcmp(st, "table_row_wise")) {
    put(t, "table_row_wise(host_index=%d),\n", r0 / gpn);
    put(after, "    module_plan[");
    put_str(after, tt->tr);
    put(after, "].compute_kernel = \"%s\"\n", kern);
  } else {
    return svc_err_set(err, SVC_INTERNAL, "", "stored plan table '%s': sharding %s", tt->cd, st);
  }
  if (!strcmp(kern, "fused_uvm_caching")) {
    put(after, "    module_plan[");
    put_str(after, tt->tr);
    put(after, "].cache_params = CacheParams(load_factor=%.6g)\n", load);
  }
  return 0;
}

static void emit_head(text *t, const char *id, const char *hw, const char *module, int gpn,
                      int nodes) {
  put(t,
      "# TorchRec sharding plan for cdplan plan %s (%s, %d node(s) x %d GPUs).\n"
      "# Generated by `cdplan export torchrec`; helpers as in "
      "torchrec/distributed/sharding_plan.py.\n"
      "# Use: DistributedModelParallel(model, plan=build_plan(<model's %s>), ...)\n"
      "from torchrec.distributed.sharding_plan import (\n"
      "    column_wise,\n    construct_module_sharding_plan,\n    data_parallel,\n"
      "    row_wise,\n    table_row_wise,\n    table_wise,\n)\n"
      "from torchrec.distributed.types import CacheParams, ShardingPlan\n\n"
      "MODULE_PATH = ",
      id, hw, nodes, gpn, module);
  put_str(t, module);
  put(t, "\nLOCAL_SIZE = %d\nWORLD_SIZE = %d\n", gpn, gpn * nodes);
}

static int emit(text *t, const hwdb_plan *p, const char *module, svc_err *err) {
  cJSON *req = cJSON_Parse(p->request), *res = cJSON_Parse(p->result);
  tr_table *tabs = NULL;
  size_t n = 0;
  text after = {0};
  int rc = 0;
  const cJSON *doc = res;
  if (res && !strcmp(p->kind, "compare")) doc = cJSON_GetObjectItemCaseSensitive(res, "to");
  const cJSON *recipe = cJSON_GetObjectItemCaseSensitive(doc, "recipe");
  const cJSON *ep = cJSON_GetObjectItemCaseSensitive(
      cJSON_GetObjectItemCaseSensitive(doc, "embedding_plan"), "tables");
  int gpn = (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(recipe, "gpus_per_node"));
  int nodes = (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(recipe, "nodes"));
  const cJSON *cr = cJSON_GetObjectItemCaseSensitive(req, "cache_ratio");
  double load = cJSON_IsNumber(cr) ? cr->valuedouble : PLAN_DEFAULT_CACHE_RATIO;
  if (!req || !res || !cJSON_IsArray(ep) || gpn < 1 || nodes < 1) {
    rc = svc_err_set(err, SVC_INTERNAL, "", "stored plan %s has no embedding plan", p->id);
    goto cleanup;
  }
  if ((rc = expand(req, &tabs, &n, err))) goto cleanup;
  if ((size_t)cJSON_GetArraySize(ep) != n) {
    rc =
        svc_err_set(err, SVC_INTERNAL, "", "stored plan %s: tables differ from its request", p->id);
    goto cleanup;
  }
  emit_head(t, p->id, p->hw, module, gpn, nodes);
  put(t, "\n# name: (num_embeddings, embedding_dim) as cdplan planned them\nTABLES = {\n");
  for (size_t i = 0; i < n; i++) {
    put(t, "    ");
    put_str(t, tabs[i].tr);
    put(t, ": (%lld, %lld),\n", tabs[i].rows, tabs[i].dim);
  }
  put(t, "}\n\n\ndef build_plan(ebc, module_path=MODULE_PATH, device_type=\"cuda\"):\n"
         "    \"\"\"The ShardingPlan for the EmbeddingBagCollection ebc at module_path.\"\"\"\n"
         "    have = {c.name: (c.num_embeddings, c.embedding_dim) for c in "
         "ebc.embedding_bag_configs()}\n"
         "    if have != TABLES:\n"
         "        raise ValueError(\"the module's tables differ from the plan's: %%r\" %% "
         "(set(have.items()) ^ set(TABLES.items()),))\n"
         "    module_plan = construct_module_sharding_plan(\n        ebc,\n"
         "        per_param_sharding={\n");
  size_t i = 0;
  const cJSON *tp;
  cJSON_ArrayForEach(tp, ep) {
    const char *nm = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(tp, "name"));
    if (!nm || strcmp(nm, tabs[i].cd)) {
      rc = svc_err_set(err, SVC_INTERNAL, "", "stored plan %s: table %zu is not '%s'", p->id, i,
                       tabs[i].cd);
      goto cleanup;
    }
    if ((rc = emit_table(t, &after, &tabs[i], tp, gpn, gpn * nodes, load, err))) goto cleanup;
    i++;
  }
  put(t, "        },\n        local_size=LOCAL_SIZE,\n        world_size=WORLD_SIZE,\n"
         "        device_type=device_type,\n    )\n");
  if (after.s) put(t, "%s", after.s);
  put(t, "    return ShardingPlan(plan={module_path: module_plan})\n");
  if (t->bad || after.bad) rc = svc_err_set(err, SVC_NOMEM, "", NULL);
cleanup:
  free(after.s);
  free(tabs);
  cJSON_Delete(req);
  cJSON_Delete(res);
  return rc;
}

int api_plan_torchrec(api_ctx *ctx, const char *id, const char *module, char **out, svc_err *err) {
  hwdb_plan p;
  text t = {0};
  *out = NULL;
  if (!module) module = API_TORCHREC_DEFAULT_MODULE;
  size_t n = id ? strlen(id) : 0;
  if (n != 16 || strspn(id, "0123456789abcdef") != n)
    return svc_err_set(err, SVC_NOT_FOUND, "id", "no plan '%.40s'", id ? id : "");
  if (!module_ok(module))
    return svc_err_set(err, SVC_BAD_FIELD, "module",
                       "module must be a dotted Python attribute path (e.g. %s), at most 200 bytes",
                       API_TORCHREC_DEFAULT_MODULE);
  int rc = hwdb_plan_get(ctx->db, id, &p, err);
  if (rc) return rc;
  rc = emit(&t, &p, module, err);
  hwdb_plan_dispose(&p);
  if (rc) {
    free(t.s);
    return rc;
  }
  *out = t.s;
  return 0;
}
