/* The step-level calibration from plan validations (api/val_calibrate.c),
 * end to end on CPU with a real SQLite file: the H200 compare of
 * data/measurements/h200-plan-validate validated twice (bundle backend),
 * the measured dlrm_step rows (tests/fixtures/plan_validate_h200.json)
 * ingested as the four jobs' results, `report --calibrate` on run 1's
 * baseline job: the version it stores (fitted on run 1's pair, checked on
 * run 2's), the step, compare and provenance answers after it, and the
 * rows and devices it refuses. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "api/api_plan.h"
#include "api/api_step.h"
#include "api/api_validate.h"
#include "val_tmpctx.h"

#define PV CDPLAN_SOURCE_DIR "/data/measurements/h200-plan-validate/"

static char dir[128], db_path[192];

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
  s[n] = '\0';
  fclose(f);
  return s;
}

static int setup(void **state) {
  api_ctx *ctx = NULL;
  int rc = val_tmpctx_open(dir, db_path, "valcal", &ctx);
  *state = ctx;
  return rc;
}

static int teardown(void **state) { return val_tmpctx_close(*state, dir); }

static double num(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  if (!cJSON_IsNumber(v)) fail_msg("%s is not a number", k);
  return v->valuedouble;
}

/* out is read after the call: pass its address (arguments are evaluated
 * in no set order). */
static cJSON *must(int rc, char **out, const svc_err *err, const char *what) {
  if (rc) fail_msg("%s: %s (%s)", what, err->message, err->field);
  cJSON *d = cJSON_Parse(*out);
  free(*out);
  assert_non_null(d);
  return d;
}

/* The compare, stored; its id into id. */
static void compare(api_ctx *ctx, char id[40], cJSON **doc) {
  char *body = slurp(PV "compare.json"), *out = NULL;
  svc_err err;
  cJSON *d = must(api_compare(ctx, body, strlen(body), &out, &err), &out, &err, "compare");
  free(body);
  snprintf(id, 40, "%s", cJSON_GetObjectItem(d, "id")->valuestring);
  if (doc)
    *doc = d;
  else
    cJSON_Delete(d);
}

/* Validate plan id (bundle); the baseline and planned job ids. */
static void validate(api_ctx *ctx, const char *id, int64_t jobs[2]) {
  char *out = NULL, bdir[200];
  svc_err err;
  static int k;
  snprintf(bdir, sizeof bdir, "%s/b%d", dir, k++);
  api_plan_val_opts o = {.bundle_dir = bdir};
  const char *body = "{\"backend\":\"bundle\",\"steps\":20,\"warmup\":5}";
  cJSON *d = must(api_plan_validate(ctx, id, body, strlen(body), &o, &out, &err), &out, &err,
                  "validate plan");
  const cJSON *j;
  cJSON_ArrayForEach(j, cJSON_GetObjectItem(d, "jobs")) {
    int side = strcmp(cJSON_GetObjectItem(j, "side")->valuestring, "baseline") ? 1 : 0;
    jobs[side] = (int64_t)num(j, "id");
  }
  cJSON_Delete(d);
}

/* Ingest the fixture's row of (label, run) as job's result; edit (may be
 * NULL) changes the row or the device first. */
static int ingest(api_ctx *ctx, int64_t job, const char *label, int run,
                  void (*edit)(cJSON *row, cJSON *device), svc_err *err) {
  char *fx = slurp(CDPLAN_SOURCE_DIR "/tests/fixtures/plan_validate_h200.json"), *out = NULL;
  cJSON *all = cJSON_Parse(fx), *doc = cJSON_CreateObject(), *rows, *r;
  free(fx);
  cJSON_AddNumberToObject(doc, "id", (double)job);
  cJSON_AddStringToObject(doc, "kind", "dlrm_step");
  cJSON *dev = cJSON_Duplicate(cJSON_GetObjectItem(all, "device"), 1);
  cJSON_AddItemToObject(doc, "device", dev);
  rows = cJSON_AddArrayToObject(doc, "rows");
  cJSON_ArrayForEach(r, cJSON_GetObjectItem(all, "rows")) {
    if (strcmp(cJSON_GetObjectItem(r, "label")->valuestring, label) || num(r, "run") != run)
      continue;
    cJSON *row = cJSON_Duplicate(r, 1);
    if (edit) edit(row, dev);
    cJSON_AddItemToArray(rows, row);
  }
  assert_int_equal(cJSON_GetArraySize(rows), 1);
  char *text = cJSON_PrintUnformatted(doc);
  int rc = api_validation_ingest(ctx, text, strlen(text), &out, err);
  free(text);
  free(out);
  cJSON_Delete(doc);
  cJSON_Delete(all);
  return rc;
}

static double step_ms(api_ctx *ctx, const char *file, cJSON **prov) {
  char *body = slurp(file), *out = NULL;
  svc_err err;
  cJSON *d = must(api_step(ctx, body, strlen(body), &out, &err), &out, &err, "step");
  free(body);
  double ms = num(d, "step_ms");
  if (prov) *prov = cJSON_Duplicate(cJSON_GetObjectItem(d, "provenance"), 1);
  cJSON_Delete(d);
  return ms;
}

static cJSON *calibrate(api_ctx *ctx, int64_t job, svc_err *err, int *rc) {
  char ids[24], *out = NULL;
  snprintf(ids, sizeof ids, "%lld", (long long)job);
  *rc = api_validation_report(ctx, ids, 1, &out, err);
  if (*rc) return NULL;
  cJSON *d = cJSON_Parse(out);
  free(out);
  return d;
}

/* Run 1 fitted, run 2 checked: both step answers move up toward what the
 * H200 measured (the model was 15-25 % fast), the version names its jobs
 * and device, the held-out error falls, and a compare made after it
 * predicts both sides slower and the gain nearer the measured one. */
static void test_val_calibrate__plan_runs_fit_and_check(void **state) {
  api_ctx *ctx = *state;
  char id[40];
  int64_t run1[2], run2[2];
  svc_err err;
  int rc;
  cJSON *cmp0 = NULL;
  compare(ctx, id, &cmp0);
  validate(ctx, id, run1);
  validate(ctx, id, run2);
  const char *side[2] = {"baseline", "planned"};
  for (int s = 0; s < 2; s++) {
    assert_int_equal(ingest(ctx, run1[s], side[s], 1, NULL, &err), 0);
    assert_int_equal(ingest(ctx, run2[s], side[s], 2, NULL, &err), 0);
  }
  double before = step_ms(ctx, PV "step_planned.json", NULL);
  double before_port = step_ms(ctx, PV "step_baseline.json", NULL);
  cJSON *rep = calibrate(ctx, run1[0], &err, &rc);
  if (rc) fail_msg("calibrate: %s (%s)", err.message, err.field);
  cJSON *cal = cJSON_GetObjectItem(rep, "calibration");
  assert_string_equal(cJSON_GetObjectItem(cal, "kind")->valuestring, "step_validation");
  assert_true(num(cal, "version") > num(cal, "base_version"));
  /* provenance: the fitted jobs are run 1's pair, the device the H200 */
  cJSON *fo = cJSON_GetObjectItem(cal, "fitted_on"), *fj = cJSON_GetObjectItem(fo, "jobs");
  assert_int_equal(cJSON_GetArraySize(fj), 2);
  assert_true(cJSON_GetArrayItem(fj, 0)->valuedouble == (double)run1[0]);
  assert_true(cJSON_GetArrayItem(fj, 1)->valuedouble == (double)run1[1]);
  assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(fo, "device"), "name")->valuestring,
                      "NVIDIA H200");
  cJSON *chk = cJSON_GetObjectItem(cal, "check");
  assert_int_equal(num(chk, "n"), 2); /* run 2's pair, never fitted */
  assert_true(num(chk, "median_abs_rel_error_after") < num(chk, "median_abs_rel_error_before"));
  assert_true(num(chk, "median_abs_rel_error_after") < 0.10);
  cJSON *params = cJSON_GetObjectItem(cal, "params");
  assert_true(num(params, "step_dlrm_gpu_scale") > 1.0);
  assert_true(num(params, "step_uvm_link_scale") > 0.5);
  /* the answers use it and say so */
  cJSON *prov = NULL;
  double after = step_ms(ctx, PV "step_planned.json", &prov);
  double after_port = step_ms(ctx, PV "step_baseline.json", NULL);
  assert_true(after > before * 1.05 && after_port > before_port * 1.05);
  assert_true(num(prov, "calibration") == num(cal, "version"));
  cJSON *sc = cJSON_GetObjectItem(prov, "step_calibration");
  assert_non_null(sc);
  assert_true(fabs(num(sc, "held_out_median_rel_error") - num(chk, "median_abs_rel_error_after")) <
              1e-12);
  cJSON_Delete(prov);
  cJSON *cmp1 = NULL;
  compare(ctx, id, &cmp1);
  double g0 = num(cmp0, "gain"), g1 = num(cmp1, "gain"), measured = 1.8313364857455716;
  assert_true(num(cJSON_GetObjectItem(cmp1, "to"), "step_ms") >
              num(cJSON_GetObjectItem(cmp0, "to"), "step_ms"));
  assert_true(num(cJSON_GetObjectItem(cmp1, "direct_port"), "step_ms") >
              num(cJSON_GetObjectItem(cmp0, "direct_port"), "step_ms"));
  assert_true(fabs(g1 / measured - 1) < fabs(g0 / measured - 1));
  cJSON_Delete(cmp0);
  cJSON_Delete(cmp1);
  cJSON_Delete(rep);
}

static double mini_ms;
static void with_mini(cJSON *row, cJSON *dev) {
  (void)dev;
  cJSON *hm = cJSON_AddObjectToObject(row, "host_mini");
  cJSON_AddNumberToObject(hm, "batch", 256);
  cJSON_AddNumberToObject(hm, "step_ms", mini_ms);
}

static cJSON *report(api_ctx *ctx, int64_t job) {
  char ids[24], *out = NULL;
  svc_err err;
  snprintf(ids, sizeof ids, "%lld", (long long)job);
  return must(api_validation_report(ctx, ids, 0, &out, &err), &out, &err, "report");
}

/* The report re-prices each whole-step case that carries the runner's
 * host_mini at its machine's own host (the mini route): a slower mini
 * step means a slower host, so a larger per-op host time and a step no
 * faster; a case without one has no such section. */
static void test_val_report__cases_at_the_machine_host(void **state) {
  api_ctx *ctx = *state;
  char id[40];
  int64_t run1[2], run2[2];
  svc_err err;
  cJSON *cmp0 = NULL;
  compare(ctx, id, &cmp0);
  cJSON_Delete(cmp0);
  validate(ctx, id, run1);
  validate(ctx, id, run2);
  mini_ms = 9.0;
  assert_int_equal(ingest(ctx, run1[0], "baseline", 1, with_mini, &err), 0);
  mini_ms = 18.0;
  assert_int_equal(ingest(ctx, run2[0], "baseline", 2, with_mini, &err), 0);
  assert_int_equal(ingest(ctx, run1[1], "planned", 1, NULL, &err), 0);
  double op[2], pred[2];
  int64_t jobs[2] = {run1[0], run2[0]};
  for (int i = 0; i < 2; i++) {
    cJSON *rep = report(ctx, jobs[i]), *at = cJSON_GetObjectItem(rep, "at_machine_host");
    assert_non_null(at);
    cJSON *rows = cJSON_GetObjectItem(at, "rows"), *x = cJSON_GetArrayItem(rows, 0);
    assert_int_equal(cJSON_GetArraySize(rows), 1);
    assert_string_equal(cJSON_GetObjectItem(x, "label")->valuestring, "baseline");
    assert_true(num(x, "host_mini_step_ms") == (i ? 18.0 : 9.0));
    op[i] = num(x, "host_op_us");
    pred[i] = num(x, "predicted_ms");
    assert_true(fabs(num(x, "rel_error") - (pred[i] / num(x, "measured_step_ms") - 1)) < 1e-12);
    assert_true(fabs(num(at, "median_abs_rel_error") - fabs(num(x, "rel_error"))) < 1e-12);
    cJSON_Delete(rep);
  }
  assert_true(op[1] > op[0] && pred[1] >= pred[0]);
  cJSON *rep = report(ctx, run1[1]);
  assert_null(cJSON_GetObjectItem(rep, "at_machine_host"));
  cJSON_Delete(rep);
}

static void neg_step(cJSON *row, cJSON *dev) {
  (void)dev;
  cJSON_ReplaceItemInObject(row, "step_ms", cJSON_CreateNumber(-3));
}
static void bad_label(cJSON *row, cJSON *dev) {
  (void)dev;
  cJSON_ReplaceItemInObject(row, "label", cJSON_CreateString("nosuchside"));
}
static void bad_recipe(cJSON *row, cJSON *dev) {
  (void)dev;
  cJSON_ReplaceItemInObject(cJSON_GetObjectItem(row, "recipe"), "batch_per_gpu",
                            cJSON_CreateNumber(0));
}
static void h100(cJSON *row, cJSON *dev) {
  (void)row;
  cJSON_ReplaceItemInObject(dev, "name", cJSON_CreateString("NVIDIA H100 80GB HBM3"));
  cJSON_ReplaceItemInObject(dev, "memory_bytes", cJSON_CreateNumber(85e9));
  cJSON_ReplaceItemInObject(dev, "mem_bytes", cJSON_CreateNumber(85e9));
}

/* Bad rows are 4xx naming the field, a result from another GPU is 409
 * naming device (the job's and its partner's), and nothing is stored. */
static void test_val_calibrate__bad_rows_named(void **state) {
  api_ctx *ctx = *state;
  char id[40];
  int64_t jobs[2];
  svc_err err;
  int rc;
  compare(ctx, id, NULL);
  struct {
    void (*edit)(cJSON *, cJSON *);
    int on_partner, http;
    const char *field;
  } cases[] = {
      {neg_step, 0, 400, "rows[0].step_ms"},
      {bad_label, 0, 400, "rows[0].label"},
      {bad_recipe, 0, 400, "rows[0].recipe.batch_per_gpu"},
      {h100, 0, 409, "device"},
      {h100, 1, 409, "device"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    validate(ctx, id, jobs);
    assert_int_equal(
        ingest(ctx, jobs[0], "baseline", 1, cases[k].on_partner ? NULL : cases[k].edit, &err), 0);
    assert_int_equal(
        ingest(ctx, jobs[1], "planned", 1, cases[k].on_partner ? cases[k].edit : NULL, &err), 0);
    cJSON *d = calibrate(ctx, jobs[0], &err, &rc);
    cJSON_Delete(d);
    if (rc >= 0 || svc_code_http(-rc) != cases[k].http || strcmp(err.field, cases[k].field))
      fail_msg("case %zu: rc %d field '%s' (%s)", k, rc, err.field, err.message);
  }
  /* nothing was stored: the step answer still uses the shipped version */
  cJSON *prov = NULL;
  step_ms(ctx, PV "step_planned.json", &prov);
  assert_null(cJSON_GetObjectItem(prov, "step_calibration"));
  cJSON_Delete(prov);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_val_calibrate__plan_runs_fit_and_check, setup, teardown),
      cmocka_unit_test_setup_teardown(test_val_calibrate__bad_rows_named, setup, teardown),
      cmocka_unit_test_setup_teardown(test_val_report__cases_at_the_machine_host, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
