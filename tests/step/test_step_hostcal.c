/* The machine's host speed stored in its calibration (issue 21, cdplan
 * calibrate --host-probe, api/calibrate_host.c): a runner dlrm_step
 * result's host probe becomes step_host_op_us = 0.344 x step_kernel_us in
 * a new calibration version of a temporary SQLite file; step answers then
 * price the machine as a recipe's host_op_us would (the same step time) and
 * say so (host_op_source "calibration", host_op_probe); a recipe's own
 * figure still wins; an accelerator priced by its architecture stays so;
 * bad probe figures are refused naming the field, storing nothing; the
 * version survives reopening the file. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "api/api_int.h"
#include "api/api_step.h"

static api_ctx *ctx;
static char dir[64], db[128];

static int setup(void **state) {
  (void)state;
  svc_err err;
  snprintf(dir, sizeof dir, "/tmp/cdplan_hostcal_XXXXXX");
  if (!mkdtemp(dir)) fail_msg("mkdtemp");
  snprintf(db, sizeof db, "%s/db.sqlite", dir);
  if (api_ctx_new(&ctx, db, &err)) fail_msg("%s", err.message);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  char p[160];
  api_ctx_free(ctx);
  const char *sfx[] = {"", "-wal", "-shm", "-journal"};
  for (size_t i = 0; i < 4; i++) {
    snprintf(p, sizeof p, "%s%s", db, sfx[i]);
    unlink(p);
  }
  rmdir(dir);
  return 0;
}

/* A host-bound eager MLPerf-shaped DCN step (bf16, rank 448, row-wise
 * Adagrad: coalesce syncs per table) on hw, host_op_us in the recipe when
 * > 0. The answer, parsed; the caller deletes it. */
static cJSON *step(const char *hw, double host_op_us) {
  char path[512], *text = NULL, *out = NULL;
  size_t len = 0;
  svc_err err;
  snprintf(path, sizeof path, "%s/data/workloads/mlperf_dcnv2.json", CDPLAN_SOURCE_DIR);
  if (svc_read_file(path, 1u << 20, &text, &len, &err)) fail_msg("%s", err.message);
  cJSON *wl = cJSON_ParseWithLength(text, len);
  free(text);
  cJSON *w = cJSON_DetachItemFromObject(wl, "workload");
  cJSON_Delete(wl);
  cJSON_ReplaceItemInObject(w, "cross_rank", cJSON_CreateNumber(448));
  cJSON *tables = cJSON_GetObjectItem(w, "tables"), *t;
  cJSON_ArrayForEach(t, tables) { /* 8M-row cap: fits an 80 GB card */
    cJSON *rows = cJSON_GetObjectItem(t, "rows");
    if (cJSON_GetNumberValue(rows) > 8e6) cJSON_SetNumberValue(rows, 8e6);
  }
  cJSON *req = cJSON_CreateObject(), *r = cJSON_CreateObject();
  cJSON_AddStringToObject(req, "hardware", hw);
  cJSON_AddItemToObject(req, "workload", w);
  cJSON_AddNumberToObject(r, "batch_per_gpu", 4608);
  cJSON_AddStringToObject(r, "precision", "bf16");
  cJSON_AddStringToObject(r, "embedding_precision", "fp32");
  cJSON_AddStringToObject(r, "framework", "pytorch_eager");
  if (host_op_us > 0) cJSON_AddNumberToObject(r, "host_op_us", host_op_us);
  cJSON_AddItemToObject(req, "recipe", r);
  char *body = cJSON_PrintUnformatted(req);
  cJSON_Delete(req);
  if (api_step(ctx, body, strlen(body), &out, &err)) fail_msg("%s (%s)", err.message, err.field);
  free(body);
  cJSON *doc = cJSON_Parse(out);
  free(out);
  assert_non_null(doc);
  return doc;
}

static double num(const cJSON *o, const char *k) {
  return cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, k));
}

static const char *str(const cJSON *o, const char *k) {
  const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
  return s ? s : "";
}

static int has_probe_flag(const cJSON *o) {
  return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "host_op_probe"));
}

/* A runner result holding only what the route reads. */
static int store(const char *hw, const char *probe_json, char **out, svc_err *err) {
  char text[512];
  snprintf(text, sizeof text,
           "{\"kind\":\"dlrm_step\",\"rows\":[],\"started_at\":\"2026-12-05T22:00:00Z\","
           "\"device\":{\"name\":\"NVIDIA H200\"},\"host_probe\":%s}",
           probe_json);
  return api_calibrate_host(ctx, hw, text, strlen(text), "result.json", out, err);
}

static void test_calibrate_host__own_calibration_kept_step_uses_probe(void **state) {
  (void)state;
  svc_err err;
  char *out = NULL;
  cost_hw before, after;
  assert_int_equal(api_hw_lookup(ctx, "h200", 1, &before, &err), 0);
  assert_int_equal(api_calib_level(&before), API_CALIB_OWN);
  cJSON *dflt = step("h200", 0);
  const double k_us = 20.0, want = COST_HOST_PROBE_K * k_us; /* 6.88 us */
  cJSON *rec = step("h200", want);
  assert_string_not_equal(str(dflt, "host_op_source"), "recipe");
  assert_false(has_probe_flag(dflt));
  /* a host-bound step: the measured host moves it */
  assert_true(fabs(num(rec, "step_ms") / num(dflt, "step_ms") - 1) > 0.05);

  if (store("h200", "{\"step_kernel_us\":20.0,\"eager_op_us\":12.5}", &out, &err))
    fail_msg("%s (%s)", err.message, err.field);
  cJSON *rep = cJSON_Parse(out);
  free(out);
  assert_float_equal(num(rep, "host_op_us"), want, 1e-9);
  assert_string_equal(str(rep, "over"), "own");
  assert_string_equal(str(rep, "measured_at"), "2026-12-05T22:00:00Z");
  assert_string_equal(str(rep, "device"), "NVIDIA H200");
  assert_int_equal((int)num(rep, "base_version"), before.calib.version);

  assert_int_equal(api_hw_lookup(ctx, "h200", 1, &after, &err), 0);
  assert_int_equal((int)num(rep, "version"), after.calib.version);
  assert_true(after.calib.version > before.calib.version);
  assert_int_equal(api_calib_level(&after), API_CALIB_OWN);
  /* the fit is kept: every earlier parameter, the host figures added */
  assert_int_equal(after.calib.n, before.calib.n + 3);
  for (int id = 0; id < COST_SP_HOST_OP_US; id++)
    assert_float_equal(cost_step_param_value(&after, id), cost_step_param_value(&before, id),
                       1e-12);
  assert_float_equal(cost_step_param_value(&after, COST_SP_HOST_OP_US), want, 1e-9);
  char *got = NULL;
  assert_int_equal(api_hw_get(ctx, "h200", &got, &err), 0);
  cJSON *hwdoc = cJSON_Parse(got);
  free(got);
  assert_null(cJSON_GetObjectItem(cJSON_GetObjectItem(hwdoc, "calibration"), "host_only"));
  cJSON_Delete(hwdoc);

  cJSON *cal = step("h200", 0);
  assert_string_equal(str(cal, "host_op_source"), "calibration");
  assert_true(has_probe_flag(cal));
  assert_float_equal(num(cal, "host_op_us"), want, 1e-9);
  assert_float_equal(num(cal, "step_ms"), num(rec, "step_ms"), 1e-9);
  assert_int_equal((int)num(cal, "calibration"), after.calib.version);
  /* the recipe's own figure wins */
  cJSON *own = step("h200", 15.0);
  assert_string_equal(str(own, "host_op_source"), "recipe");
  assert_false(has_probe_flag(own));
  assert_float_equal(num(own, "host_op_us"), 15.0, 1e-9);
  cJSON_Delete(rep);
  cJSON_Delete(dflt);
  cJSON_Delete(rec);
  cJSON_Delete(cal);
  cJSON_Delete(own);

  /* stored: a context on the same file answers the same */
  api_ctx_free(ctx);
  if (api_ctx_new(&ctx, db, &err)) fail_msg("%s", err.message);
  cJSON *again = step("h200", 0);
  assert_string_equal(str(again, "host_op_source"), "calibration");
  assert_float_equal(num(again, "host_op_us"), want, 1e-9);
  cJSON_Delete(again);
}

/* The H100 SXM has no calibration of its own (its architecture's, fitted
 * to published rows): a probe does not make it "own". */
static void test_calibrate_host__arch_priced_stays_arch(void **state) {
  (void)state;
  svc_err err;
  char *out = NULL, path[512], *text = NULL;
  size_t len = 0;
  cost_hw before, after;
  assert_int_equal(api_hw_lookup(ctx, "h100-sxm", 1, &before, &err), 0);
  assert_int_equal(api_calib_level(&before), API_CALIB_ARCH);
  /* a real runner result: the fifth H100 blind set's (probe step kernel 14.30 us) */
  snprintf(path, sizeof path, "%s/data/measurements/h100-dcn-mlperf/blind5.json",
           CDPLAN_SOURCE_DIR);
  if (svc_read_file(path, 8u << 20, &text, &len, &err)) fail_msg("%s", err.message);
  if (api_calibrate_host(ctx, "h100-sxm", text, len, "blind5.json", &out, &err))
    fail_msg("%s (%s)", err.message, err.field);
  free(text);
  cJSON *rep = cJSON_Parse(out);
  free(out);
  assert_string_equal(str(rep, "over"), "architecture");
  assert_string_equal(str(rep, "device"), "NVIDIA H100 80GB HBM3");
  assert_float_equal(num(rep, "host_op_us"), 0.344 * 14.299430799998447, 1e-9);
  assert_int_equal(api_hw_lookup(ctx, "h100-sxm", 1, &after, &err), 0);
  assert_int_equal(api_calib_level(&after), API_CALIB_ARCH);
  assert_int_equal(after.calib.version, before.calib.version);
  assert_int_equal(after.calib.n, before.calib.n + 3);
  for (int id = 0; id < COST_SP_HOST_OP_US; id++)
    assert_float_equal(cost_step_param_value(&after, id), cost_step_param_value(&before, id),
                       1e-12);
  cJSON *cal = step("h100-sxm", 0), *rec = step("h100-sxm", num(rep, "host_op_us"));
  assert_string_equal(str(cal, "host_op_source"), "calibration");
  assert_true(has_probe_flag(cal));
  assert_float_equal(num(cal, "step_ms"), num(rec, "step_ms"), 1e-9);
  /* GET's calibration member says it holds host figures only */
  char *got = NULL;
  assert_int_equal(api_hw_get(ctx, "h100-sxm", &got, &err), 0);
  cJSON *hwdoc = cJSON_Parse(got);
  free(got);
  assert_true(
      cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(hwdoc, "calibration"), "host_only")));
  cJSON_Delete(hwdoc);
  /* a second probe replaces the first, still over the architecture */
  if (store("h100-sxm", "{\"step_kernel_us\":30}", &out, &err)) fail_msg("%s", err.message);
  free(out);
  assert_int_equal(api_hw_lookup(ctx, "h100-sxm", 1, &after, &err), 0);
  assert_int_equal(api_calib_level(&after), API_CALIB_ARCH);
  assert_float_equal(cost_step_param_value(&after, COST_SP_HOST_OP_US), 0.344 * 30, 1e-9);
  cJSON_Delete(rep);
  cJSON_Delete(cal);
  cJSON_Delete(rec);
}

static void test_calibrate_host__bad_probe_refused_naming_field(void **state) {
  (void)state;
  static const struct {
    const char *probe, *field;
  } bad[] = {
      {"null", "host_probe"},
      {"[1]", "host_probe"},
      {"{}", "host_probe.step_kernel_us"},
      {"{\"step_kernel_us\":null}", "host_probe.step_kernel_us"},
      {"{\"step_kernel_us\":\"NaN\"}", "host_probe.step_kernel_us"},
      {"{\"step_kernel_us\":-14.3}", "host_probe.step_kernel_us"},
      {"{\"step_kernel_us\":0}", "host_probe.step_kernel_us"},
      {"{\"step_kernel_us\":1e9}", "host_probe.step_kernel_us"},
      {"{\"step_kernel_us\":1e999}", "host_probe.step_kernel_us"},
      {"{\"step_kernel_us\":14.3,\"eager_op_us\":-1}", "host_probe.eager_op_us"},
      {"{\"step_kernel_us\":14.3,\"eager_op_us\":\"fast\"}", "host_probe.eager_op_us"},
      {"{\"step_kernel_us\":14.3,\"eager_op_us\":1e7}", "host_probe.eager_op_us"},
  };
  svc_err err;
  char *out = NULL;
  cost_hw before, after;
  assert_int_equal(api_hw_lookup(ctx, "h200", 1, &before, &err), 0);
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    int rc = store("h200", bad[i].probe, &out, &err);
    /* a client's mistake (400: bad field, missing, out of range), naming it */
    if (rc >= 0 || svc_code_http(-rc) != 400)
      fail_msg("%s: rc %d (%s)", bad[i].probe, rc, err.message);
    assert_null(out);
    assert_string_equal(err.field, bad[i].field);
  }
  const char *no_probe = "{\"kind\":\"dlrm_step\",\"rows\":[]}";
  assert_int_equal(api_calibrate_host(ctx, "h200", no_probe, strlen(no_probe), "x", &out, &err),
                   -SVC_BAD_FIELD);
  assert_string_equal(err.field, "host_probe");
  assert_int_equal(api_calibrate_host(ctx, "h200", "{nope", 5, "x", &out, &err), -SVC_BAD_JSON);
  assert_int_equal(api_calibrate_host(ctx, NULL, no_probe, strlen(no_probe), "x", &out, &err),
                   -SVC_BAD_ARGS);
  assert_string_equal(err.field, "hardware");
  assert_int_equal(store("no-such-gpu", "{\"step_kernel_us\":14.3}", &out, &err), -SVC_NOT_FOUND);
  assert_string_equal(err.field, "hardware");
  /* nothing stored */
  assert_int_equal(api_hw_lookup(ctx, "h200", 1, &after, &err), 0);
  assert_int_equal(after.calib.version, before.calib.version);
  assert_int_equal(after.calib.n, before.calib.n);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_calibrate_host__own_calibration_kept_step_uses_probe,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(test_calibrate_host__arch_priced_stays_arch, setup, teardown),
      cmocka_unit_test_setup_teardown(test_calibrate_host__bad_probe_refused_naming_field, setup,
                                      teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
