/* bench/report_join: the time of a validation report (api_validation_report)
 * against the number of measured rows, and of the steps before it (submit a
 * job with N predicted cases, ingest a result of N rows). The rows are the
 * large-report shape of tests/validate/test_val_local.c: N cases, 1000
 * positional and the rest matched by {m, n} against rows in reverse order.
 * A linear report takes 4x the time at 4x the rows; the printed ratios say
 * how far each step is from that. Runs on a temporary SQLite file, through
 * the api's public functions only: the job is submitted with the body limit
 * raised to API_MAX_RESULT (api_val_opts.max_body: 80,000 matched cases are
 * past a request body's 1 MiB); api_submit is the same job under the
 * ordinary limit, as a POST sends it, where the body fits 1 MiB. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "api/api.h"
#include "api/api_validate.h"
#include "bench/report_texts.h"
#include "common/common.h"
#include "bench_cli.h"

static void die(const char *what, const svc_err *err) {
  fprintf(stderr, "report_join: %s: %s\n", what, err ? err->message : "");
  exit(1);
}

typedef struct {
  double submit, ingest, report, api_submit;
} timing;

static timing one(api_ctx *ctx, int n) {
  char *body = NULL, *fmt = NULL, *out = NULL, ids[sizeof((api_reply *)0)->id];
  svc_err err;
  timing t;
  api_reply rep = {0};
  report_texts(n, &body, &fmt);
  size_t bl = strlen(body) + 128;
  char *req = malloc(bl);
  snprintf(
      req, bl,
      "{\"kind\":\"gemm_sweep\",\"hardware\":\"h200\",\"backend\":\"bundle\",\"prediction\":%s}",
      body);
  api_val_opts big = {.max_body = API_MAX_RESULT};
  double t0 = svc_now();
  if (api_validation_submit_reply(ctx, req, strlen(req), &big, &rep, &err)) die("submit", &err);
  t.submit = svc_now() - t0;
  snprintf(ids, sizeof ids, "%s", rep.id);
  api_reply_dispose(&rep);
  t.api_submit = -1;
  if (strlen(req) <= API_MAX_BODY) {
    t0 = svc_now();
    if (api_validation_submit(ctx, req, strlen(req), &out, &err)) die("api submit", &err);
    t.api_submit = svc_now() - t0;
    free(out);
  }
  free(req);
  size_t rl = strlen(fmt) + 128;
  char *res = malloc(rl);
  snprintf(res, rl, "{\"id\":%s,\"kind\":\"gemm_sweep\",\"rows\":%s}", ids, fmt);
  t0 = svc_now();
  if (api_validation_ingest(ctx, res, strlen(res), &out, &err)) die("ingest", &err);
  t.ingest = svc_now() - t0;
  free(out);
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
  int cli = bench_cli(argc, argv, "[ROWS]", "", 1);
  if (cli >= 0) return cli;
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
