/* bench/published_llm: the transformer step model against published LLM
 * training throughputs (data/measurements/published/llm_training.json;
 * LLM.md there gives the sources, the roles by source and the rules).
 * Each row is priced through api_step, the code behind POST /v1/step:
 * the row's model from the file's "models" map as a transformer workload
 * (flash attention, fused loss, no dropout: Megatron's defaults) on the
 * row's system, with the published recipe (GPUs, TP, PP, micro and global
 * batch, precision, framework megatron, sequence parallelism with TP,
 * dense_parallel fsdp where the row's FSDP column is set).
 * Predicted tokens/s/GPU = tokens_per_s / GPUs. Rows the model cannot
 * express are skipped with the reason printed, never dropped silently.
 * Nothing here is fitted.
 *
 * published_llm [rows.json]          per-row table, medians, one JSON line
 * PUBLISHED_LLM_DUMP=ID published_llm  also prints the request and the
 *   answer of the rows whose id contains ID (to read a breakdown)
 * published_llm --fit [rows.json]    scans step_fp8_cast_bytes on the fit
 *   rows only (cost_step_p with the profile's other values) and prints
 *   the fit rows' median error at each value and the best
 * published_llm --check [rows.json]  the ctest: every row loads, every
 *   row not skipped by a stated rule prices without error, the ids and
 *   roles are well formed and every ratio pairs two priced rows; exit 1
 *   otherwise.
 * The file's "ratios" pair two rows (num/den); the report prints the
 * measured and the predicted ratio of each (issue 20's cross-vendor
 * target). */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "api/api_hw.h"
#include "api/api_meas.h"
#include "api/api_step.h"
#include "bench/bench_json.h"
#include "bench_cli.h"

#define MAX_LLM 256

typedef struct {
  char id[96], hw[32], role[8], skip[96];
  int gpus;
  double meas, pred;
} lrow;

/* Why a row cannot be priced (LLM.md, "Rules"), or NULL. */
static const char *skip_reason(const cJSON *s) {
  const char *prec = bench_jstr(s, "precision"), *hw = bench_jstr(s, "hardware"),
             *task = bench_jstr(s, "task");
  if (prec && !strcmp(prec, "nvfp4")) return "nvfp4: no 4-bit dtype in cdplan";
  if (task && !strcmp(task, "lora")) return "lora: frozen-weight adapters are not modelled";
  if (!hw) return "no cdplan descriptor for this system";
  return NULL;
}

/* The POST /v1/step body for one row. Caller frees. */
static char *request(const cJSON *model, const cJSON *s) {
  cJSON *req = cJSON_CreateObject(), *w = cJSON_Duplicate(model, 1), *r = cJSON_CreateObject();
  const char *prec = bench_jstr(s, "precision");
  int tp = (int)bench_jnum(s, "tp");
  cJSON_AddStringToObject(w, "kind", "transformer");
  cJSON_AddStringToObject(w, "name",
                          bench_jstr(s, "model_name") ? bench_jstr(s, "model_name") : "");
  cJSON_AddNumberToObject(w, "seq_len", bench_jnum(s, "seq_len"));
  cJSON_AddStringToObject(w, "attention", "flash");
  cJSON_AddStringToObject(w, "loss", "fused");
  cJSON_AddNumberToObject(w, "dropout", 0);
  cJSON_AddStringToObject(req, "hardware", bench_jstr(s, "hardware"));
  cJSON_AddItemToObject(req, "workload", w);
  cJSON_AddNumberToObject(r, "gpus", bench_jnum(s, "gpus"));
  cJSON_AddNumberToObject(r, "gpus_per_node", bench_jnum(s, "gpus_per_node"));
  cJSON_AddNumberToObject(r, "tp", tp);
  cJSON_AddNumberToObject(r, "pp", bench_jnum(s, "pp"));
  cJSON_AddNumberToObject(r, "batch_per_gpu", bench_jnum(s, "micro_batch"));
  cJSON_AddNumberToObject(r, "global_batch", bench_jnum(s, "global_batch"));
  cJSON_AddStringToObject(r, "precision", prec && !strcmp(prec, "mxfp8") ? "fp8" : prec);
  cJSON_AddStringToObject(r, "framework", "megatron");
  cJSON_AddStringToObject(r, "checkpointing", "none");
  cJSON_AddBoolToObject(r, "sequence_parallel", tp > 1);
  if (bench_jnum(s, "vp") > 1) cJSON_AddNumberToObject(r, "vp", bench_jnum(s, "vp"));
  if (bench_jnum(s, "cp") > 1) cJSON_AddNumberToObject(r, "cp", bench_jnum(s, "cp"));
  /* the tables' FSDP column: 1 (NeMo 25.04/25.07: "use FSDP") or the FSDP
   * size (Megatron-Bridge); either way Megatron-FSDP over the dp x cp ranks */
  if (bench_jnum(s, "fsdp") > 0) cJSON_AddStringToObject(r, "dense_parallel", "fsdp");
  cJSON_AddItemToObject(req, "recipe", r);
  char *body = cJSON_PrintUnformatted(req);
  cJSON_Delete(req);
  return body;
}

/* Prices one row into *r; 0, or -1 with the reason in stderr. */
static int price(api_ctx *ctx, const cJSON *models, const cJSON *it, lrow *r) {
  const cJSON *s = cJSON_GetObjectItemCaseSensitive(it, "setup");
  const char *mk = bench_jstr(s, "model");
  const cJSON *model = mk ? cJSON_GetObjectItemCaseSensitive(models, mk) : NULL;
  snprintf(r->id, sizeof r->id, "%s", bench_jstr(it, "id") ? bench_jstr(it, "id") : "?");
  snprintf(r->role, sizeof r->role, "%s", bench_jstr(it, "role") ? bench_jstr(it, "role") : "?");
  snprintf(r->hw, sizeof r->hw, "%s", bench_jstr(s, "system") ? bench_jstr(s, "system") : "?");
  r->gpus = (int)bench_jnum(s, "gpus");
  r->meas = bench_jnum(it, "value");
  r->pred = NAN;
  r->skip[0] = 0;
  if (!cJSON_IsObject(model) || !(r->meas > 0) || !(r->gpus > 0)) {
    fprintf(stderr, "published_llm: %s: no model, value or gpus\n", r->id);
    return -1;
  }
  const char *why = skip_reason(s);
  if (why) {
    snprintf(r->skip, sizeof r->skip, "%s", why);
    return 0;
  }
  char *body = request(model, s), *out = NULL;
  svc_err err;
  if (!body || api_step(ctx, body, strlen(body), &out, &err)) {
    fprintf(stderr, "published_llm: %s: %s (%s)\n", r->id, body ? err.message : "no memory",
            body ? err.field : "");
    free(body);
    return -1;
  }
  const char *dump = getenv("PUBLISHED_LLM_DUMP");
  if (dump && *dump && strstr(r->id, dump)) printf("%s\n%s\n", body, out);
  cJSON *res = cJSON_Parse(out);
  r->pred = bench_jnum(res, "tokens_per_s") / (double)r->gpus;
  cJSON_Delete(res);
  free(out);
  free(body);
  return r->pred > 0 ? 0 : -1;
}

typedef struct {
  cost_hw hw;
  cost_workload w;
  cost_recipe r;
  double meas;
} fitcase;

static int cmp_dbl(const void *a, const void *b);

/* Median |pred/meas - 1| of the n cases with step_fp8_cast_bytes = q. */
static double fit_err(const fitcase *fc, int n, double q) {
  static double e[MAX_LLM];
  int k = 0;
  for (int i = 0; i < n; i++) {
    double prof[COST_SP__COUNT];
    cost_step_result out;
    for (int j = 0; j < COST_SP__COUNT; j++) prof[j] = cost_step_param_value(&fc[i].hw, j);
    prof[COST_SP_FP8_CAST_B] = q;
    if (cost_step_p(&fc[i].hw, prof, &fc[i].w, &fc[i].r, &out) || !(out.tokens_per_s > 0)) continue;
    e[k++] = fabs(out.tokens_per_s / (double)fc[i].r.gpus / fc[i].meas - 1);
  }
  if (!k) return NAN;
  qsort(e, (size_t)k, sizeof *e, cmp_dbl);
  return k % 2 ? e[k / 2] : 0.5 * (e[k / 2 - 1] + e[k / 2]);
}

/* --fit: the fit rows' cases, decoded from the same requests api_step
 * gets, scanned over step_fp8_cast_bytes. 0, or -1. */
static int fit_scan(api_ctx *ctx, const cJSON *models, const cJSON *rows) {
  static fitcase fc[MAX_LLM];
  const cJSON *it;
  int n = 0;
  cJSON_ArrayForEach(it, rows) {
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(it, "setup");
    const char *role = bench_jstr(it, "role"), *mk = bench_jstr(s, "model");
    const cJSON *model = mk ? cJSON_GetObjectItemCaseSensitive(models, mk) : NULL;
    if (n == MAX_LLM || !role || strcmp(role, "fit") || !model || skip_reason(s)) continue;
    char *body = request(model, s);
    svc_err err;
    if (!body || api_meas_case_decode(body, strlen(body), &fc[n].w, &fc[n].r, &err) ||
        api_hw_lookup(ctx, bench_jstr(s, "hardware"), 1, &fc[n].hw, &err)) {
      free(body);
      return -1;
    }
    free(body);
    fc[n++].meas = bench_jnum(it, "value");
  }
  double best = 0, be = fit_err(fc, n, 0);
  printf("step_fp8_cast_bytes on the %d fit rows: median |pred/meas - 1|\n ", n);
  for (double q = 0; q <= 24.0 + 1e-9; q += 0.5) {
    double e = fit_err(fc, n, q);
    if (fmod(q, 2.0) == 0) printf(" %.0f:%.1f%%", q, e * 100);
    if (e < be - 1e-12) be = e, best = q;
  }
  printf("\n  best %.1f bytes per element: fit rows median %.1f%%\n", best, be * 100);
  for (int i = 0; i < n; i++) api_workload_dispose(&fc[i].w);
  return 0;
}

static int cmp_dbl(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Median and max |pred/meas - 1| over the priced rows of role and system
 * (NULL: any). */
static double med_err(const lrow *m, int n, const char *role, const char *sys, double *mx,
                      int *count) {
  static double e[MAX_LLM];
  int k = 0;
  *mx = 0;
  for (int i = 0; i < n; i++)
    if (!m[i].skip[0] && (!role || !strcmp(m[i].role, role)) && (!sys || !strcmp(m[i].hw, sys))) {
      e[k] = fabs(m[i].pred / m[i].meas - 1);
      *mx = fmax(*mx, e[k++]);
    }
  *count = k;
  if (!k) return NAN;
  qsort(e, (size_t)k, sizeof *e, cmp_dbl);
  return k % 2 ? e[k / 2] : 0.5 * (e[k / 2 - 1] + e[k / 2]);
}

/* Signed median of pred/meas - 1 (the bias) over the priced rows of role
 * and system. */
static double med_bias(const lrow *m, int n, const char *role, const char *sys) {
  static double e[MAX_LLM];
  int k = 0;
  for (int i = 0; i < n; i++)
    if (!m[i].skip[0] && !strcmp(m[i].role, role) && !strcmp(m[i].hw, sys))
      e[k++] = m[i].pred / m[i].meas - 1;
  if (!k) return NAN;
  qsort(e, (size_t)k, sizeof *e, cmp_dbl);
  return k % 2 ? e[k / 2] : 0.5 * (e[k / 2 - 1] + e[k / 2]);
}

static void report(const lrow *m, int n) {
  printf("Published LLM training throughput vs the step model (%d rows; api_step, the published "
         "recipe)\n",
         n);
  printf("  %-44s %-5s %9s %9s %8s\n", "id", "role", "meas t/s", "pred t/s", "error");
  for (int i = 0; i < n; i++) {
    if (m[i].skip[0])
      printf("  %-44s %-5s %9.0f %9s  skipped: %s\n", m[i].id, m[i].role, m[i].meas, "-",
             m[i].skip);
    else
      printf("  %-44s %-5s %9.0f %9.0f %+7.1f%%\n", m[i].id, m[i].role, m[i].meas, m[i].pred,
             (m[i].pred / m[i].meas - 1) * 100);
  }
  static const char *const systems[] = {"DGX-H100", "DGX-B200", "DGX-GB200", "AMD-MI355X",
                                        "AMD-MI350X"};
  for (size_t k = 0; k < sizeof systems / sizeof systems[0]; k++)
    for (int j = 0; j < 2; j++) {
      int c;
      double mx, e = med_err(m, n, j ? "check" : "fit", systems[k], &mx, &c);
      if (c)
        printf("  %-9s %-5s (n=%2d): median %5.1f%%, max %5.1f%%, bias %+5.1f%%\n", systems[k],
               j ? "check" : "fit", c, e * 100, mx * 100,
               med_bias(m, n, j ? "check" : "fit", systems[k]) * 100);
    }
  int cf, cc, skipped = 0;
  double mf, mc, ef = med_err(m, n, "fit", NULL, &mf, &cf),
                 ec = med_err(m, n, "check", NULL, &mc, &cc);
  for (int i = 0; i < n; i++) skipped += m[i].skip[0] != 0;
  printf("  fit rows (n=%d): median %.1f%%, max %.1f%%; check rows (n=%d): median %.1f%%, max "
         "%.1f%% (target: median 20%%); %d rows skipped\n",
         cf, ef * 100, mf * 100, cc, ec * 100, mc * 100, skipped);
  printf("{\"bench\":\"published_llm\",\"rows\":%d,\"skipped\":%d,\"fit_median\":%.4f,"
         "\"fit_max\":%.4f,\"check_median\":%.4f,\"check_max\":%.4f}\n",
         n, skipped, ef, mf, ec, mc);
}

static const lrow *find_row(const lrow *m, int n, const char *id) {
  for (int i = 0; id && i < n; i++)
    if (!strcmp(m[i].id, id)) return &m[i];
  return NULL;
}

/* The file's "ratios" (fixed before the rows they pair were priced,
 * LLM.md): measured num/den against predicted num/den. Returns the number
 * of ratios that name a missing or unpriced row. */
static int report_ratios(const lrow *m, int n, const cJSON *ratios, int print) {
  static double e[MAX_LLM];
  const cJSON *it;
  int k = 0, bad = 0;
  cJSON_ArrayForEach(it, ratios) {
    const lrow *a = find_row(m, n, bench_jstr(it, "num")),
               *b = find_row(m, n, bench_jstr(it, "den"));
    if (!a || !b || a->skip[0] || b->skip[0] || !(a->pred > 0) || !(b->pred > 0)) {
      bad++;
      continue;
    }
    double meas = a->meas / b->meas, pred = a->pred / b->pred;
    if (k < MAX_LLM) e[k++] = fabs(pred / meas - 1);
    if (print)
      printf("  ratio %-40s measured %.3f predicted %.3f %+6.1f%%\n", bench_jstr(it, "id"), meas,
             pred, (pred / meas - 1) * 100);
  }
  if (print && k) {
    double mx = 0;
    for (int i = 0; i < k; i++) mx = fmax(mx, e[i]);
    qsort(e, (size_t)k, sizeof *e, cmp_dbl);
    printf("  ratios (n=%d): median |pred/meas - 1| %.1f%%, max %.1f%% (issue 20: median 10%%, "
           "none over 20%%)\n",
           k, (k % 2 ? e[k / 2] : 0.5 * (e[k / 2 - 1] + e[k / 2])) * 100, mx * 100);
  }
  return bad;
}

int main(int argc, char **argv) {
  int cli = bench_cli(argc, argv, "[--check | --fit] [LLM_TRAINING.json]", "--check --fit", 1);
  if (cli >= 0) return cli;
  /* bench_cli let through only --check, --fit and one path, in any order */
  int check = 0, fit = 0;
  const char *path = CDPLAN_SOURCE_DIR "/data/measurements/published/llm_training.json";
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--check"))
      check = 1;
    else if (!strcmp(argv[i], "--fit"))
      fit = 1;
    else
      path = argv[i];
  }
  check |= fit;
  static lrow m[MAX_LLM];
  api_ctx *ctx = NULL;
  svc_err err;
  cJSON *doc = bench_json_load(path, 16u << 20);
  const cJSON *models = cJSON_GetObjectItemCaseSensitive(doc, "models");
  const cJSON *rows = cJSON_GetObjectItemCaseSensitive(doc, "rows"), *it;
  const cJSON *ratios = cJSON_GetObjectItemCaseSensitive(doc, "ratios");
  int n = 0, bad = 0, rc = 1;
  svc_log_threshold = SVC_LOG_WARN;
  if (!cJSON_IsObject(models) || !cJSON_IsArray(rows) || cJSON_GetArraySize(rows) < 1) {
    fprintf(stderr, "published_llm: cannot read %s\n", path);
    goto cleanup;
  }
  if (api_ctx_new(&ctx, ":memory:", &err)) {
    fprintf(stderr, "published_llm: %s\n", err.message);
    goto cleanup;
  }
  cJSON_ArrayForEach(it, rows) {
    if (n == MAX_LLM) {
      bad++;
      break;
    }
    if (price(ctx, models, it, &m[n])) bad++;
    if (strcmp(m[n].role, "fit") && strcmp(m[n].role, "check")) bad++;
    for (int j = 0; j < n; j++) bad += !strcmp(m[j].id, m[n].id);
    n++;
  }
  if (fit) {
    rc = fit_scan(ctx, models, rows) ? 1 : 0;
    goto cleanup;
  }
  if (check) {
    int priced = 0;
    for (int i = 0; i < n; i++) priced += !m[i].skip[0] && m[i].pred > 0;
    int rbad = report_ratios(m, n, ratios, 0);
    printf("published_llm --check: %d rows loaded, %d priced, %d skipped by a stated rule, %d "
           "ratios, %d bad\n",
           n, priced, n - priced - bad, cJSON_GetArraySize(ratios), bad + rbad);
    bad += rbad;
    rc = bad || n != cJSON_GetArraySize(rows) || !priced ? 1 : 0;
    goto cleanup;
  }
  report(m, n);
  bad += report_ratios(m, n, ratios, 1);
  rc = bad ? 1 : 0;
cleanup:
  api_ctx_free(ctx);
  cJSON_Delete(doc);
  return rc;
}
