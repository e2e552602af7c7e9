/* bench/published_mlperf.c: the step model against published MLPerf
 * Training DLRM-DCNv2 throughputs (data/measurements/published/
 * mlperf_dlrm.json; MLPERF.md there says how each figure was derived from
 * the result logs). Each row is priced through api_step, the code behind
 * POST /v1/step, with the MLPerf model (data/workloads/mlperf_dcnv2.json)
 * and the submission's recipe as the row states it: GPUs, GPUs per
 * scale-up domain, per-GPU batch, precision, optimizers, framework
 * (hugectr) and the per-table sharding the submission's planner gave
 * (row_shards: the GPUs a row-split table is split over). Scored on both halves (roles per
 * source); nothing here is fitted. Also prints whether the predicted order
 * of systems at each GPU count matches the measured one. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "api/api_step.h"
#include "bench/bench_json.h"
#include "bench/published_mlperf.h"

#define MAX_MLPERF 128

typedef struct {
  char id[80], hw[32], role[8];
  int gpus;
  double meas, pred;
} mrow;

/* The step request for one row: the model with the row's optimizers and
 * table sharding, the row's recipe. Caller frees. */
static char *request(const cJSON *model, const cJSON *s) {
  cJSON *req = cJSON_CreateObject(), *w = cJSON_Duplicate(model, 1), *r = cJSON_CreateObject();
  const cJSON *sh = cJSON_GetObjectItemCaseSensitive(s, "table_sharding");
  cJSON *t;
  const cJSON *opt = cJSON_GetObjectItemCaseSensitive(s, "optimizers");
  cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(w, "tables")) {
    const char *name = bench_jstr(t, "name") ? bench_jstr(t, "name") : "",
               *how = bench_jstr(sh, name);
    double k = bench_jnum(cJSON_GetObjectItemCaseSensitive(s, "row_shards"), name);
    if (how) cJSON_AddItemToObject(t, "sharding", cJSON_CreateString(how));
    if (k > 0) cJSON_AddNumberToObject(t, "row_shards", k);
  }
  if (opt) cJSON_ReplaceItemInObject(w, "optimizers", cJSON_Duplicate(opt, 1));
  cJSON_AddItemToObject(req, "hardware", cJSON_CreateString(bench_jstr(s, "hardware")));
  cJSON_AddItemToObject(req, "workload", w);
  cJSON_AddNumberToObject(r, "gpus", bench_jnum(s, "gpus"));
  cJSON_AddNumberToObject(r, "gpus_per_node", bench_jnum(s, "gpus_per_node"));
  cJSON_AddNumberToObject(r, "batch_per_gpu", floor(bench_jnum(s, "batch_per_gpu")));
  static const char *const strs[] = {"precision", "embedding_precision", "framework"};
  for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++)
    cJSON_AddItemToObject(r, strs[i], cJSON_CreateString(bench_jstr(s, strs[i])));
  cJSON_AddItemToObject(req, "recipe", r);
  char *body = cJSON_PrintUnformatted(req);
  cJSON_Delete(req);
  return body;
}

static int cmp_dbl(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Median |error| over rows of role (NULL: any) and scale (0: one node of
 * 8, 1: more GPUs, -1: any; gpus > 0: that GPU count only). */
static double med_err_at(const mrow *m, int n, const char *role, int multi, int gpus, int *count) {
  double e[MAX_MLPERF];
  int k = 0;
  for (int i = 0; i < n; i++)
    if ((!role || !strcmp(m[i].role, role)) && (multi < 0 || (m[i].gpus > 8) == multi) &&
        (gpus <= 0 || m[i].gpus == gpus))
      e[k++] = fabs(m[i].pred / m[i].meas - 1);
  *count = k;
  if (!k) return NAN;
  qsort(e, (size_t)k, sizeof *e, cmp_dbl);
  return k % 2 ? e[k / 2] : 0.5 * (e[k / 2 - 1] + e[k / 2]);
}

static double med_err(const mrow *m, int n, const char *role, int multi, int *count) {
  return med_err_at(m, n, role, multi, 0, count);
}

/* Ordering at one GPU count: the systems' mean measured and predicted
 * throughputs, and the pairs whose order the prediction gets right. */
static void ordering(const mrow *m, int n, int gpus, int *pairs, int *right) {
  char hw[16][32];
  double ms[16] = {0}, ps[16] = {0};
  int c[16] = {0}, nh = 0;
  for (int i = 0; i < n; i++) {
    if (m[i].gpus != gpus) continue;
    int j = 0;
    while (j < nh && strcmp(hw[j], m[i].hw)) j++;
    if (j == nh) {
      if (nh == 16) continue;
      snprintf(hw[nh++], sizeof hw[0], "%s", m[i].hw);
    }
    ms[j] += m[i].meas, ps[j] += m[i].pred, c[j]++;
  }
  printf("  %3d GPUs, measured order:", gpus);
  int used[16] = {0};
  for (int k = 0; k < nh; k++) {
    int b = -1;
    for (int j = 0; j < nh; j++)
      if (!used[j] && (b < 0 || ms[j] / c[j] < ms[b] / c[b])) b = j;
    used[b] = 1;
    printf(" %s %.1f (pred %.1f)%s", hw[b], ms[b] / c[b] / 1e6, ps[b] / c[b] / 1e6,
           k + 1 < nh ? " <" : "");
  }
  for (int a = 0; a < nh; a++)
    for (int b = a + 1; b < nh; b++) {
      (*pairs)++;
      if ((ms[a] / c[a] - ms[b] / c[b]) * (ps[a] / c[a] - ps[b] / c[b]) > 0) (*right)++;
    }
  printf("\n");
}

int mlperf_score(api_ctx *ctx, const char *rows_path, const char *model_path) {
  static mrow m[MAX_MLPERF];
  cJSON *rows = bench_json_load(rows_path, 64u << 20), *wl = bench_json_load(model_path, 64u << 20);
  const cJSON *model = cJSON_GetObjectItemCaseSensitive(wl, "workload"), *it;
  int n = 0, rc = -1;
  if (!cJSON_IsArray(rows) || !cJSON_IsObject(model)) {
    fprintf(stderr, "published_accuracy: cannot read %s or %s\n", rows_path, model_path);
    goto cleanup;
  }
  cJSON_ArrayForEach(it, rows) {
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(it, "setup");
    const char *metric = bench_jstr(it, "metric"), *hw = bench_jstr(s, "hardware"),
               *role = bench_jstr(it, "role");
    if (n == MAX_MLPERF || !metric || strcmp(metric, "train_samples_per_s") || !hw || !role)
      continue;
    mrow *r = &m[n];
    snprintf(r->id, sizeof r->id, "%s", bench_jstr(it, "id") ? bench_jstr(it, "id") : "?");
    snprintf(r->hw, sizeof r->hw, "%s", hw);
    snprintf(r->role, sizeof r->role, "%s", role);
    r->gpus = (int)bench_jnum(s, "gpus");
    r->meas = bench_jnum(it, "value");
    char *body = request(model, s), *out = NULL;
    svc_err err;
    if (!body || api_step(ctx, body, strlen(body), &out, &err)) {
      fprintf(stderr, "published_accuracy: %s: %s (%s)\n", r->id, body ? err.message : "no memory",
              body ? err.field : "");
      free(body);
      continue;
    }
    cJSON *res = cJSON_Parse(out);
    r->pred = bench_jnum(res, "samples_per_s");
    cJSON_Delete(res);
    free(out);
    free(body);
    if (r->meas > 0 && r->pred > 0) n++;
  }
  printf("MLPerf Training DLRM-DCNv2 throughput vs the step model (%d rows; api_step, the "
         "submission's recipe)\n",
         n);
  printf("  %-36s %-6s %9s %9s %8s\n", "id", "role", "meas M/s", "pred M/s", "error");
  for (int i = 0; i < n; i++)
    printf("  %-36s %-6s %9.2f %9.2f %+7.1f%%\n", m[i].id, m[i].role, m[i].meas / 1e6,
           m[i].pred / 1e6, (m[i].pred / m[i].meas - 1) * 100);
  int cf, cc, c8, cm, pairs = 0, right = 0;
  double ef = med_err(m, n, "fit", -1, &cf), ec = med_err(m, n, "check", -1, &cc);
  double e8 = med_err(m, n, "check", 0, &c8), em = med_err(m, n, "check", 1, &cm);
  printf("  median |pred/meas - 1|: fit rows (n=%d) %.1f%%, check rows (n=%d) %.1f%% (target "
         "25%%)\n",
         cf, ef * 100, cc, ec * 100);
  printf("  check rows on 8 GPUs (n=%d) %.1f%%, on 16-128 GPUs (n=%d) %.1f%%\n", c8, e8 * 100, cm,
         em * 100);
  static const int counts[] = {8, 16, 32, 64, 128};
  printf("  check rows by GPU count (target 25%% at each of 8, 64, 128):");
  for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
    int c;
    double e = med_err_at(m, n, "check", -1, counts[k], &c);
    if (c) printf(" %d GPUs (n=%d) %.1f%%%s", counts[k], c, e * 100, k + 1 < 5 ? "," : "");
  }
  printf("\n");
  for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++)
    ordering(m, n, counts[k], &pairs, &right);
  printf("  system pairs ordered right: %d of %d\n", right, pairs);
  printf("{\"bench\":\"published_accuracy_mlperf\",\"rows\":%d,\"fit_median\":%.4f,"
         "\"check_median\":%.4f,\"check_8gpu_median\":%.4f,\"check_multi_median\":%.4f,"
         "\"pairs\":%d,\"pairs_right\":%d}\n",
         n, ef, ec, e8, em, pairs, right);
  rc = 0;
cleanup:
  cJSON_Delete(rows);
  cJSON_Delete(wl);
  return rc;
}
