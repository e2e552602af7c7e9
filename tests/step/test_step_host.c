/* Host speed per machine (issue 21, docs/step-model.md "Host speed per
 * machine"): a recipe's measured host time per op (host_op_us, the
 * runner's host probe) replaces the profile's per-op time and scales the
 * other host terms (coalesce sync, per-step fixed time) with it; a
 * measured Triton launch time prices fused_triton's two launches; the
 * answer says which per-op time it used; the request checks of both
 * fields over POST /v1/step's code. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "api/api_int.h"
#include "api/api_step.h"
#include "step_fixture.h"

static api_ctx *ctx;
static cost_hw h100;
static cost_table tabs[26];

static int setup(void **state) {
  (void)state;
  stepfx_open(&ctx, "h100-sxm", &h100);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  api_ctx_free(ctx);
  return 0;
}

/* A small-batch eager DCN step with row-wise Adagrad (coalesce syncs):
 * the host-bound kind of step the probe is for. */
static void small_dcn(cost_workload *w, cost_recipe *r, int framework, int sparse) {
  stepfx_criteo26(w, tabs, 1000000);
  w->dlrm.interaction = COST_INTER_DCN;
  w->dlrm.cross_layers = 3;
  w->dlrm.cross_rank = 256;
  w->dlrm.dense_optimizer = COST_OPT_ADAGRAD;
  w->dlrm.sparse_optimizer = sparse;
  cost_recipe_init(r);
  r->batch_per_gpu = 4096;
  r->precision = COST_DT_BF16;
  r->framework = framework;
}

static void test_step__host_op_us_scales_every_host_term(void **state) {
  (void)state;
  cost_workload w;
  cost_recipe r;
  small_dcn(&w, &r, COST_FW_PYTORCH_EAGER, COST_OPT_ROWWISE_ADAGRAD);
  cost_step_result d = stepfx_step(&h100, &w, &r);
  assert_int_not_equal(d.host_op_source, COST_HOSTOP_RECIPE);
  assert_true(d.host_op_us > 1 && d.host_op_us < 50);
  assert_true(d.host_ms > d.gpu_ms); /* host-bound */
  /* twice the per-op time: every host term twice (ops, autocast's
   * re-dispatch, the coalesce syncs, the fixed time); the GPU unchanged */
  r.host_op_us = 2 * d.host_op_us;
  cost_step_result h = stepfx_step(&h100, &w, &r);
  assert_int_equal(h.host_op_source, COST_HOSTOP_RECIPE);
  assert_true(fabs(h.host_op_us - r.host_op_us) < 1e-9);
  assert_true(fabs(h.host_ms / d.host_ms - 2.0) < 1e-9);
  assert_true(fabs(h.gpu_ms - d.gpu_ms) < 1e-9);
  assert_true(h.step_ms > 1.5 * d.step_ms);
  /* a fast host: the step falls towards the GPU's time */
  r.host_op_us = 0.25 * d.host_op_us;
  cost_step_result f = stepfx_step(&h100, &w, &r);
  assert_true(f.step_ms < d.step_ms && f.step_ms >= f.gpu_ms);
}

static void test_step__triton_launch_prices_two_launches(void **state) {
  (void)state;
  cost_workload w;
  cost_recipe r;
  small_dcn(&w, &r, COST_FW_FUSED_TRITON, COST_OPT_SGD);
  r.host_op_us = 10;
  cost_step_result a = stepfx_step(&h100, &w, &r);
  r.triton_launch_us = 60;
  cost_step_result b = stepfx_step(&h100, &w, &r);
  /* forward and backward: one Triton launch each, 50 us more than an op */
  assert_true(fabs(b.host_ms - a.host_ms - 2 * 0.050) < 1e-9);
  /* eager steps have no Triton launch */
  small_dcn(&w, &r, COST_FW_PYTORCH_EAGER, COST_OPT_SGD);
  r.host_op_us = 10;
  a = stepfx_step(&h100, &w, &r);
  r.triton_launch_us = 60;
  b = stepfx_step(&h100, &w, &r);
  assert_true(fabs(b.host_ms - a.host_ms) < 1e-12);
}

static void test_step__hugectr_ignores_host_op_us(void **state) {
  (void)state;
  cost_workload w;
  cost_recipe r;
  small_dcn(&w, &r, COST_FW_HUGECTR, COST_OPT_SGD);
  cost_step_result a = stepfx_step(&h100, &w, &r);
  r.host_op_us = 100;
  cost_step_result b = stepfx_step(&h100, &w, &r);
  assert_true(fabs(a.step_ms - b.step_ms) < 1e-12);
  assert_true(b.host_op_us == 0); /* one captured graph: no op dispatched */
}

/* The coalescing optimizer's phase (costmodel/step.c step_finish): its
 * syncs serialise host and GPU, so a GPU-bound row-wise Adagrad step is its
 * GPU time plus the optimizer's host time (~520 ops) and the tables' syncs
 * (overlapped from 2026-12-05 22:15 to 2026-12-06 04:00 UTC; the seventh
 * blind DCN set's host-bound mini steps chose the serial phase again:
 * data/measurements/dcn-blind7/README.md). */
static void test_step__coalescing_optimizer_is_serial(void **state) {
  (void)state;
  cost_workload w;
  cost_recipe r;
  small_dcn(&w, &r, COST_FW_PYTORCH_EAGER, COST_OPT_ROWWISE_ADAGRAD);
  w.dlrm.cross_rank = 0;
  for (int i = 0; i < 26; i++) tabs[i].pooling = 20; /* multi-hot: the optimizer's GPU time leads */
  r.batch_per_gpu = 32768;
  r.precision = COST_DT_FP32;
  cost_step_result g = stepfx_step(&h100, &w, &r);
  double sync_ms = 26 * cost_step_param_value(&h100, COST_SP_COALESCE_SYNC_US) * 1e-3;
  double upd_ms = 26 * 20 * g.host_op_us * 1e-3; /* the optimizer's host ops */
  assert_true(sync_ms > 0);
  assert_true(g.gpu_ms > g.host_ms); /* GPU-bound */
  assert_true(g.step_ms - g.gpu_ms >= sync_ms + upd_ms);
  /* a host twice as slow doubles what the host adds while the GPU leads
   * the forward and backward */
  r.host_op_us = 2 * g.host_op_us;
  cost_step_result s = stepfx_step(&h100, &w, &r);
  assert_true(s.gpu_ms > s.host_ms);
  assert_true(fabs((s.step_ms - s.gpu_ms) - 2 * (g.step_ms - g.gpu_ms)) < 1e-6 * s.step_ms);
}

/* fused_triton's per-table glue (costmodel/step_fused.c, counted from
 * torch.profiler in data/measurements/h200-dcn-host/dcn_repeat.json): a
 * table adds torch.full, the slice's zero fill and copy (3 kernels) in
 * fp32 and the cast, its backward and a copy more (6) in bf16; and a
 * GPU-bound step still waits for the host's forward lead-in. */
static void test_step__fused_glue_and_lead_in(void **state) {
  (void)state;
  cost_workload w;
  cost_recipe r;
  const int prec[2] = {COST_DT_FP32, COST_DT_BF16}, per_table[2] = {3, 6};
  for (int i = 0; i < 2; i++) {
    small_dcn(&w, &r, COST_FW_FUSED_TRITON, COST_OPT_SGD);
    r.precision = prec[i];
    cost_step_result all = stepfx_step(&h100, &w, &r);
    w.dlrm.n_tables = 13;
    cost_step_result half = stepfx_step(&h100, &w, &r);
    assert_int_equal(all.kernels - half.kernels, 13 * per_table[i]);
  }
  /* GPU-bound (fp32, large batch): the step exceeds the GPU's time by the
   * lead-in, which a slower host lengthens */
  small_dcn(&w, &r, COST_FW_FUSED_TRITON, COST_OPT_SGD);
  r.precision = COST_DT_FP32;
  r.batch_per_gpu = 16384;
  cost_step_result g = stepfx_step(&h100, &w, &r);
  assert_true(g.gpu_ms > g.host_ms);
  assert_true(g.step_ms > g.gpu_ms + 0.5);
  r.host_op_us = 2 * g.host_op_us;
  cost_step_result s = stepfx_step(&h100, &w, &r);
  assert_true(fabs(s.gpu_ms - g.gpu_ms) < 1e-9);
  assert_true(s.step_ms - s.gpu_ms > 1.5 * (g.step_ms - g.gpu_ms));
}

/* The mini route (cost_step_host_mini): the per-op host time at which the
 * step at the mini batch takes the measured mini step. Priced at a known
 * host_op_us, the mini step gives that figure back; a mini step faster
 * (slower) than any per-op time in range returns the near end, clamped; a
 * step that dispatches nothing (HugeCTR's graph) has no host to fit. */
static void test_step__host_mini_recovers_host_op_us(void **state) {
  (void)state;
  cost_workload w;
  cost_recipe r;
  small_dcn(&w, &r, COST_FW_PYTORCH_EAGER, COST_OPT_ROWWISE_ADAGRAD);
  cost_recipe m = r;
  m.batch_per_gpu = 256;
  m.host_op_us = 7.3;
  cost_step_result mini = stepfx_step(&h100, &w, &m);
  r.host_mini_batch = 256;
  r.host_mini_step_ms = mini.step_ms;
  double op = 0;
  int cl = 1;
  assert_int_equal(cost_step_host_mini(&h100, &w, &r, &op, &cl), 0);
  assert_int_equal(cl, 0);
  assert_true(fabs(op - 7.3) < 1e-3);
  /* the mini batch, not the recipe's: the same measurement at batch 4096 fits another figure */
  r.host_mini_batch = 4096;
  assert_int_equal(cost_step_host_mini(&h100, &w, &r, &op, &cl), 0);
  assert_true(fabs(op - 7.3) > 0.1);
  r.host_mini_batch = 256;
  r.host_mini_step_ms = 1e-3;
  assert_int_equal(cost_step_host_mini(&h100, &w, &r, &op, &cl), 0);
  assert_true(cl == 1 && op == COST_HOST_MINI_LO_US);
  r.host_mini_step_ms = 1e5;
  assert_int_equal(cost_step_host_mini(&h100, &w, &r, &op, &cl), 0);
  assert_true(cl == 1 && op == COST_HOST_MINI_HI_US);
  r.host_mini_step_ms = 0;
  assert_int_equal(cost_step_host_mini(&h100, &w, &r, &op, &cl), COST_EINVAL);
  r.host_mini_step_ms = mini.step_ms;
  r.framework = COST_FW_HUGECTR;
  assert_int_equal(cost_step_host_mini(&h100, &w, &r, &op, &cl), COST_EINVAL);
}

static const char good[] =
    "{\"hardware\":\"h100-sxm\",\"workload\":{\"kind\":\"dlrm\",\"dense_features\":13,"
    "\"tables\":[{\"name\":\"a\",\"rows\":1000000,\"dim\":128,\"pooling\":4,\"count\":26}],"
    "\"bottom_mlp\":[512,256,128],\"top_mlp\":[1024,256,1],\"interaction\":\"dcn\","
    "\"cross_layers\":3,\"optimizers\":{\"dense\":\"adagrad\",\"sparse\":\"rowwise_adagrad\"}},"
    "\"recipe\":{\"gpus\":1,\"batch_per_gpu\":4096,\"precision\":\"bf16\",\"framework\":"
    "\"fused_triton\",\"host_op_us\":12.5,\"triton_launch_us\":15}}";

static cJSON *answer(const char *body) {
  char *out = NULL;
  svc_err err;
  if (api_step(ctx, body, strlen(body), &out, &err)) fail_msg("%s (%s)", err.message, err.field);
  cJSON *doc = cJSON_Parse(out);
  free(out);
  assert_non_null(doc);
  return doc;
}

static void test_api_step__host_fields(void **state) {
  (void)state;
  cJSON *doc = answer(good);
  assert_true(fabs(cJSON_GetNumberValue(cJSON_GetObjectItem(doc, "host_op_us")) - 12.5) < 1e-9);
  assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(doc, "host_op_source")), "recipe");
  cJSON_Delete(doc);
  doc = answer(stepfx_edit(good, ",\"host_op_us\":12.5", ""));
  const char *src = cJSON_GetStringValue(cJSON_GetObjectItem(doc, "host_op_source"));
  assert_non_null(src);
  assert_true(!strcmp(src, "default") || !strcmp(src, "calibration"));
  cJSON_Delete(doc);
  static const stepfx_bad bad[] = {
      {"\"host_op_us\":12.5", "\"host_op_us\":0", SVC_OUT_OF_RANGE, "recipe.host_op_us"},
      {"\"host_op_us\":12.5", "\"host_op_us\":-3", SVC_OUT_OF_RANGE, "recipe.host_op_us"},
      {"\"host_op_us\":12.5", "\"host_op_us\":20000", SVC_OUT_OF_RANGE, "recipe.host_op_us"},
      {"\"host_op_us\":12.5", "\"host_op_us\":\"fast\"", SVC_BAD_FIELD, "recipe.host_op_us"},
      {"\"triton_launch_us\":15", "\"triton_launch_us\":0.01", SVC_OUT_OF_RANGE,
       "recipe.triton_launch_us"},
      {"\"triton_launch_us\":15", "\"triton_launch_us\":true", SVC_BAD_FIELD,
       "recipe.triton_launch_us"},
      {"\"triton_launch_us\":15", "\"triton_launch_ms\":15", SVC_UNKNOWN_FIELD,
       "recipe.triton_launch_ms"},
  };
  stepfx_expect_errors(ctx, good, bad, sizeof bad / sizeof bad[0]);
}

static double num(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItem(o, k);
  assert_true(cJSON_IsNumber(v));
  return cJSON_GetNumberValue(v);
}

/* POST /v1/step with a host mini step: host_op_us fitted to it
 * (host_op_source mini_step, the host_mini object), no host_sensitivity
 * (the figure is the machine's); the same step with that host_op_us given
 * is the same answer; the fields checked, naming them. */
static void test_api_step__host_mini(void **state) {
  (void)state;
  char *eager =
      strdup(stepfx_edit(good, "\"fused_triton\",\"host_op_us\":12.5,\"triton_launch_us\":15",
                         "\"pytorch_eager\",\"host_mini_batch\":256,\"host_mini_step_ms\":12"));
  assert_non_null(eager);
  cJSON *doc = answer(eager);
  assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(doc, "host_op_source")),
                      "mini_step");
  assert_null(cJSON_GetObjectItem(doc, "host_sensitivity"));
  const cJSON *hm = cJSON_GetObjectItem(doc, "host_mini");
  assert_non_null(hm);
  double op = num(hm, "host_op_us"), step = num(doc, "step_ms");
  assert_true(fabs(op - num(doc, "host_op_us")) < 1e-12 && op > COST_HOST_MINI_LO_US &&
              op < COST_HOST_MINI_HI_US);
  assert_true(cJSON_IsFalse(cJSON_GetObjectItem(hm, "clamped")));
  cJSON_Delete(doc);
  char given[64];
  snprintf(given, sizeof given, "\"host_op_us\":%.17g", op);
  doc = answer(stepfx_edit(eager, "\"host_mini_batch\":256,\"host_mini_step_ms\":12", given));
  assert_true(fabs(num(doc, "step_ms") - step) < 1e-9 * step);
  cJSON_Delete(doc);
  static const stepfx_bad bad[] = {
      {",\"host_mini_step_ms\":12", "", SVC_MISSING_FIELD, "recipe.host_mini_step_ms"},
      {"\"host_mini_batch\":256,", "", SVC_MISSING_FIELD, "recipe.host_mini_batch"},
      {"\"host_mini_step_ms\":12", "\"host_mini_step_ms\":-1", SVC_OUT_OF_RANGE,
       "recipe.host_mini_step_ms"},
      {"\"host_mini_step_ms\":12", "\"host_mini_step_ms\":\"NaN\"", SVC_BAD_FIELD,
       "recipe.host_mini_step_ms"},
      {"\"host_mini_batch\":256", "\"host_mini_batch\":0", SVC_OUT_OF_RANGE,
       "recipe.host_mini_batch"},
      {"\"host_mini_step_ms\":12", "\"host_mini_step_ms\":12,\"host_op_us\":5", SVC_BAD_FIELD,
       "recipe.host_mini_step_ms"},
      {"\"pytorch_eager\"", "\"hugectr\"", SVC_BAD_FIELD, "recipe.host_mini_step_ms"},
  };
  stepfx_expect_errors(ctx, eager, bad, sizeof bad / sizeof bad[0]);
  free(eager);
}

/* A host figure that is not the machine's comes with the step priced at the
 * fastest and slowest lent hosts probed; the machine's own (recipe) does not.
 * Eager row-wise Adagrad bf16 at a small batch is host-bound. */
static void test_api_step__host_sensitivity(void **state) {
  (void)state;
  char *eager = strdup(stepfx_edit(
      good, "\"fused_triton\",\"host_op_us\":12.5,\"triton_launch_us\":15", "\"pytorch_eager\""));
  assert_non_null(eager);
  cJSON *doc = answer(eager);
  double step = num(doc, "step_ms"), host_op = num(doc, "host_op_us");
  assert_true(cJSON_IsTrue(cJSON_GetObjectItem(doc, "host_bound")));
  const cJSON *hs = cJSON_GetObjectItem(doc, "host_sensitivity");
  assert_non_null(hs);
  const cJSON *ops = cJSON_GetObjectItem(hs, "host_op_us_range");
  const cJSON *ms = cJSON_GetObjectItem(hs, "step_ms_range");
  assert_int_equal(cJSON_GetArraySize(ops), 2);
  assert_int_equal(cJSON_GetArraySize(ms), 2);
  double olo = cJSON_GetArrayItem(ops, 0)->valuedouble,
         ohi = cJSON_GetArrayItem(ops, 1)->valuedouble;
  double lo = cJSON_GetArrayItem(ms, 0)->valuedouble, hi = cJSON_GetArrayItem(ms, 1)->valuedouble;
  assert_true(olo <= host_op && host_op <= ohi);
  assert_true(fabs(olo - fmin(host_op, COST_HOST_PROBED_OP_US_LO)) < 1e-9);
  assert_true(fabs(ohi - fmax(host_op, COST_HOST_PROBED_OP_US_HI)) < 1e-9);
  /* host-bound: a faster host shortens the step, a slower one lengthens it */
  assert_true(lo < 0.95 * step);
  assert_true(lo <= step && step <= hi);
  cJSON_Delete(doc);
  /* the same step at the fastest probed host's figure given as the recipe's:
   * no range, and the step is the range's low end */
  char body[4096];
  snprintf(body, sizeof body, "%.*s,\"host_op_us\":%.17g}}", (int)(strlen(eager) - 2), eager, olo);
  doc = answer(body);
  assert_null(cJSON_GetObjectItem(doc, "host_sensitivity"));
  assert_true(cJSON_GetObjectItem(doc, "host_bound") != NULL);
  assert_true(fabs(num(doc, "step_ms") - lo) < 1e-9 * lo);
  cJSON_Delete(doc);
  free(eager);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_step__host_op_us_scales_every_host_term),
      cmocka_unit_test(test_step__triton_launch_prices_two_launches),
      cmocka_unit_test(test_step__hugectr_ignores_host_op_us),
      cmocka_unit_test(test_step__fused_glue_and_lead_in),
      cmocka_unit_test(test_step__coalescing_optimizer_is_serial),
      cmocka_unit_test(test_api_step__host_fields),
      cmocka_unit_test(test_api_step__host_sensitivity),
      cmocka_unit_test(test_step__host_mini_recovers_host_op_us),
      cmocka_unit_test(test_api_step__host_mini),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
