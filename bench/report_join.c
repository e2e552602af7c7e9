/* bench/report_join: the time of a validation report (api_validation_report)
 * against the number of measured rows, and of the steps before it (submit a
 * job with N predicted cases, ingest a result of N rows). The rows are the
 * large-report shape of tests/validate/test_val_local.c: N cases, 1000
 * positional and the rest matched by {m, n} against rows in reverse order.
 * A linear report takes 4x the time at 4x the rows; the printed ratios say
 * how far each step is from that (api_submit: the same job through the API,
 * as tests/validate/test_val_local.c submits it, where the body fits 1 MiB).
 * Runs on a temporary SQLite file. The job
 * is created through validate/ (val_submit) with the prediction text the
 * API would store: 80,000 matched cases are past a request body's 1 MiB. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "api/api.h"
#include "api/api_int.h"
#include "api/api_validate.h"
#include "common/common.h"
#include "validate/validate.h"

static void die(const char *what, const svc_err *err) {
  fprintf(stderr, "report_join: %s: %s\n", what, err ? err->message : "");
  exit(1);
}

/* Prediction and result texts of n cases / rows (malloc'd). */
static void make_texts(int n, char **pred_text, char **rows_text) {
  enum { POSITIONAL = 1000 };
  cJSON *pred = cJSON_CreateObject(), *cases = cJSON_AddArrayToObject(pred, "cases");
  cJSON *rows = cJSON_CreateArray();
  for (int i = 0; i < n; i++) {
    int m = n - 1 - i;
    cJSON *row = cJSON_CreateObject();
    cJSON_AddStringToObject(row, "dtype", "bf16");
    cJSON_AddStringToObject(row, "layout", "tn");
    cJSON_AddNumberToObject(row, "k", 4096);
    cJSON_AddNumberToObject(row, "m", m);
    cJSON_AddNumberToObject(row, "n", m % 7);
    cJSON_AddNumberToObject(row, "ms", 1 + m);
    cJSON_AddItemToArray(rows, row);
    cJSON *c = cJSON_CreateObject();
    cJSON_AddNumberToObject(c, "value", 1 + i);
    if (i >= POSITIONAL) {
      cJSON *mt = cJSON_AddObjectToObject(c, "match");
      cJSON_AddNumberToObject(mt, "m", i);
      cJSON_AddNumberToObject(mt, "n", i % 7);
    }
    cJSON_AddItemToArray(cases, c);
  }
  char *pt = cJSON_PrintUnformatted(pred), *rt = cJSON_PrintUnformatted(rows);
  *pred_text = pt;
  *rows_text = rt;
  cJSON_Delete(pred);
  cJSON_Delete(rows);
}

typedef struct {
  double submit, ingest, report, api_submit;
} timing;

static timing one(api_ctx *ctx, int n) {
  char *body = NULL, *fmt = NULL, *out = NULL, ids[24], token[VAL_TOKEN_LEN + 1];
  svc_err err;
  timing t;
  val_cfg cfg;
  int64_t id = 0;
  make_texts(n, &body, &fmt);
  val_spec spec = {.kind = "gemm_sweep",
                   .hw = "h200",
                   .params = "{}",
                   .prediction = body,
                   .backend = "bundle",
                   .gpus = -1};
  double t0 = svc_now();
  if (val_cfg_init(&cfg, hwdb_filename(ctx->db), &err) ||
      val_submit(ctx->db, &cfg, &spec, &id, token, &err))
    die("submit", &err);
  t.submit = svc_now() - t0;
  t.api_submit = -1;
  size_t bl = strlen(body) + 128;
  char *req = malloc(bl);
  snprintf(
      req, bl,
      "{\"kind\":\"gemm_sweep\",\"hardware\":\"h200\",\"backend\":\"bundle\",\"prediction\":%s}",
      body);
  if (strlen(req) <= API_MAX_BODY) {
    t0 = svc_now();
    if (api_validation_submit(ctx, req, strlen(req), &out, &err)) die("api submit", &err);
    t.api_submit = svc_now() - t0;
    free(out);
  }
  free(req);
  size_t rl = strlen(fmt) + 128;
  char *res = malloc(rl);
  snprintf(res, rl, "{\"id\":%lld,\"kind\":\"gemm_sweep\",\"rows\":%s}", (long long)id, fmt);
  t0 = svc_now();
  if (api_validation_ingest(ctx, res, strlen(res), &out, &err)) die("ingest", &err);
  t.ingest = svc_now() - t0;
  free(out);
  snprintf(ids, sizeof ids, "%lld", (long long)id);
  t0 = svc_now();
  if (api_validation_report(ctx, ids, 0, &out, &err)) die("report", &err);
  t.report = svc_now() - t0;
  cJSON *r = cJSON_Parse(out);
  const cJSON *st = cJSON_GetObjectItem(r, "stats");
  if (!st || (int)cJSON_GetObjectItem(st, "n")->valuedouble != n) die("report: wrong n", NULL);
  cJSON_Delete(r);
  free(out);
  free(res);
  free(body);
  free(fmt);
  return t;
}

static double dmin(double a, double b) { return a < 0 ? b : (b < 0 ? a : (a < b ? a : b)); }

/* `report_join N`: one job of N rows only (for perf stat: instruction
 * counts do not depend on the machine's load as times do). */
static int only(int n) {
  char dir[] = "/tmp/cdplan-reportjoin-XXXXXX", db[96], rm[128];
  api_ctx *ctx = NULL;
  svc_err err;
  if (!mkdtemp(dir)) die("mkdtemp", NULL);
  snprintf(db, sizeof db, "%s/r.db", dir);
  if (api_ctx_new(&ctx, db, &err)) die("open", &err);
  timing t = one(ctx, n);
  printf("%d rows: submit %.3f ingest %.3f report %.3f s\n", n, t.submit, t.ingest, t.report);
  api_ctx_free(ctx);
  snprintf(rm, sizeof rm, "rm -rf %s", dir);
  return system(rm) == 0 ? 0 : 1;
}

int main(int argc, char **argv) {
  char dir[] = "/tmp/cdplan-reportjoin-XXXXXX", db[96], rm[128];
  static const int sizes[] = {5000, 20000, 80000};
  if (argc > 1) return only(atoi(argv[1]) > 0 ? atoi(argv[1]) : 5000);
  enum { REPS = 3 }; /* each figure is the fastest of REPS jobs: the machine is shared */
  timing t[3];
  api_ctx *ctx = NULL;
  svc_err err;
  if (!mkdtemp(dir)) die("mkdtemp", NULL);
  snprintf(db, sizeof db, "%s/r.db", dir);
  if (api_ctx_new(&ctx, db, &err)) die("open", &err);
  printf("%8s %10s %10s %10s %12s  (fastest of %d; api_submit: POST body, <= 1 MiB only)\n", "rows",
         "submit_s", "ingest_s", "report_s", "api_submit_s", REPS);
  for (int i = 0; i < 3; i++) {
    t[i] = (timing){-1, -1, -1, -1};
    for (int k = 0; k < REPS; k++) {
      timing x = one(ctx, sizes[i]);
      t[i].submit = dmin(t[i].submit, x.submit);
      t[i].ingest = dmin(t[i].ingest, x.ingest);
      t[i].report = dmin(t[i].report, x.report);
      t[i].api_submit = dmin(t[i].api_submit, x.api_submit);
    }
    printf("%8d %10.3f %10.3f %10.3f %12.3f\n", sizes[i], t[i].submit, t[i].ingest, t[i].report,
           t[i].api_submit);
  }
  printf("{\"bench\":\"report_join\",\"rows\":[5000,20000,80000],\"report_s\":[%.4f,%.4f,%.4f],"
         "\"ingest_s\":[%.4f,%.4f,%.4f],\"submit_s\":[%.4f,%.4f,%.4f],"
         "\"report_ratio_20k_5k\":%.2f,\"report_ratio_80k_20k\":%.2f}\n",
         t[0].report, t[1].report, t[2].report, t[0].ingest, t[1].ingest, t[2].ingest, t[0].submit,
         t[1].submit, t[2].submit, t[1].report / t[0].report, t[2].report / t[1].report);
  api_ctx_free(ctx);
  snprintf(rm, sizeof rm, "rm -rf %s", dir);
  return system(rm) == 0 ? 0 : 1;
}
