/* The GEMMs the step model prices (cost_step_gemms) and the step answer's
 * "gemms" (POST /v1/step), which the dashboard draws: every layer's
 * forward, weight and input gradient GEMMs named and shaped as the model
 * runs them (the first layer has no input gradient), each priced as
 * cost_gemm prices the same op; the interaction bmm; a transformer block's
 * projections and the lm head; listing changes nothing in the step. */
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

static api_ctx *ctx;
static cost_hw h200;
static cost_table tabs[3];

static int setup(void **state) {
  (void)state;
  svc_err err;
  if (api_ctx_new(&ctx, ":memory:", &err)) fail_msg("%s", err.message);
  if (api_hw_lookup(ctx, "h200", 0, &h200, &err)) fail_msg("%s", err.message);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  api_ctx_free(ctx);
  return 0;
}

static const cost_step_gemm *find(const cost_step_gemm *g, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (!strcmp(g[i].name, name)) return &g[i];
  fail_msg("no GEMM named '%s' among %zu", name, n);
  return NULL;
}

/* g is priced as cost_gemm prices its op alone, and has the shape given */
static void priced_as_alone(const cost_step_gemm *g, int64_t m, int64_t n, int64_t k,
                            const char *layout) {
  cost_result r;
  if (g->op.m != m || g->op.n != n || g->op.k != k || memcmp(g->op.layout, layout, 2))
    fail_msg("%s: %lldx%lldx%lld %.2s, want %lldx%lldx%lld %s", g->name, (long long)g->op.m,
             (long long)g->op.n, (long long)g->op.k, g->op.layout, (long long)m, (long long)n,
             (long long)k, layout);
  assert_int_equal(cost_gemm(&h200, &g->op, &r), 0);
  assert_true(fabs(g->ms - r.ms) <= 1e-12 * r.ms);
  assert_true(g->flops == r.flops && g->bytes == r.bytes && g->bound == r.bound);
}

static void test_step_gemms__dlrm_layers_named_and_priced(void **state) {
  (void)state;
  cost_workload w = {0};
  cost_recipe r;
  cost_step_gemm g[64];
  size_t n = 0;
  for (int i = 0; i < 3; i++)
    tabs[i] = (cost_table){
        .rows = 100000, .dim = 64, .pooling = 2, .count = 1, .sharding = -1, .placement = -1};
  w.kind = COST_WL_DLRM;
  w.dlrm = (cost_dlrm){.dense_features = 13,
                       .n_tables = 3,
                       .tables = tabs,
                       .n_bottom = 2,
                       .n_top = 3,
                       .bottom = {256, 64},
                       .top = {512, 256, 1},
                       .interaction = COST_INTER_DOT,
                       .dense_optimizer = COST_OPT_ADAM,
                       .sparse_optimizer = COST_OPT_SGD};
  cost_recipe_init(&r);
  r.batch_per_gpu = 4096;
  r.precision = COST_DT_BF16;
  cost_step_result before, after;
  assert_int_equal(cost_step(&h200, &w, &r, &before), 0);
  assert_int_equal(cost_step_gemms(&h200, &w, &r, g, 64, &n), 0);
  assert_int_equal(cost_step(&h200, &w, &r, &after), 0);
  assert_memory_equal(&before, &after, sizeof before);
  /* bottom: 2 + 3, interaction: 2, top: 3 x 3 */
  assert_int_equal(n, 16);
  assert_string_equal(g[0].name, "bottom[0] fwd");
  priced_as_alone(&g[0], 4096, 256, 13, "nt");
  priced_as_alone(find(g, n, "bottom[0] wgrad"), 256, 13, 4096, "tn");
  priced_as_alone(find(g, n, "bottom[1] dgrad"), 4096, 256, 64, "nn");
  /* the interaction: 4 features of 64, one problem per sample (a roofline below a tile) */
  const cost_step_gemm *bmm = find(g, n, "interaction bmm");
  assert_true(bmm->op.m == 4 && bmm->op.n == 4 && bmm->op.k == 64 && bmm->op.batch == 4096);
  assert_true(bmm->ms > 0 && bmm->flops == 2.0 * 4096 * 4 * 4 * 64);
  /* top[0] reads the interaction: 6 pairs + 64 */
  priced_as_alone(find(g, n, "top[0] fwd"), 4096, 512, 70, "nt");
  priced_as_alone(find(g, n, "top[2] wgrad"), 1, 256, 4096, "tn");
  /* room for 4: the first 4 written, the count still whole */
  cost_step_gemm few[4];
  assert_int_equal(cost_step_gemms(&h200, &w, &r, few, 4, &n), 0);
  assert_int_equal(n, 16);
  for (int i = 0; i < 4; i++) {
    assert_string_equal(few[i].name, g[i].name);
    assert_true(few[i].ms == g[i].ms && few[i].op.m == g[i].op.m);
  }
  assert_int_equal(cost_step_gemms(&h200, &w, &r, NULL, 4, &n), COST_EINVAL);
}

static void test_step_gemms__transformer_block_and_head(void **state) {
  (void)state;
  cost_workload w = {0};
  cost_recipe r;
  cost_step_gemm g[64];
  size_t n = 0;
  w.kind = COST_WL_TRANSFORMER;
  w.tf =
      (cost_transformer){.layers = 4, .hidden = 1024, .heads = 16, .seq_len = 512, .vocab = 32000};
  cost_recipe_init(&r);
  r.gpus = 2;
  r.tp = 2;
  r.batch_per_gpu = 2;
  r.precision = COST_DT_BF16;
  assert_int_equal(cost_step_gemms(&h200, &w, &r, g, 64, &n), 0);
  /* qkv, attn out, ffn up, ffn down, lm head: fwd, dgrad, wgrad (flash attention: no bmm) */
  assert_int_equal(n, 15);
  int64_t T = 2 * 512;
  priced_as_alone(find(g, n, "qkv fwd"), T, 3 * 1024 / 2, 1024, "nt");
  priced_as_alone(find(g, n, "attn out wgrad"), 1024, 512, T, "tn");
  priced_as_alone(find(g, n, "ffn up fwd"), T, 4096 / 2, 1024, "nt");
  priced_as_alone(find(g, n, "lm head fwd"), T, 16000, 1024, "nt");
}

static void test_api_step__answer_lists_the_gemms(void **state) {
  (void)state;
  static const char body[] =
      "{\"hardware\":\"h200\",\"workload\":{\"kind\":\"dlrm\",\"dense_features\":13,"
      "\"tables\":[{\"name\":\"a\",\"rows\":1000,\"dim\":16}],\"bottom_mlp\":[32,16],"
      "\"top_mlp\":[64,1]},\"recipe\":{\"batch_per_gpu\":256,\"precision\":\"bf16\"}}";
  char *out = NULL;
  svc_err err;
  assert_int_equal(api_step(ctx, body, strlen(body), &out, &err), 0);
  cJSON *doc = cJSON_Parse(out);
  cJSON *gs = cJSON_GetObjectItem(doc, "gemms");
  assert_true(cJSON_IsArray(gs));
  assert_int_equal(cJSON_GetArraySize(gs), 2 + 3 + 2 + 6);
  cJSON *g0 = cJSON_GetArrayItem(gs, 0);
  assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(g0, "name")), "bottom[0] fwd");
  assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(g0, "layout")), "nt");
  assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(g0, "dtype")), "bf16");
  assert_true(cJSON_GetNumberValue(cJSON_GetObjectItem(g0, "m")) == 256);
  double ms = cJSON_GetNumberValue(cJSON_GetObjectItem(g0, "ms"));
  double fl = cJSON_GetNumberValue(cJSON_GetObjectItem(g0, "flops"));
  assert_true(ms > 0 && fl == 2.0 * 256 * 32 * 13);
  assert_true(fabs(cJSON_GetNumberValue(cJSON_GetObjectItem(g0, "achieved_tflops")) -
                   fl / (ms * 1e-3) / 1e12) < 1e-9);
  cJSON_Delete(doc);
  free(out);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_step_gemms__dlrm_layers_named_and_priced),
      cmocka_unit_test(test_step_gemms__transformer_block_and_head),
      cmocka_unit_test(test_api_step__answer_lists_the_gemms),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
