/* The hardware descriptor codec and catalog operations through api/, on a
 * real SQLite file (or a PostgreSQL database as test_api_hardware_pg,
 * tests/pg): the seeded catalog, every validation rule naming its
 * field, and writes that fail leaving the stored descriptor as it was. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "api/api_int.h"
#include "pg_testdb.h"
#include "tests/tmpdb.h"

static char path[64];

static int setup(void **state) {
  char store[256];
  tmpdb_name(path, sizeof path, "api");
  if (testdb_make(store, sizeof store, path)) fail_msg("no store");
  api_ctx *ctx = NULL;
  svc_err err;
  if (api_ctx_new(&ctx, store, &err)) fail_msg("open: %s", err.message);
  *state = ctx;
  return 0;
}

static int teardown(void **state) {
  api_ctx_free(*state);
  tmpdb_remove(path);
  return 0;
}

/* A valid descriptor, as a cJSON document to mutate. */
static cJSON *sample(const char *name) {
  char *text = NULL;
  size_t len = 0;
  assert_int_equal(
      svc_read_file(CDPLAN_SOURCE_DIR "/data/hardware/h200.json", 1 << 20, &text, &len, NULL), 0);
  cJSON *doc = cJSON_Parse(text);
  free(text);
  assert_non_null(doc);
  cJSON_ReplaceItemInObject(doc, "name", cJSON_CreateString(name));
  return doc;
}

/* Create doc and return the result code; err gets the error. */
static int create(api_ctx *ctx, cJSON *doc, svc_err *err) {
  char *body = cJSON_PrintUnformatted(doc), *out = NULL;
  int rc = api_hw_create(ctx, body, strlen(body), &out, err);
  free(body);
  free(out);
  return rc;
}

static void expect_field(api_ctx *ctx, cJSON *doc, int code, const char *field) {
  svc_err err;
  svc_err_clear(&err);
  assert_int_equal(create(ctx, doc, &err), -code);
  assert_string_equal(err.field, field);
  cJSON_Delete(doc);
}

static void test_api_hw__seeded_catalog_decodes_every_file(void **state) {
  api_ctx *ctx = *state;
  size_t n = 0;
  svc_err err;
  for (; api_catalog_files[n].name; n++) {
    cJSON *doc = cJSON_ParseWithLength(api_catalog_files[n].text, api_catalog_files[n].len);
    cost_hw hw;
    assert_non_null(doc);
    if (api_hw_decode(doc, &hw, &err))
      fail_msg("%s: %s (%s)", api_catalog_files[n].name, err.message, err.field);
    /* The file is named after the descriptor. */
    char want[80];
    snprintf(want, sizeof want, "%s.json", hw.name);
    assert_string_equal(api_catalog_files[n].name, want);
    assert_true(hw.peak_flops[COST_DT_BF16] > 0 || hw.peak_flops[COST_DT_FP32] > 0);
    cJSON_Delete(doc);
  }
  assert_true(n >= 1);
  char *out = NULL;
  assert_int_equal(api_hw_list(ctx, NULL, &out, &err), 0);
  cJSON *list = cJSON_Parse(out);
  assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(list, "hardware")), (int)n);
  cJSON_Delete(list);
  free(out);
}

static void test_api_hw__decode_converts_units(void **state) {
  (void)state;
  cJSON *doc = sample("unit-check");
  cost_hw hw;
  svc_err err;
  assert_int_equal(api_hw_decode(doc, &hw, &err), 0);
  assert_int_equal(hw.compute_units, 132);
  assert_true(hw.clock_hz > 1.9e9 && hw.clock_hz < 2.1e9);
  assert_true(hw.peak_flops[COST_DT_BF16] > 9e14 && hw.peak_flops[COST_DT_BF16] < 1.1e15);
  assert_true(hw.hbm_bw > 4e12);
  assert_true(hw.n_mma >= 1);
  cJSON_Delete(doc);
}

static void test_api_hw__rules_name_the_field(void **state) {
  api_ctx *ctx = *state;
  cJSON *d;
  d = sample("Bad Name");
  expect_field(ctx, d, SVC_BAD_FIELD, "name");
  d = sample("ok1");
  cJSON_AddNumberToObject(d, "colour", 3);
  expect_field(ctx, d, SVC_UNKNOWN_FIELD, "colour");
  d = sample("ok2");
  cJSON_ReplaceItemInObject(d, "compute_units", cJSON_CreateNumber(131.5));
  expect_field(ctx, d, SVC_BAD_FIELD, "compute_units");
  d = sample("ok3");
  cJSON_ReplaceItemInObject(d, "hbm_bandwidth_bytes_per_s", cJSON_CreateNumber(-1));
  expect_field(ctx, d, SVC_OUT_OF_RANGE, "hbm_bandwidth_bytes_per_s");
  d = sample("ok4");
  cJSON_ReplaceItemInObject(d, "hbm_bytes", cJSON_CreateNumber(1e300));
  expect_field(ctx, d, SVC_OUT_OF_RANGE, "hbm_bytes");
  d = sample("ok5");
  cJSON_ReplaceItemInObject(d, "clock_mhz", cJSON_CreateString("fast"));
  expect_field(ctx, d, SVC_BAD_FIELD, "clock_mhz");
  d = sample("ok6");
  cJSON_DeleteItemFromObject(d, "vendor");
  expect_field(ctx, d, SVC_MISSING_FIELD, "vendor");
  d = sample("ok7");
  cJSON_AddNumberToObject(cJSON_GetObjectItem(d, "peak_tflops"), "fp128", 1);
  expect_field(ctx, d, SVC_UNKNOWN_FIELD, "peak_tflops.fp128");
  d = sample("ok8");
  cJSON_ReplaceItemInObject(cJSON_GetObjectItem(d, "peak_tflops"), "bf16", cJSON_CreateNumber(0));
  expect_field(ctx, d, SVC_OUT_OF_RANGE, "peak_tflops.bf16");
  d = sample("ok9");
  cJSON_DeleteItemFromObject(cJSON_GetObjectItem(d, "sources"), "tdp_watts");
  expect_field(ctx, d, SVC_MISSING_FIELD, "tdp_watts");
  d = sample("ok10");
  cJSON_AddStringToObject(cJSON_GetObjectItem(d, "sources"), "warp_drive", "x");
  expect_field(ctx, d, SVC_UNKNOWN_FIELD, "sources.warp_drive");
  d = sample("ok11");
  cJSON_ReplaceItemInObject(d, "hbm_usable_bytes", cJSON_CreateNumber(2e11));
  expect_field(ctx, d, SVC_OUT_OF_RANGE, "hbm_usable_bytes");
  d = sample("ok12");
  cJSON_ReplaceItemInObject(cJSON_GetArrayItem(cJSON_GetObjectItem(d, "matrix_instructions"), 1),
                            "dtype", cJSON_CreateString("fp99"));
  expect_field(ctx, d, SVC_BAD_FIELD, "matrix_instructions[1].dtype");
  d = sample("ok13");
  char longname[80];
  memset(longname, 'a', 70);
  longname[70] = '\0';
  cJSON_ReplaceItemInObject(d, "name", cJSON_CreateString(longname));
  expect_field(ctx, d, SVC_BAD_FIELD, "name");
}

static void test_api_hw__bad_bodies(void **state) {
  api_ctx *ctx = *state;
  char *out = NULL;
  svc_err err;
  assert_int_equal(api_hw_create(ctx, "{\"name\":", 8, &out, &err), -SVC_BAD_JSON);
  assert_int_equal(api_hw_create(ctx, "[1,2]", 5, &out, &err), -SVC_BAD_JSON);
  assert_int_equal(api_hw_create(ctx, "{} x", 4, &out, &err), -SVC_BAD_JSON);
  assert_int_equal(api_hw_create(ctx, "", 0, &out, &err), -SVC_BAD_JSON);
  assert_null(out);
}

static void test_api_hw__create_get_replace_delete(void **state) {
  api_ctx *ctx = *state;
  svc_err err;
  char *out = NULL, *body;
  int created = -1;
  cJSON *d = sample("lab-gpu");
  assert_int_equal(create(ctx, d, &err), 0);
  assert_int_equal(create(ctx, d, &err), -SVC_CONFLICT);
  cJSON_ReplaceItemInObject(d, "tdp_watts", cJSON_CreateNumber(650));
  body = cJSON_PrintUnformatted(d);
  assert_int_equal(api_hw_replace(ctx, "lab-gpu", body, strlen(body), &created, &out, &err), 0);
  assert_int_equal(created, 0);
  free(out);
  /* The URL's name and the body's must agree. */
  assert_int_equal(api_hw_replace(ctx, "other", body, strlen(body), &created, &out, &err),
                   -SVC_BAD_FIELD);
  free(body);
  assert_int_equal(api_hw_get(ctx, "lab-gpu", &out, &err), 0);
  cJSON *got = cJSON_Parse(out);
  assert_int_equal(cJSON_GetObjectItem(got, "tdp_watts")->valueint, 650);
  cJSON_Delete(got);
  free(out);
  assert_int_equal(api_hw_delete(ctx, "lab-gpu", &err), 0);
  assert_int_equal(api_hw_get(ctx, "lab-gpu", &out, &err), -SVC_NOT_FOUND);
  assert_int_equal(api_hw_delete(ctx, "lab-gpu", &err), -SVC_NOT_FOUND);
  cJSON_Delete(d);
}

/* setup.timing "per_call" (one op timed alone from an idle GPU): the
 * row's GPU share is its time less API_PUB_CALL_MS; "loop" and null keep
 * the time; any other value is a 400 naming setup.timing. */
static void test_api_hw__published_rows_per_call(void **state) {
  api_ctx *ctx = *state;
  svc_err err;
  api_pub_row *rows = NULL;
  size_t n = 0;
  static const char doc[] =
      "[{\"id\":\"a\",\"source\":{\"url\":\"u\"},\"setup\":{\"hardware\":\"mi355x\",\"m\":1024,"
      "\"n\":1024,\"k\":1024,\"dtype\":\"bf16\",\"timing\":\"per_call\"},\"metric\":\"tflops\","
      "\"value\":50,\"role\":\"fit\"},"
      "{\"id\":\"b\",\"source\":{\"url\":\"u\"},\"setup\":{\"hardware\":\"mi355x\",\"m\":1024,"
      "\"n\":1024,\"k\":1024,\"dtype\":\"bf16\",\"timing\":\"loop\"},\"metric\":\"tflops\","
      "\"value\":50,\"role\":\"fit\"}]";
  assert_int_equal(api_published_rows(ctx, doc, sizeof doc - 1, "t", &rows, &n, &err), 0);
  assert_int_equal(n, 2);
  double ms = 2.0 * 1024 * 1024 * 1024 / 50e12 * 1e3;
  assert_true(fabs(rows[0].call_ms - API_PUB_CALL_MS) < 1e-12);
  assert_true(fabs(rows[0].s.ms - (ms - API_PUB_CALL_MS)) < 1e-9);
  assert_true(rows[1].call_ms == 0 && fabs(rows[1].s.ms - ms) < 1e-9);
  free(rows);
  static const char bad[] =
      "[{\"id\":\"a\",\"source\":{\"url\":\"u\"},\"setup\":{\"hardware\":\"mi355x\",\"m\":1024,"
      "\"n\":1024,\"k\":1024,\"dtype\":\"bf16\",\"timing\":\"events\"},\"metric\":\"tflops\","
      "\"value\":50,\"role\":\"fit\"}]";
  rows = NULL;
  assert_int_not_equal(api_published_rows(ctx, bad, sizeof bad - 1, "t", &rows, &n, &err), 0);
  assert_int_equal(err.code, SVC_BAD_FIELD);
  assert_string_equal(err.field, "[0].setup.timing");
  free(rows);
}

static void test_api_hw__failed_replace_keeps_stored_doc(void **state) {
  api_ctx *ctx = *state;
  svc_err err;
  char *before = NULL, *after = NULL, *out = NULL;
  int created = 0;
  assert_int_equal(api_hw_get(ctx, "h200", &before, &err), 0);
  cJSON *d = sample("h200");
  cJSON_ReplaceItemInObject(d, "hbm_bytes", cJSON_CreateNumber(-5));
  char *body = cJSON_PrintUnformatted(d);
  assert_int_equal(api_hw_replace(ctx, "h200", body, strlen(body), &created, &out, &err),
                   -SVC_OUT_OF_RANGE);
  assert_int_equal(api_hw_get(ctx, "h200", &after, &err), 0);
  assert_string_equal(before, after);
  free(body);
  free(before);
  free(after);
  cJSON_Delete(d);
}

static void write_file(const char *p, const char *text) {
  FILE *f = fopen(p, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

static void test_api_hw__import_is_all_or_nothing(void **state) {
  api_ctx *ctx = *state;
  svc_err err;
  char dir[64] = "/tmp/cdplan-import-XXXXXX", p[128], *out = NULL;
  assert_non_null(mkdtemp(dir));
  cJSON *good = sample("imp-good");
  char *text = cJSON_PrintUnformatted(good);
  snprintf(p, sizeof p, "%s/a.json", dir);
  write_file(p, text);
  free(text);
  snprintf(p, sizeof p, "%s/b.json", dir);
  write_file(p, "{\"name\":\"imp-bad\"}");
  assert_true(api_hw_import_dir(ctx, dir, &out, &err) < 0);
  assert_non_null(strstr(err.message, "b.json"));
  assert_int_equal(api_hw_get(ctx, "imp-good", &out, &err), -SVC_NOT_FOUND);
  unlink(p);
  assert_int_equal(api_hw_import_dir(ctx, dir, &out, &err), 0);
  assert_non_null(strstr(out, "imp-good"));
  free(out);
  snprintf(p, sizeof p, "%s/a.json", dir);
  unlink(p);
  rmdir(dir);
  cJSON_Delete(good);
}

static void test_api_hw__list_vendor_filter(void **state) {
  api_ctx *ctx = *state;
  svc_err err;
  char *out = NULL;
  assert_int_equal(api_hw_list(ctx, "nvidia", &out, &err), 0);
  cJSON *doc = cJSON_Parse(out);
  cJSON *it;
  int n = 0;
  cJSON_ArrayForEach(it, cJSON_GetObjectItem(doc, "hardware")) {
    assert_string_equal(cJSON_GetObjectItem(it, "vendor")->valuestring, "nvidia");
    n++;
  }
  assert_true(n >= 1);
  cJSON_Delete(doc);
  free(out);
  assert_int_equal(api_hw_list(ctx, "NV DIA", &out, &err), -SVC_BAD_FIELD);
  assert_string_equal(err.field, "vendor");
}

static void test_api_hw__calibration_shows_and_feeds_lookup(void **state) {
  api_ctx *ctx = *state;
  svc_err err;
  cost_calib c = {0};
  cost_hw hw;
  int v = 0;
  char *out = NULL;
  c.n = 1;
  strcpy(c.names[0], "mem_eff");
  c.values[0] = 0.77;
  assert_int_equal(api_hw_lookup(ctx, "b200", 1, &hw, &err), 0);
  assert_int_equal(hw.calib.version, 0);
  assert_int_equal(api_calib_store(ctx, "b200", &c, NULL, &v, &err), 0);
  assert_int_equal(v, 1);
  assert_int_equal(api_hw_lookup(ctx, "b200", 1, &hw, &err), 0);
  assert_int_equal(hw.calib.version, 1);
  assert_string_equal(hw.calib.names[0], "mem_eff");
  assert_int_equal(api_hw_lookup(ctx, "b200", 0, &hw, &err), 0);
  assert_int_equal(hw.calib.version, 0);
  assert_int_equal(api_hw_get(ctx, "b200", &out, &err), 0);
  assert_non_null(strstr(out, "\"calibration\":{\"version\":1"));
  free(out);
  assert_int_equal(api_hw_lookup(ctx, "nope", 1, &hw, &err), -SVC_NOT_FOUND);
  assert_string_equal(err.field, "hardware");
}

/* A new database ships the H200's fit to data/measurements/h200/ and the
 * Hopper arch fit to published rows (data/calibration/): the H200 uses
 * its own, the H100 (no calibration of its own) the arch's, an AMD part
 * neither. */
static void test_api_hw__shipped_calibrations_seeded(void **state) {
  api_ctx *ctx = *state;
  svc_err err;
  cost_hw hw;
  assert_int_equal(api_hw_lookup(ctx, "h200", 1, &hw, &err), 0);
  assert_int_equal(hw.calib.version, 1);
  assert_int_equal(hw.calib.per_arch, 0);
  double eff = cost_param_value(&hw, "gemm_eff_bf16");
  assert_true(eff > 0.5 && eff < 1.0 && fabs(eff - 0.8) > 1e-3); /* fitted, not the default */
  assert_true(cost_param_value(&hw, "sparse_bwd_host_us") != 100.0);
  assert_int_equal(api_hw_lookup(ctx, "h100-sxm", 1, &hw, &err), 0);
  assert_int_equal(hw.calib.version, 1);
  assert_int_equal(hw.calib.per_arch, 1);
  assert_true(fabs(cost_param_value(&hw, "gemm_eff_fp8") - 0.8) > 1e-3);
  /* not fitted per arch: the descriptor's measured floor (launch_floor_us) */
  assert_true(cost_param_value(&hw, "launch_us") == 4.5);
  cJSON *p = api_provenance_json(&hw);
  assert_non_null(strstr(cJSON_GetStringValue(cJSON_GetObjectItem(p, "basis")), "architecture"));
  cJSON_Delete(p);
  /* CDNA3 and CDNA4 ship their own arch fits; a parameter CDNA4's fit
   * lacks comes from CDNA3's (cost_calib_fill); Blackwell ships none (its
   * fit-only band was worse than the datasheet's): datasheet figures */
  cost_hw cdna3;
  assert_int_equal(api_hw_lookup(ctx, "mi300x", 1, &cdna3, &err), 0);
  assert_int_equal(cdna3.calib.per_arch, 1);
  assert_int_equal(api_hw_lookup(ctx, "mi355x", 1, &hw, &err), 0);
  assert_int_equal(hw.calib.per_arch, 1);
  p = api_provenance_json(&hw);
  assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(p, "calibration_arch")), "cdna4");
  cJSON_Delete(p);
  double f355 = cost_param_value(&hw, "gemm_eff_fp8"),
         f300 = cost_param_value(&cdna3, "gemm_eff_fp8");
  assert_true(fabs(f355 - f300) > 1e-3); /* its own */
  /* fp16: fitted (the shipped fit uses every CDNA4 row) or CDNA3's, never the default */
  assert_true(fabs(cost_param_value(&hw, "gemm_eff_fp16") - 0.8) > 1e-3);
  assert_int_equal(api_hw_lookup(ctx, "b200", 1, &hw, &err), 0);
  assert_int_equal(hw.calib.version, 0);
  /* api_hw_lookup_level: the H200 at its arch's level is the H100's */
  cost_hw h100;
  assert_int_equal(api_hw_lookup_level(ctx, "h200", API_CALIB_ARCH, &hw, &err), 0);
  assert_int_equal(api_hw_lookup(ctx, "h100-sxm", 1, &h100, &err), 0);
  assert_int_equal(api_calib_level(&hw), API_CALIB_ARCH);
  assert_true(cost_param_value(&hw, "gemm_eff_bf16") == cost_param_value(&h100, "gemm_eff_bf16"));
  assert_int_equal(api_hw_lookup_level(ctx, "h200", API_CALIB_DATASHEET, &hw, &err), 0);
  assert_int_equal(api_calib_level(&hw), API_CALIB_DATASHEET);
}

static const char pub_rows[] =
    "[{\"id\":\"a\",\"source\":{\"title\":\"t\",\"url\":\"u1\",\"date\":\"2025\"},"
    "\"setup\":{\"hardware\":\"mi300x\",\"op\":\"gemm\",\"m\":8192,\"n\":8192,\"k\":8192,"
    "\"dtype\":\"bf16\",\"clock_mhz\":1200},\"metric\":\"tflops\",\"value\":650,\"role\":\"fit\"},"
    "{\"id\":\"b\",\"source\":{\"title\":\"t\",\"url\":\"u2\",\"date\":\"2025\"},"
    "\"setup\":{\"hardware\":\"mi325x\",\"op\":\"gemm\",\"m\":8192,\"n\":8192,\"k\":8192,"
    "\"dtype\":\"bf16\"},\"metric\":\"tflops\",\"value\":100,\"role\":\"check\"}]";

/* cdplan calibrate on published rows: one fit per arch on fit rows only,
 * applied to every accelerator of the arch without its own calibration;
 * an accelerator's own calibration wins. */
static void test_api_hw__published_calibration_per_arch(void **state) {
  api_ctx *ctx = *state;
  svc_err err;
  cost_hw hw, sheet;
  char *out = NULL;
  const char *texts[1] = {pub_rows}, *labels[1] = {"pub.json"};
  size_t lens[1] = {sizeof pub_rows - 1};
  assert_int_equal(api_calibrate(ctx, NULL, 1, texts, lens, labels, &out, &err), 0);
  cJSON *doc = cJSON_Parse(out);
  cJSON *a = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "architectures"), 0);
  assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(a, "arch")), "cdna3");
  assert_int_equal((int)cJSON_GetNumberValue(cJSON_GetObjectItem(a, "rows")), 1); /* fit only */
  cJSON_Delete(doc);
  free(out);
  /* The fit reproduces the fit row at its stated clock ... */
  assert_int_equal(api_hw_lookup(ctx, "mi300x", 1, &hw, &err), 0);
  assert_int_equal(hw.calib.per_arch, 1);
  hw.sustained_clock_hz = 1200e6;
  cost_gemm_op g = {8192, 8192, 8192, 1, COST_DT_BF16, "nn"};
  cost_result r;
  assert_int_equal(cost_gemm(&hw, &g, &r), 0);
  assert_true(fabs(2.0 * 8192 * 8192 * 8192 / (r.ms * 1e-3) / 1e12 / 650 - 1) < 0.01);
  /* ... and, unlike the check row's 100 TF/s, moves the MI325X the same way. */
  assert_int_equal(api_hw_lookup(ctx, "mi325x", 1, &hw, &err), 0);
  assert_int_equal(api_hw_lookup(ctx, "mi325x", 0, &sheet, &err), 0);
  assert_int_equal(hw.calib.per_arch, 1);
  assert_true(cost_param_value(&hw, "gemm_eff_bf16") != cost_param_value(&sheet, "gemm_eff_bf16"));
  cost_calib own = {0};
  own.n = 1;
  strcpy(own.names[0], "gemm_eff_bf16");
  own.values[0] = 0.5;
  int v = 0;
  assert_int_equal(api_calib_store(ctx, "mi325x", &own, NULL, &v, &err), 0);
  assert_int_equal(api_hw_lookup(ctx, "mi325x", 1, &hw, &err), 0);
  assert_int_equal(hw.calib.per_arch, 0);
  assert_true(cost_param_value(&hw, "gemm_eff_bf16") == 0.5);
  /* A CDNA4 fit of fp8 alone: the MI355X takes fp8 from it and bf16 from
   * CDNA3's newest fit (the fallback, cost_calib_fill), not the default. */
  static const char cdna4_rows[] =
      "[{\"id\":\"c\",\"source\":{\"title\":\"t\",\"url\":\"u3\",\"date\":\"2025\"},"
      "\"setup\":{\"hardware\":\"mi355x\",\"op\":\"gemm\",\"m\":8192,\"n\":8192,"
      "\"k\":8192,\"dtype\":\"fp8\",\"clock_mhz\":1500},\"metric\":\"tflops\","
      "\"value\":2800,\"role\":\"fit\"}]";
  texts[0] = cdna4_rows;
  lens[0] = sizeof cdna4_rows - 1;
  assert_int_equal(api_calibrate(ctx, NULL, 1, texts, lens, labels, &out, &err), 0);
  free(out);
  cost_hw m300, m355;
  assert_int_equal(api_hw_lookup(ctx, "mi300x", 1, &m300, &err), 0);
  assert_int_equal(api_hw_lookup(ctx, "mi355x", 1, &m355, &err), 0);
  assert_int_equal(m355.calib.per_arch, 1);
  assert_true(cost_param_value(&m355, "gemm_eff_bf16") == cost_param_value(&m300, "gemm_eff_bf16"));
  assert_true(fabs(cost_param_value(&m355, "gemm_eff_fp8") - 0.8) > 1e-3);
  assert_true(cost_param_value(&m355, "gemm_eff_fp8") != cost_param_value(&m300, "gemm_eff_fp8"));
}

static void test_api_hw__published_calibration_rejects_bad_rows(void **state) {
  api_ctx *ctx = *state;
  svc_err err;
  char *out = NULL;
  static const char *const bad[] = {
      "[{\"id\":\"a\",\"source\":{\"url\":\"u\"},\"setup\":{\"hardware\":\"mi300x\",\"m\":-4,"
      "\"n\":8,\"k\":8,\"dtype\":\"bf16\"},\"metric\":\"tflops\",\"value\":1,\"role\":\"fit\"}]",
      "[{\"id\":\"a\",\"source\":{\"url\":\"u\"},\"setup\":{\"hardware\":\"nope\",\"m\":8,"
      "\"n\":8,\"k\":8,\"dtype\":\"bf16\"},\"metric\":\"tflops\",\"value\":1,\"role\":\"fit\"}]",
      "[{\"id\":\"a\",\"source\":{\"url\":\"u\"},\"setup\":{\"hardware\":\"mi300x\",\"m\":8,"
      "\"n\":8,\"k\":8,\"dtype\":\"bf16\"},\"metric\":\"tflops\",\"value\":1e309,\"role\":\"fit\"}"
      "]",
      "[{\"id\":\"a\",\"source\":{\"url\":\"u\"},\"setup\":{\"hardware\":\"mi300x\",\"m\":8,"
      "\"n\":8,\"k\":8,\"dtype\":\"bf16\"},\"metric\":\"tflops\",\"value\":1,\"role\":\"maybe\"}]",
      "[{\"id\":\"a\",\"source\":{\"url\":\"u\"},\"setup\":{\"hardware\":\"mi300x\",\"m\":8,"
      "\"n\":8,\"k\":8,\"dtype\":\"bf16\"},\"metric\":\"tflops\",\"value\":1,\"role\":\"check\"}]",
      /* a clock in GHz by mistake */
      "[{\"id\":\"a\",\"source\":{\"url\":\"u\"},\"setup\":{\"hardware\":\"mi300x\",\"m\":8,"
      "\"n\":8,\"k\":8,\"dtype\":\"bf16\",\"clock_mhz\":1.2},\"metric\":\"tflops\",\"value\":1,"
      "\"role\":\"fit\"}]",
      /* an output layout that is neither row- nor column-major */
      "[{\"id\":\"a\",\"source\":{\"url\":\"u\"},\"setup\":{\"hardware\":\"mi300x\",\"m\":8,"
      "\"n\":8,\"k\":8,\"dtype\":\"bf16\",\"c_major\":\"diag\"},\"metric\":\"tflops\","
      "\"value\":1,\"role\":\"fit\"}]",
      /* a harness load that is neither sustained nor short */
      "[{\"id\":\"a\",\"source\":{\"url\":\"u\"},\"setup\":{\"hardware\":\"b200\",\"m\":8,"
      "\"n\":8,\"k\":8,\"dtype\":\"bf16\",\"load\":\"always\"},\"metric\":\"tflops\","
      "\"value\":1,\"role\":\"fit\"}]",
  };
  static const char *const field[] = {
      "[0].setup.m/n/k", "[0].setup.hardware",  "[0].value",         "[0].role",
      "files",           "[0].setup.clock_mhz", "[0].setup.c_major", "[0].setup.load"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    const char *texts[1] = {bad[i]}, *labels[1] = {"pub.json"};
    size_t lens[1] = {strlen(bad[i])};
    int rc = api_calibrate(ctx, NULL, 1, texts, lens, labels, &out, &err);
    assert_true(rc == -SVC_BAD_FIELD || rc == -SVC_BAD_JSON);
    assert_string_equal(err.field, field[i]);
    assert_null(out);
  }
}

/* A column-major C[M,N] row is priced as the row-major C^T = B^T A^T:
 * M and N swap and each operand's storage letter flips (hipblaslt-bench
 * TN, "nt" with C column-major, stays "nt"; "tt" becomes "nn"). */
static void test_api_hw__published_rows_column_major_c(void **state) {
  api_ctx *ctx = *state;
  svc_err err;
  api_pub_row *rows = NULL;
  size_t n = 0;
  static const char doc[] =
      "[{\"id\":\"a\",\"source\":{\"url\":\"u\"},\"setup\":{\"hardware\":\"mi300x\",\"m\":1024,"
      "\"n\":2145,\"k\":512,\"dtype\":\"fp8\",\"layout\":\"nt\",\"c_major\":\"col\"},"
      "\"metric\":\"tflops\",\"value\":100,\"role\":\"check\"},"
      "{\"id\":\"b\",\"source\":{\"url\":\"u\"},\"setup\":{\"hardware\":\"mi300x\",\"m\":64,"
      "\"n\":32,\"k\":16,\"dtype\":\"bf16\",\"layout\":\"tt\",\"c_major\":\"col\"},"
      "\"metric\":\"tflops\",\"value\":1,\"role\":\"check\"},"
      "{\"id\":\"c\",\"source\":{\"url\":\"u\"},\"setup\":{\"hardware\":\"mi300x\",\"m\":64,"
      "\"n\":32,\"k\":16,\"dtype\":\"bf16\",\"layout\":\"tn\",\"c_major\":\"row\"},"
      "\"metric\":\"tflops\",\"value\":1,\"role\":\"check\"}]";
  assert_int_equal(api_published_rows(ctx, doc, sizeof doc - 1, "t", &rows, &n, &err), 0);
  assert_int_equal(n, 3);
  assert_true(rows[0].s.u.gemm.m == 2145 && rows[0].s.u.gemm.n == 1024);
  assert_string_equal(rows[0].s.u.gemm.layout, "nt");
  assert_true(rows[1].s.u.gemm.m == 32 && rows[1].s.u.gemm.n == 64);
  assert_string_equal(rows[1].s.u.gemm.layout, "nn");
  assert_true(rows[2].s.u.gemm.m == 64 && rows[2].s.u.gemm.n == 32);
  assert_string_equal(rows[2].s.u.gemm.layout, "tn");
  free(rows);
}

/* A row whose harness keeps the GPU under back-to-back GEMMs for seconds
 * ("load": "sustained") runs at the descriptor's clock under load
 * (b200.json: 1580 MHz), every dtype (fp8 included: the board's power cap
 * binds whatever the dtype); a short harness, an accelerator without a
 * load clock (mi355x) and a row that states its clock keep the clock they
 * had; the GB200 runs at its derived 1692 MHz. */
static void test_api_hw__published_rows_sustained_load(void **state) {
  api_ctx *ctx = *state;
  svc_err err;
  api_pub_row *rows = NULL;
  size_t n = 0;
  static const char doc[] =
      "["
      "{\"id\":\"r\",\"source\":{\"url\":\"u\"},\"setup\":{\"hardware\":\"b200\",\"m\":4096,"
      "\"n\":4096,\"k\":4096,\"dtype\":\"bf16\",\"load\":\"sustained\"},\"metric\":\"tflops\","
      "\"value\":1000,"
      "\"role\":\"fit\"},"
      "{\"id\":\"r\",\"source\":{\"url\":\"u\"},\"setup\":{\"hardware\":\"b200\",\"m\":4096,"
      "\"n\":4096,\"k\":4096,\"dtype\":\"fp8\",\"load\":\"sustained\"},\"metric\":\"tflops\","
      "\"value\":1000,"
      "\"role\":\"fit\"},"
      "{\"id\":\"r\",\"source\":{\"url\":\"u\"},\"setup\":{\"hardware\":\"b200\",\"m\":4096,"
      "\"n\":4096,\"k\":4096,\"dtype\":\"bf16\",\"load\":\"short\"},\"metric\":\"tflops\","
      "\"value\":1000,"
      "\"role\":\"fit\"},"
      "{\"id\":\"r\",\"source\":{\"url\":\"u\"},\"setup\":{\"hardware\":\"mi355x\",\"m\":4096,"
      "\"n\":4096,\"k\":4096,\"dtype\":\"bf16\",\"load\":\"sustained\"},\"metric\":\"tflops\","
      "\"value\":1000,"
      "\"role\":\"fit\"},"
      "{\"id\":\"r\",\"source\":{\"url\":\"u\"},\"setup\":{\"hardware\":\"gb200\",\"m\":4096,"
      "\"n\":4096,\"k\":4096,\"dtype\":\"fp8\",\"load\":\"sustained\"},\"metric\":\"tflops\","
      "\"value\":1000,"
      "\"role\":\"fit\"},"
      "{\"id\":\"r\",\"source\":{\"url\":\"u\"},\"setup\":{\"hardware\":\"b200\",\"m\":4096,"
      "\"n\":4096,\"k\":4096,\"dtype\":\"bf16\",\"load\":\"sustained\",\"clock_mhz\":1700},"
      "\"metric\":\"tflops\",\"value\":1000,"
      "\"role\":\"fit\"}]";
  assert_int_equal(api_published_rows(ctx, doc, sizeof doc - 1, "t", &rows, &n, &err), 0);
  assert_int_equal(n, 6);
  assert_true(fabs(rows[0].hw.sustained_clock_hz - 1580e6) < 1);
  assert_true(fabs(rows[0].hw.peak_clock_hz - 1965e6) < 1);
  assert_true(fabs(rows[1].hw.sustained_clock_hz - 1580e6) < 1);
  assert_true(rows[2].hw.sustained_clock_hz == 0);
  assert_true(rows[3].hw.sustained_clock_hz == 0);
  assert_true(fabs(rows[4].hw.sustained_clock_hz - 1692e6) < 1);
  assert_true(fabs(rows[5].hw.sustained_clock_hz - 1700e6) < 1);
  /* The sustained row is priced 1965/1580 slower than the short one. */
  cost_result a, b;
  assert_int_equal(cost_gemm(&rows[0].hw, &rows[0].s.u.gemm, &a), 0);
  assert_int_equal(cost_gemm(&rows[2].hw, &rows[2].s.u.gemm, &b), 0);
  assert_true(a.ms > b.ms * 1.1 && a.ms < b.ms * 1965.0 / 1580.0 * 1.001);
  free(rows);
}

/* Clocks outside [100, 5000] MHz are mistakes (GHz for MHz most often),
 * named with a hint; a sustained clock above the peaks' clock is refused;
 * bandwidths that are negative, zero where required, huge or not finite
 * name their field. */
static void test_api_hw__implausible_clocks_and_bandwidths(void **state) {
  api_ctx *ctx = *state;
  static const char *const clocks[] = {"clock_mhz", "peak_clock_mhz", "sustained_clock_mhz",
                                       "load_clock_mhz"};
  static const double bad_mhz[] = {1.98, 0, 50, 6000, 1.98e6};
  svc_err err;
  for (int c = 0; c < 4; c++)
    for (size_t i = 0; i < sizeof bad_mhz / sizeof bad_mhz[0]; i++) {
      cJSON *d = sample("clocky");
      cJSON_DeleteItemFromObject(d, clocks[c]);
      cJSON_AddNumberToObject(d, clocks[c], bad_mhz[i]);
      if (!cJSON_GetObjectItem(cJSON_GetObjectItem(d, "sources"), clocks[c]))
        cJSON_AddStringToObject(cJSON_GetObjectItem(d, "sources"), clocks[c], "test");
      svc_err_clear(&err);
      assert_int_equal(create(ctx, d, &err), -SVC_OUT_OF_RANGE);
      assert_string_equal(err.field, clocks[c]);
      if (bad_mhz[i] == 1.98) assert_non_null(strstr(err.message, "GHz"));
      cJSON_Delete(d);
    }
  /* sustained above the peaks' clock (h200: peak_clock_mhz 1830) */
  cJSON *d = sample("clocky");
  cJSON_AddNumberToObject(d, "sustained_clock_mhz", 1900);
  cJSON_AddStringToObject(cJSON_GetObjectItem(d, "sources"), "sustained_clock_mhz", "test");
  expect_field(ctx, d, SVC_OUT_OF_RANGE, "sustained_clock_mhz");
  /* ... and above clock_mhz where no peak clock is given */
  d = sample("clocky");
  cJSON_DeleteItemFromObject(d, "peak_clock_mhz");
  cJSON_DeleteItemFromObject(cJSON_GetObjectItem(d, "sources"), "peak_clock_mhz");
  cJSON_AddNumberToObject(d, "sustained_clock_mhz", 1990);
  cJSON_AddStringToObject(cJSON_GetObjectItem(d, "sources"), "sustained_clock_mhz", "test");
  expect_field(ctx, d, SVC_OUT_OF_RANGE, "sustained_clock_mhz");
  /* the load clock (h200: 1500) above the sustained one */
  d = sample("clocky");
  cJSON_AddNumberToObject(d, "sustained_clock_mhz", 1400);
  cJSON_AddStringToObject(cJSON_GetObjectItem(d, "sources"), "sustained_clock_mhz", "test");
  expect_field(ctx, d, SVC_OUT_OF_RANGE, "load_clock_mhz");
  /* a sustained clock under the peak one is accepted */
  d = sample("clocky");
  cJSON_AddNumberToObject(d, "sustained_clock_mhz", 1600);
  cJSON_AddStringToObject(cJSON_GetObjectItem(d, "sources"), "sustained_clock_mhz", "test");
  svc_err_clear(&err);
  assert_int_equal(create(ctx, d, &err), 0);
  cJSON_Delete(d);

  static const char *const bws[] = {"hbm_bandwidth_bytes_per_s", "scaleup_bandwidth_bytes_per_s",
                                    "scaleout_bandwidth_bytes_per_s",
                                    "host_link_bandwidth_bytes_per_s"};
  static const char *const bad_bw[] = {"-1", "1e300", "1e400", "-1e400"};
  for (size_t b = 0; b < sizeof bws / sizeof bws[0]; b++)
    for (size_t i = 0; i < sizeof bad_bw / sizeof bad_bw[0]; i++) {
      d = sample("bw");
      /* 1e400 parses to inf: the text goes in as it would on the wire */
      cJSON *v = cJSON_Parse(bad_bw[i]);
      assert_non_null(v);
      cJSON_DeleteItemFromObject(d, bws[b]);
      cJSON_AddItemToObject(d, bws[b], v);
      if (!cJSON_GetObjectItem(cJSON_GetObjectItem(d, "sources"), bws[b]))
        cJSON_AddStringToObject(cJSON_GetObjectItem(d, "sources"), bws[b], "test");
      char *body = cJSON_PrintUnformatted(d), *out = NULL;
      /* cJSON prints inf as null: send the raw figure instead */
      char *at = strstr(body, "null");
      char raw[1 << 14];
      if (at) {
        snprintf(raw, sizeof raw, "%.*s%s%s", (int)(at - body), body, bad_bw[i], at + 4);
      } else {
        snprintf(raw, sizeof raw, "%s", body);
      }
      svc_err_clear(&err);
      int rc = api_hw_create(ctx, raw, strlen(raw), &out, &err);
      if (rc != -SVC_OUT_OF_RANGE && rc != -SVC_BAD_FIELD && rc != -SVC_BAD_JSON)
        fail_msg("%s = %s accepted (rc %d)", bws[b], bad_bw[i], rc);
      if (rc != -SVC_BAD_JSON) assert_string_equal(err.field, bws[b]);
      free(body), free(out);
      cJSON_Delete(d);
    }
}

int main(void) {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
  const struct CMUnitTest tests[] = {
      T(test_api_hw__seeded_catalog_decodes_every_file),
      T(test_api_hw__shipped_calibrations_seeded),
      T(test_api_hw__published_calibration_per_arch),
      T(test_api_hw__published_calibration_rejects_bad_rows),
      T(test_api_hw__published_rows_column_major_c),
      T(test_api_hw__published_rows_sustained_load),
      T(test_api_hw__published_rows_per_call),
      T(test_api_hw__decode_converts_units),
      T(test_api_hw__rules_name_the_field),
      T(test_api_hw__implausible_clocks_and_bandwidths),
      T(test_api_hw__bad_bodies),
      T(test_api_hw__create_get_replace_delete),
      T(test_api_hw__failed_replace_keeps_stored_doc),
      T(test_api_hw__import_is_all_or_nothing),
      T(test_api_hw__list_vendor_filter),
      T(test_api_hw__calibration_shows_and_feeds_lookup),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
