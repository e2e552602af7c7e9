/* Workloads whose dense part cdplan does not model op by op (issue 24):
 * the concat interaction (any table dims, x0 = [x, embeddings] into the
 * top MLP) and the dense block between the interaction and the top MLP,
 * given as its GEMMs or as its parameters and forward FLOPs per sample
 * (costmodel/step_dlrm.c dense_block; docs/step-model.md, "Dense blocks").
 */
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
#include "api/api_plan.h"
#include "api/api_step.h"
#include "step_fixture.h"

static api_ctx *ctx;
static cost_hw h200;
static cost_table tabs[26];

static int setup(void **state) {
  (void)state;
  stepfx_open(&ctx, "h200", &h200);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  api_ctx_free(ctx);
  return 0;
}

/* The Criteo DLRM with concat and mixed dims (the first ten tables 64
 * wide, the rest 128), fp32 (no autocast weight copies), one GPU. */
static void concat(cost_workload *w, cost_recipe *r) {
  stepfx_criteo26(w, tabs, 10000000);
  for (int i = 0; i < 10; i++) tabs[i].dim = 64;
  w->dlrm.interaction = COST_INTER_CONCAT;
  w->dlrm.dense_optimizer = COST_OPT_ADAM;
  w->dlrm.sparse_optimizer = COST_OPT_SGD;
  cost_recipe_init(r);
  r->batch_per_gpu = 8192;
  r->precision = COST_DT_FP32;
  r->sharding = COST_SHARD_TABLE_WISE;
  r->placement = COST_PLACE_HBM;
}

static double block_params(const cost_dense_block *b) {
  double p = 0;
  for (size_t i = 0; i < b->n_gemms; i++)
    p += (double)b->gemms[i].count * ((double)b->gemms[i].in * b->gemms[i].out + b->gemms[i].out);
  return p;
}

/* A block given as GEMMs adds exactly its parameters (fp32 weights: 4
 * bytes each), its FLOPs (3x the forward: forward, dgrad, wgrad) and time;
 * rows_per_sample multiplies its FLOPs but not its parameters. */
static void test_step_block__gemms_add_params_flops_and_time(void **state) {
  (void)state;
  cost_workload w;
  cost_recipe r;
  concat(&w, &r);
  cost_step_result none = stepfx_step(&h200, &w, &r);
  int64_t x0 = 128 + 10 * 64 + 16 * 128; /* bottom out + the tables' dims */
  cost_dense_block *b = &w.dlrm.block;
  b->out = 1024;
  b->n_gemms = 2;
  b->gemms[0] = (cost_block_gemm){.in = x0, .out = 2048, .count = 1, .rows = 1};
  b->gemms[1] = (cost_block_gemm){.in = 2048, .out = 1024, .count = 3, .rows = 1};
  cost_step_result one = stepfx_step(&h200, &w, &r);
  double p = block_params(b);
  /* the top MLP's first layer now reads 1024 wide, not x0 */
  double top0 = (1024.0 - (double)x0) * 1024.0;
  assert_true(fabs(one.mem_bytes[COST_MEM_WEIGHTS] - none.mem_bytes[COST_MEM_WEIGHTS] -
                   4.0 * (p + top0)) < 1.0);
  double fwd = 2.0 * ((double)x0 * 2048 + 3.0 * 2048 * 1024);
  assert_true(fabs(one.model_flops - none.model_flops - 3.0 * 8192 * (fwd + 2.0 * top0)) <
              1e-6 * one.model_flops);
  assert_true(one.step_ms > none.step_ms);
  b->gemms[1].rows = 4;
  cost_step_result four = stepfx_step(&h200, &w, &r);
  assert_true(fabs(four.mem_bytes[COST_MEM_WEIGHTS] - one.mem_bytes[COST_MEM_WEIGHTS]) < 1.0);
  /* rows 1 -> 4 on the second GEMM (count 3): 2 x 3 x 3 x 2048 x 1024 more
   * forward FLOPs a sample */
  assert_true(fabs(four.model_flops - one.model_flops -
                   3.0 * 8192 * 2.0 * 3.0 * 3.0 * 2048 * 1024) < 1e-6 * four.model_flops);
  assert_true(four.step_ms > one.step_ms);
  assert_true(four.mem_bytes[COST_MEM_ACTIVATIONS] + four.mem_bytes[COST_MEM_GRADIENTS] >
              one.mem_bytes[COST_MEM_ACTIVATIONS] + one.mem_bytes[COST_MEM_GRADIENTS]);
}

/* The opaque form: its parameters exactly, its FLOPs exactly, priced as
 * one square layer whose width is a multiple of 64; more FLOPs a sample
 * (the same parameters reused) cost more time, not more weights. */
static void test_step_block__params_and_flops_form(void **state) {
  (void)state;
  cost_workload w;
  cost_recipe r;
  concat(&w, &r);
  cost_dense_block *b = &w.dlrm.block;
  b->out = 512;
  b->params = 3.0e7;
  b->flops_per_sample = 6.0e7;
  int64_t wd, rows;
  cost_dense_block_square(b, &wd, &rows);
  assert_int_equal(wd % 64, 0);
  assert_true(fabs((double)wd * wd - 3.0e7) < 2.0 * 64 * wd);
  assert_int_equal(rows, 1);
  cost_step_result a = stepfx_step(&h200, &w, &r);
  b->flops_per_sample = 4.8e8;
  cost_dense_block_square(b, &wd, &rows);
  assert_int_equal(rows, 8);
  cost_step_result c = stepfx_step(&h200, &w, &r);
  assert_true(fabs(c.mem_bytes[COST_MEM_WEIGHTS] - a.mem_bytes[COST_MEM_WEIGHTS]) < 1.0);
  assert_true(fabs(c.model_flops - a.model_flops - 3.0 * 8192 * (4.8e8 - 6.0e7)) <
              1e-9 * c.model_flops);
  assert_true(c.step_ms > a.step_ms * 1.5);
  /* fewer FLOPs than 2 x params (a sparse block): the active part only */
  b->flops_per_sample = 2.0e6;
  cost_dense_block_square(b, &wd, &rows);
  assert_true(wd <= 1024 && rows == 1);
  cost_step_result s = stepfx_step(&h200, &w, &r);
  assert_true(fabs(s.mem_bytes[COST_MEM_WEIGHTS] - a.mem_bytes[COST_MEM_WEIGHTS]) < 1.0);
  assert_true(s.step_ms < a.step_ms);
}

static const char good[] =
    "{\"hardware\":\"h200\",\"calibration\":\"none\",\"workload\":{\"kind\":\"dlrm\","
    "\"dense_features\":13,\"tables\":[{\"name\":\"a\",\"rows\":1000000,\"dim\":256,\"count\":2},"
    "{\"name\":\"b\",\"rows\":5000,\"dim\":32,\"count\":8}],\"bottom_mlp\":[256,128],"
    "\"top_mlp\":[512,1],\"interaction\":\"concat\",\"dense_block\":{\"out\":512,\"gemms\":[{"
    "\"in\":896,\"out\":1024},{\"in\":1024,\"out\":512,\"count\":2,\"rows_per_sample\":4}]},"
    "\"optimizers\":{\"dense\":\"adam\",\"sparse\":\"rowwise_adagrad\"}},\"recipe\":{\"gpus\":1,"
    "\"batch_per_gpu\":4096,\"precision\":\"bf16\",\"framework\":\"torchrec_fbgemm\"}}";

/* good with its GEMM list replaced by fields (the opaque form), in buf */
static const char *opaque(char *buf, size_t n, const char *fields) {
  snprintf(buf, n, "%s",
           stepfx_edit(good,
                       "\"gemms\":[{\"in\":896,\"out\":1024},{\"in\":1024,\"out\":512,"
                       "\"count\":2,\"rows_per_sample\":4}]",
                       fields));
  return buf;
}

/* POST /v1/step answers a concat workload with a block and says how the
 * block was priced; the opaque form names its square layer. */
static void test_api_step_block__answer_names_the_block(void **state) {
  (void)state;
  const char *bodies[2] = {good, NULL};
  char op[2048];
  bodies[1] = opaque(op, sizeof op, "\"params\":2.5e6,\"flops_per_sample\":1.2e7");
  static const char *const form[] = {"gemms", "params_flops"};
  for (int i = 0; i < 2; i++) {
    char *out = NULL;
    svc_err err;
    if (api_step(ctx, bodies[i], strlen(bodies[i]), &out, &err))
      fail_msg("%s (%s)", err.message, err.field);
    cJSON *doc = cJSON_Parse(out), *b = cJSON_GetObjectItem(doc, "dense_block");
    assert_non_null(b);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(b, "form")), form[i]);
    double params = cJSON_GetNumberValue(cJSON_GetObjectItem(b, "params"));
    assert_true(i == 0 ? params == 896.0 * 1024 + 1024 + 2 * (1024.0 * 512 + 512)
                       : params == 2.5e6);
    assert_true((cJSON_GetObjectItem(b, "priced_as") != NULL) == (i == 1));
    assert_true(cJSON_GetNumberValue(cJSON_GetObjectItem(doc, "step_ms")) > 0);
    cJSON_Delete(doc);
    free(out);
  }
}

static void test_api_step_block__bad_blocks_name_the_field(void **state) {
  (void)state;
  static const stepfx_bad bad[] = {
      {"\"out\":512,", "\"out\":0,", SVC_OUT_OF_RANGE, "workload.dense_block.out"},
      {"\"out\":512,", "", SVC_MISSING_FIELD, "workload.dense_block.out"},
      {"\"gemms\":[", "\"params\":5,\"gemms\":[", SVC_BAD_FIELD, "workload.dense_block.gemms"},
      {"\"gemms\":[{\"in\":896,\"out\":1024},", "\"params\":1e6,\"x\":[{\"in\":896,\"out\":1024},",
       SVC_UNKNOWN_FIELD, "workload.dense_block.x"},
      {"\"in\":896,", "\"in\":-896,", SVC_OUT_OF_RANGE, "workload.dense_block.gemms[0].in"},
      {"\"count\":2,", "\"count\":2.5,", SVC_BAD_FIELD, "workload.dense_block.gemms[1].count"},
      {"\"rows_per_sample\":4", "\"rows_per_sample\":1e9", SVC_OUT_OF_RANGE,
       "workload.dense_block.gemms[1].rows_per_sample"},
      {"\"rows_per_sample\":4", "\"rows\":4", SVC_UNKNOWN_FIELD,
       "workload.dense_block.gemms[1].rows"},
      {"\"interaction\":\"concat\"", "\"interaction\":\"dot\"", SVC_BAD_FIELD,
       "workload.tables[0].dim"},
      {"\"interaction\":\"concat\"", "\"interaction\":\"concat\",\"cross_layers\":2", SVC_BAD_FIELD,
       "workload.cross_layers"},
      {"\"interaction\":\"concat\"", "\"interaction\":\"concat\",\"pad_interaction_to\":800",
       SVC_BAD_FIELD, "workload.pad_interaction_to"},
  };
  stepfx_expect_errors(ctx, good, bad, sizeof bad / sizeof bad[0]);
  /* the opaque form needs both figures, and finite ones */
  char body[2048];
  stepfx_expect_error(ctx, opaque(body, sizeof body, "\"params\":2.5e6"), SVC_MISSING_FIELD,
                      "workload.dense_block.flops_per_sample");
  stepfx_expect_error(ctx, opaque(body, sizeof body, "\"params\":2.5e6,\"flops_per_sample\":1e300"),
                      SVC_OUT_OF_RANGE, "workload.dense_block.flops_per_sample");
  /* not an object */
  char arr[2048];
  snprintf(arr, sizeof arr, "%s", stepfx_edit(good, "\"dense_block\":{", "\"dense_block\":[{"));
  snprintf(body, sizeof body, "%s",
           stepfx_edit(arr, "\"rows_per_sample\":4}]}", "\"rows_per_sample\":4}]}]"));
  stepfx_expect_error(ctx, body, SVC_BAD_FIELD, "workload.dense_block");
}

/* The planner plans such a workload (its dense part priced with every
 * table's own dim), says how the block was priced, and a plan of it is
 * not sent to the runner, which cannot build the block. */
static void test_api_plan_block__planned_not_validated(void **state) {
  (void)state;
  char body[4096];
  const char *wl = strstr(good, "\"workload\":"), *rc = strstr(good, ",\"recipe\":");
  snprintf(body, sizeof body,
           "{\"hardware\":\"h200\",%.*s,\"cluster\":{\"gpus_per_node\":8,\"nodes\":1},"
           "\"baseline\":{\"batch_per_gpu\":4096,\"precision\":\"bf16\",\"framework\":"
           "\"torchrec_fbgemm\"},\"knobs\":{\"batch_per_gpu\":[4096,8192]},\"time_limit_s\":5}",
           (int)(rc - wl), wl);
  char *out = NULL;
  svc_err err;
  if (api_plan(ctx, body, strlen(body), &out, &err)) fail_msg("%s (%s)", err.message, err.field);
  cJSON *doc = cJSON_Parse(out);
  assert_non_null(cJSON_GetObjectItem(doc, "dense_block"));
  const char *id = cJSON_GetStringValue(cJSON_GetObjectItem(doc, "id"));
  assert_non_null(id);
  char vreq[256], *vout = NULL;
  snprintf(vreq, sizeof vreq, "{\"backend\":\"bundle\"}");
  api_plan_val_opts vo = {0};
  int vrc = api_plan_validate(ctx, id, vreq, strlen(vreq), &vo, &vout, &err);
  assert_int_not_equal(vrc, 0);
  assert_int_equal(svc_code_http(err.code), 400);
  assert_non_null(strstr(err.message, "dense_block"));
  free(vout);
  cJSON_Delete(doc);
  free(out);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_step_block__gemms_add_params_flops_and_time),
      cmocka_unit_test(test_step_block__params_and_flops_form),
      cmocka_unit_test(test_api_step_block__answer_names_the_block),
      cmocka_unit_test(test_api_step_block__bad_blocks_name_the_field),
      cmocka_unit_test(test_api_plan_block__planned_not_validated),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
