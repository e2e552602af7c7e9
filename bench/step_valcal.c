/* bench/step_valcal: the step-level calibration from plan validations
 * (api/val_calibrate.c) on the committed H200 runs, scored on rows it was
 * not fitted to. In a temporary database: the compare of
 * data/measurements/h200-plan-validate is validated twice and the two
 * runs' dlrm_step rows ingested (tests/fixtures/plan_validate_h200.json);
 * then `report --calibrate` on run 1's baseline job (fit: run 1, check:
 * run 2), and the same on run 2's (fit: run 2, check: run 1). The older
 * whole-step H200 files of data/measurements/h200-uvm (e2e_uvm*.json,
 * uvm_steps.json: the runner's earlier step kind, never fitted by this
 * calibration) are priced before and after the run-1 fit as a further
 * check. Prints a table and one JSON line. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "api/api_hw.h"
#include "api/api_plan.h"
#include "api/api_step.h"
#include "api/api_validate.h"

#define PV CDPLAN_SOURCE_DIR "/data/measurements/h200-plan-validate/"
#define UVM CDPLAN_SOURCE_DIR "/data/measurements/h200-uvm/"

static char dir[] = "/tmp/cdplan-stepvalcal-XXXXXX";

static void die(const char *what, const svc_err *e) {
  fprintf(stderr, "step_valcal: %s: %s (%s)\n", what, e ? e->message : "", e ? e->field : "");
  exit(1);
}

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) die(path, NULL);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  if (!s || fread(s, 1, (size_t)n, f) != (size_t)n) die(path, NULL);
  s[n] = '\0';
  fclose(f);
  if (len) *len = (size_t)n;
  return s;
}

/* The plan validation's two job ids (baseline, planned). */
static void validate(api_ctx *ctx, const char *id, int k, int64_t jobs[2]) {
  char *out = NULL, bdir[96];
  svc_err e;
  snprintf(bdir, sizeof bdir, "%s/b%d", dir, k);
  api_plan_val_opts o = {.bundle_dir = bdir};
  if (api_plan_validate(ctx, id, "{\"backend\":\"bundle\"}", 20, &o, &out, &e))
    die("validate plan", &e);
  cJSON *d = cJSON_Parse(out), *j;
  cJSON_ArrayForEach(j, cJSON_GetObjectItem(d, "jobs")) {
    int side = strcmp(cJSON_GetObjectItem(j, "side")->valuestring, "baseline") ? 1 : 0;
    jobs[side] = (int64_t)cJSON_GetObjectItem(j, "id")->valuedouble;
  }
  cJSON_Delete(d);
  free(out);
}

static void ingest(api_ctx *ctx, const cJSON *fx, int64_t job, const char *label, int run) {
  cJSON *doc = cJSON_CreateObject(), *rows, *r;
  char *out = NULL;
  svc_err e;
  cJSON_AddNumberToObject(doc, "id", (double)job);
  cJSON_AddStringToObject(doc, "kind", "dlrm_step");
  cJSON_AddItemToObject(doc, "device", cJSON_Duplicate(cJSON_GetObjectItem(fx, "device"), 1));
  rows = cJSON_AddArrayToObject(doc, "rows");
  cJSON_ArrayForEach(r, cJSON_GetObjectItem(fx, "rows")) {
    if (!strcmp(cJSON_GetObjectItem(r, "label")->valuestring, label) &&
        cJSON_GetObjectItem(r, "run")->valuedouble == run)
      cJSON_AddItemToArray(rows, cJSON_Duplicate(r, 1));
  }
  char *t = cJSON_PrintUnformatted(doc);
  if (api_validation_ingest(ctx, t, strlen(t), &out, &e)) die("ingest", &e);
  free(t);
  free(out);
  cJSON_Delete(doc);
}

static cJSON *calibrate(api_ctx *ctx, int64_t job) {
  char ids[24], *out = NULL;
  svc_err e;
  snprintf(ids, sizeof ids, "%lld", (long long)job);
  if (api_validation_report(ctx, ids, 1, &out, &e)) die("report --calibrate", &e);
  cJSON *d = cJSON_Parse(out);
  free(out);
  cJSON *c = cJSON_DetachItemFromObject(d, "calibration");
  cJSON_Delete(d);
  return c;
}

static double num(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static void print_fit(const char *name, const cJSON *c) {
  const cJSON *p = cJSON_GetObjectItem(c, "params"), *f = cJSON_GetObjectItem(c, "fit"),
              *k = cJSON_GetObjectItem(c, "check"), *r;
  printf("%s: g %.3f u %.3f; fit median |err| %.1f%% -> %.1f%%; check median |err| %.1f%% -> "
         "%.1f%%\n",
         name, num(p, "step_dlrm_gpu_scale"), num(p, "step_uvm_link_scale"),
         100 * num(f, "median_abs_rel_error_before"), 100 * num(f, "median_abs_rel_error_after"),
         100 * num(k, "median_abs_rel_error_before"), 100 * num(k, "median_abs_rel_error_after"));
  cJSON_ArrayForEach(r, cJSON_GetObjectItem(k, "rows")) {
    printf("  check job %.0f %-9s measured %7.3f ms  before %7.3f (%+.1f%%)  after %7.3f "
           "(%+.1f%%)\n",
           num(r, "job"), cJSON_GetObjectItem(r, "label")->valuestring, num(r, "measured_step_ms"),
           num(r, "predicted_before_ms"), 100 * num(r, "rel_error_before"),
           num(r, "predicted_after_ms"), 100 * num(r, "rel_error_after"));
  }
}

/* Relative errors of a step-measurement file's rows under hw's latest
 * calibration into e[] (at most cap); how many. */
static int score_file(api_ctx *ctx, const char *path, double *e, int cap) {
  size_t len = 0;
  char *text = slurp(path, &len);
  api_step_meas m = {0};
  svc_err err;
  cost_hw hw;
  int k = 0;
  if (api_step_meas_load(text, len, &m, &err)) die(path, &err);
  if (api_hw_lookup(ctx, "h200", 1, &hw, &err)) die("h200", &err);
  for (size_t i = 0; i < m.n && k < cap; i++) {
    cost_step_result r;
    if (m.s[i].step_ms > 0 && cost_step(&hw, &m.s[i].w, &m.s[i].r, &r) == 0)
      e[k++] = r.step_ms / m.s[i].step_ms - 1;
  }
  api_step_meas_dispose(&m);
  free(text);
  return k;
}

static int cmp_abs(const void *a, const void *b) {
  double x = fabs(*(const double *)a), y = fabs(*(const double *)b);
  return (x > y) - (x < y);
}

static double median_abs(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_abs);
  return n ? (n % 2 ? fabs(v[n / 2]) : 0.5 * (fabs(v[n / 2 - 1]) + fabs(v[n / 2]))) : NAN;
}

/* One database: the compare validated twice, both runs ingested, then
 * `report --calibrate` on run fit_run's baseline job; the other run checks.
 * With uvm (run 1 only), the h200-uvm files are scored before and after. */
static cJSON *one_order(int fit_run, double *gain0, double *gain1, double eb[3][64], int nb[3],
                        double ea[3][64], int na[3]) {
  static const char *const uvm_files[] = {UVM "e2e_uvm.json", UVM "e2e_uvm_repeat.json",
                                          UVM "uvm_steps.json"};
  char db[96], *out = NULL, id[40];
  api_ctx *ctx = NULL;
  svc_err e;
  int64_t run[2][2];
  size_t len;
  snprintf(db, sizeof db, "%s/s%d.db", dir, fit_run);
  if (api_ctx_new(&ctx, db, &e)) die("open", &e);
  char *body = slurp(PV "compare.json", &len);
  if (api_compare(ctx, body, len, &out, &e)) die("compare", &e);
  cJSON *cmp = cJSON_Parse(out);
  free(out);
  snprintf(id, sizeof id, "%s", cJSON_GetObjectItem(cmp, "id")->valuestring);
  *gain0 = num(cmp, "gain");
  cJSON_Delete(cmp);
  validate(ctx, id, 10 * fit_run + 1, run[0]);
  validate(ctx, id, 10 * fit_run + 2, run[1]);
  char *fxt = slurp(CDPLAN_SOURCE_DIR "/tests/fixtures/plan_validate_h200.json", NULL);
  cJSON *fx = cJSON_Parse(fxt);
  free(fxt);
  for (int r = 0; r < 2; r++)
    for (int s = 0; s < 2; s++) ingest(ctx, fx, run[r][s], s ? "planned" : "baseline", r + 1);
  cJSON_Delete(fx);
  for (int f = 0; eb && f < 3; f++) nb[f] = score_file(ctx, uvm_files[f], eb[f], 64);
  cJSON *c = calibrate(ctx, run[fit_run - 1][0]);
  for (int f = 0; ea && f < 3; f++) na[f] = score_file(ctx, uvm_files[f], ea[f], 64);
  if (api_compare(ctx, body, len, &out, &e)) die("compare", &e);
  free(body);
  cmp = cJSON_Parse(out);
  free(out);
  *gain1 = num(cmp, "gain");
  cJSON_Delete(cmp);
  api_ctx_free(ctx);
  return c;
}

int main(void) {
  static const char *const names[] = {"e2e_uvm.json", "e2e_uvm_repeat.json", "uvm_steps.json"};
  char rm[128];
  double eb[3][64], ea[3][64], g0, g1, g2, g3, mb[3], ma[3];
  int nb[3], na[3];
  if (!mkdtemp(dir)) die("mkdtemp", NULL);
  cJSON *c1 = one_order(1, &g0, &g1, eb, nb, ea, na);
  cJSON *c2 = one_order(2, &g2, &g3, NULL, NULL, NULL, NULL);
  print_fit("fit run 1, check run 2", c1);
  print_fit("fit run 2, check run 1", c2);
  printf("compare gain (measured 1.831 from the runs' means): shipped %.3f, after the run-1 fit "
         "%.3f, after the run-2 fit %.3f\n",
         g0, g1, g3);
  for (int f = 0; f < 3; f++) {
    printf("h200-uvm %-20s %2d rows, signed errors shipped/run-1 fit:", names[f], nb[f]);
    for (int i = 0; i < nb[f] && i < na[f]; i++)
      printf(" %+.1f/%+.1f%%", 100 * eb[f][i], 100 * ea[f][i]);
    mb[f] = median_abs(eb[f], nb[f]);
    ma[f] = median_abs(ea[f], na[f]);
    printf("\n  median |err| %.1f%% -> %.1f%%\n", 100 * mb[f], 100 * ma[f]);
  }
  const cJSON *p1 = cJSON_GetObjectItem(c1, "params");
  printf("{\"bench\":\"step_valcal\",\"g_run1\":%.4f,\"u_run1\":%.4f,"
         "\"check_run2_before\":%.4f,\"check_run2_after\":%.4f,"
         "\"check_run1_before\":%.4f,\"check_run1_after\":%.4f,\"gain_before\":%.4f,"
         "\"gain_after_run1_fit\":%.4f,\"gain_after_run2_fit\":%.4f,\"uvm_e2e_before\":%.4f,"
         "\"uvm_e2e_after\":%.4f,\"uvm_e2e_repeat_before\":%.4f,\"uvm_e2e_repeat_after\":%.4f,"
         "\"uvm_steps_before\":%.4f,\"uvm_steps_after\":%.4f}\n",
         num(p1, "step_dlrm_gpu_scale"), num(p1, "step_uvm_link_scale"),
         num(cJSON_GetObjectItem(c1, "check"), "median_abs_rel_error_before"),
         num(cJSON_GetObjectItem(c1, "check"), "median_abs_rel_error_after"),
         num(cJSON_GetObjectItem(c2, "check"), "median_abs_rel_error_before"),
         num(cJSON_GetObjectItem(c2, "check"), "median_abs_rel_error_after"), g0, g1, g3, mb[0],
         ma[0], mb[1], ma[1], mb[2], ma[2]);
  cJSON_Delete(c1);
  cJSON_Delete(c2);
  snprintf(rm, sizeof rm, "rm -rf %s", dir);
  return system(rm) == 0 ? 0 : 1;
}
