/* torchrec_import.c: TorchRec table configs -> a cdplan DLRM workload.
 *
 * Input: the list of EmbeddingBagConfig fields as JSON (what
 * `[dataclasses.asdict(c) for c in ebc_configs]` gives, enums as their
 * values), or {"tables": that list, "constraints": {table name:
 * ParameterConstraints fields}, "dense_features", "bottom_mlp", "top_mlp",
 * "interaction"}. A table's pooling is the sum of its constraint's
 * pooling_factors (one per input feature: mean lookups per sample),
 * rounded, else TorchRec's default of one factor of 1.0
 * (planner/types.py, POOLING_FACTOR). Field names are TorchRec's at the
 * commit in tests/fixtures/torchrec_facts.json.
 * Output: {"workload": {"kind":"dlrm","tables":[{"name","rows","dim",
 * "pooling"}], and the dense members given}, "recipe":
 * {"embedding_precision"}} (a step or plan request less its hardware).
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "api/api_int.h"
#include "api/api_torchrec.h"

#define MAX_IMPORT_TABLES 4096

static const char *const config_fields[] = {"num_embeddings",
                                            "embedding_dim",
                                            "name",
                                            "data_type",
                                            "feature_names",
                                            "weight_init_max",
                                            "weight_init_min",
                                            "num_embeddings_post_pruning",
                                            "init_fn",
                                            "need_pos",
                                            "input_dim",
                                            "total_num_buckets",
                                            "use_virtual_table",
                                            "virtual_table_eviction_policy",
                                            "pooling",
                                            NULL};

static const char *const constraint_fields[] = {"sharding_types",
                                                "compute_kernels",
                                                "min_partition",
                                                "pooling_factors",
                                                "num_poolings",
                                                "batch_sizes",
                                                "is_weighted",
                                                "cache_params",
                                                "enforce_hbm",
                                                "stochastic_rounding",
                                                "bounds_check_mode",
                                                "feature_names",
                                                "output_dtype",
                                                "device_group",
                                                "key_value_params",
                                                "use_virtual_table",
                                                NULL};

/* torchrec/types.py DataType values cdplan prices -> its dtype names. */
static const char *precision_of(const char *dt) {
  static const char *const map[][2] = {
      {"FP32", "fp32"}, {"FP16", "fp16"}, {"BF16", "bf16"}, {"INT8", "int8"}};
  for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
    if (!strcmp(dt, map[i][0])) return map[i][1];
  return NULL;
}

/* The pooling of table name from constraints (NULL: none given). */
static int pooling_of(const cJSON *cons, const char *name, int64_t *out, svc_err *err) {
  char f[160];
  const cJSON *c = cons ? cJSON_GetObjectItemCaseSensitive(cons, name) : NULL, *pf, *x;
  int rc;
  *out = 1;
  if (!c) return 0;
  snprintf(f, sizeof f, "constraints.%.63s", name);
  if (!cJSON_IsObject(c)) return svc_err_set(err, SVC_BAD_FIELD, f, "%s must be an object", f);
  if ((rc = api_check_fields(c, constraint_fields, f, err))) return rc;
  if (!(pf = cJSON_GetObjectItemCaseSensitive(c, "pooling_factors"))) return 0;
  snprintf(f, sizeof f, "constraints.%.63s.pooling_factors", name);
  if (!cJSON_IsArray(pf) || cJSON_GetArraySize(pf) < 1 || cJSON_GetArraySize(pf) > 1024)
    return svc_err_set(err, SVC_BAD_FIELD, f, "%s must be a list of 1 to 1024 numbers", f);
  double sum = 0;
  cJSON_ArrayForEach(x, pf) {
    if (!cJSON_IsNumber(x) || !isfinite(x->valuedouble) || x->valuedouble < 0 ||
        x->valuedouble > 100000)
      return svc_err_set(err, SVC_OUT_OF_RANGE, f, "%s: each factor lies in [0, 100000]", f);
    sum += x->valuedouble;
  }
  if (sum > 100000) return svc_err_set(err, SVC_OUT_OF_RANGE, f, "%s: sum above 100000", f);
  *out = sum < 1 ? 1 : (int64_t)llround(sum);
  return 0;
}

static int import_table(const cJSON *t, size_t i, const cJSON *cons, cJSON *tabs, const char **prec,
                        svc_err *err) {
  char p[48], f[80];
  const char *name = NULL, *dt = "FP32", *pool = "SUM";
  int64_t rows = 0, dim = 0, pooling = 1;
  int rc;
  snprintf(p, sizeof p, "tables[%zu]", i);
  if (!cJSON_IsObject(t)) return svc_err_set(err, SVC_BAD_FIELD, p, "%s must be an object", p);
  if ((rc = api_check_fields(t, config_fields, p, err)) ||
      (rc = api_get_str(t, "name", p, 1, 63, NULL, &name, err)) ||
      (rc = api_get_int(t, "num_embeddings", p, 1, 1, (int64_t)1 << 40, &rows, err)) ||
      (rc = api_get_int(t, "embedding_dim", p, 1, 1, 65536, &dim, err)) ||
      (rc = api_get_str(t, "data_type", p, 0, 16, NULL, &dt, err)) ||
      (rc = api_get_str(t, "pooling", p, 0, 16, NULL, &pool, err)))
    return rc;
  snprintf(f, sizeof f, "%s.data_type", p);
  const char *pr = precision_of(dt);
  if (!pr)
    return svc_err_set(err, SVC_BAD_FIELD, f, "%s: cdplan prices FP32, FP16, BF16 and INT8", f);
  if (*prec && strcmp(*prec, pr))
    return svc_err_set(err, SVC_BAD_FIELD, f,
                       "%s: every table needs one data_type (cdplan has one embedding precision)",
                       f);
  *prec = pr;
  snprintf(f, sizeof f, "%s.pooling", p);
  if (strcmp(pool, "SUM") && strcmp(pool, "MEAN"))
    return svc_err_set(err, SVC_BAD_FIELD, f, "%s must be SUM or MEAN (an EmbeddingBag)", f);
  if ((rc = pooling_of(cons, name, &pooling, err))) return rc;
  cJSON *o = cJSON_CreateObject();
  if (!o) return svc_err_set(err, SVC_NOMEM, "", NULL);
  cJSON_AddItemToArray(tabs, o);
  cJSON_AddStringToObject(o, "name", name);
  cJSON_AddNumberToObject(o, "rows", (double)rows);
  cJSON_AddNumberToObject(o, "dim", (double)dim);
  cJSON_AddNumberToObject(o, "pooling", (double)pooling);
  return 0;
}

int api_torchrec_import(const char *body, size_t len, char **out, svc_err *err) {
  static const char *const top[] = {
      "tables", "constraints", "dense_features", "bottom_mlp", "top_mlp", "interaction", NULL};
  static const char *const dense[] = {"dense_features", "bottom_mlp", "top_mlp", "interaction"};
  cJSON *in = NULL, *doc = NULL, *w, *tabs;
  const char *prec = NULL;
  int rc = 0;
  *out = NULL;
  if (!body || len == 0 || len > API_MAX_BODY)
    return svc_err_set(err, SVC_BAD_JSON, "", "expected a JSON list of EmbeddingBagConfig fields");
  if (!(in = cJSON_ParseWithLength(body, len)))
    return svc_err_set(err, SVC_BAD_JSON, "", "not JSON (a list of EmbeddingBagConfig fields)");
  const cJSON *list = in, *cons = NULL, *t;
  if (cJSON_IsObject(in)) {
    if ((rc = api_check_fields(in, top, "", err))) goto cleanup;
    list = cJSON_GetObjectItemCaseSensitive(in, "tables");
    cons = cJSON_GetObjectItemCaseSensitive(in, "constraints");
    if (cons && !cJSON_IsObject(cons)) {
      rc = svc_err_set(err, SVC_BAD_FIELD, "constraints", "constraints must be an object by name");
      goto cleanup;
    }
  }
  if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) < 1 ||
      cJSON_GetArraySize(list) > MAX_IMPORT_TABLES) {
    rc = svc_err_set(err, SVC_BAD_FIELD, "tables", "tables must be a list of 1 to %d configs",
                     MAX_IMPORT_TABLES);
    goto cleanup;
  }
  if (!(doc = cJSON_CreateObject()) || !(w = cJSON_AddObjectToObject(doc, "workload"))) {
    rc = svc_err_set(err, SVC_NOMEM, "", NULL);
    goto cleanup;
  }
  cJSON_AddStringToObject(w, "kind", "dlrm");
  for (size_t i = 0; i < sizeof dense / sizeof dense[0]; i++) {
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(in, dense[i]);
    if (d && cJSON_IsObject(in)) cJSON_AddItemToObject(w, dense[i], cJSON_Duplicate(d, 1));
  }
  tabs = cJSON_AddArrayToObject(w, "tables");
  size_t i = 0;
  cJSON_ArrayForEach(t, list) {
    if ((rc = import_table(t, i++, cons, tabs, &prec, err))) goto cleanup;
  }
  /* A constraint for a table the list lacks is a typo: say so. */
  if (cons) {
    cJSON_ArrayForEach(t, cons) {
      int found = 0;
      const cJSON *x;
      cJSON_ArrayForEach(x, tabs) {
        found |= !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(x, "name")), t->string);
      }
      if (!found) {
        rc = svc_err_set(err, SVC_BAD_FIELD, "constraints", "constraints.%.63s: no such table",
                         t->string);
        goto cleanup;
      }
    }
  }
  cJSON_AddStringToObject(cJSON_AddObjectToObject(doc, "recipe"), "embedding_precision", prec);
  if (!(*out = cJSON_PrintUnformatted(doc))) rc = svc_err_set(err, SVC_NOMEM, "", NULL);
cleanup:
  cJSON_Delete(in);
  cJSON_Delete(doc);
  return rc;
}
