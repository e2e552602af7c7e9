/* The step tests' shared fixtures (step_fixture.h). Failures end the
 * calling test through cmocka's fail_msg. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "step_fixture.h"

void stepfx_open(api_ctx **ctx, const char *hw_id, cost_hw *hw) {
  svc_err err;
  if (api_ctx_new(ctx, ":memory:", &err)) fail_msg("%s", err.message);
  if (api_hw_lookup(*ctx, hw_id, 0, hw, &err)) fail_msg("%s", err.message);
}

void stepfx_criteo26(cost_workload *w, cost_table *tabs, int64_t big_rows) {
  const int64_t B = big_rows;
  const int64_t rows[26] = {B,  39060,   17295,  7424, 20265,  3,     7122, 1543, 63,
                            B,  3067956, 405282, 10,   2209,   11938, 155,  4,    976,
                            14, B,       B,      B,    590152, 12973, 108,  36};
  memset(w, 0, sizeof *w);
  for (int i = 0; i < 26; i++)
    tabs[i] = (cost_table){
        .rows = rows[i], .dim = 128, .pooling = 1, .count = 1, .sharding = -1, .placement = -1};
  w->kind = COST_WL_DLRM;
  w->dlrm = (cost_dlrm){.dense_features = 13,
                        .n_tables = 26,
                        .tables = tabs,
                        .n_bottom = 3,
                        .n_top = 5,
                        .bottom = {512, 256, 128},
                        .top = {1024, 1024, 512, 256, 1},
                        .interaction = COST_INTER_DOT};
}

cost_step_result stepfx_step(const cost_hw *hw, const cost_workload *w, const cost_recipe *r) {
  cost_step_result res;
  int rc = cost_step(hw, w, r, &res);
  if (rc) fail_msg("cost_step refused: %d", rc);
  assert_true(res.step_ms > 0);
  return res;
}

char *stepfx_edit(const char *good, const char *from, const char *to) {
  static char buf[4096];
  const char *p = strstr(good, from);
  if (!p) fail_msg("'%s' not in the request", from);
  snprintf(buf, sizeof buf, "%.*s%s%s", (int)(p - good), good, to, p + strlen(from));
  return buf;
}

void stepfx_expect_error(api_ctx *ctx, const char *body, int code, const char *field) {
  char *out = NULL;
  svc_err err;
  svc_err_clear(&err);
  int rc = api_step(ctx, body, strlen(body), &out, &err);
  if (rc != -code) fail_msg("%s\n: got %d (%s) want %d", body, rc, err.message, -code);
  if (strcmp(err.field, field)) fail_msg("field %s, want %s (%s)", err.field, field, err.message);
  assert_null(out);
}

void stepfx_expect_errors(api_ctx *ctx, const char *good, const stepfx_bad *bad, size_t n) {
  for (size_t i = 0; i < n; i++)
    stepfx_expect_error(ctx, stepfx_edit(good, bad[i].from, bad[i].to), bad[i].code, bad[i].field);
}

void stepfx_llama3(cost_workload *w, int64_t layers, int64_t hidden, int64_t heads, int64_t ffn) {
  memset(w, 0, sizeof *w);
  w->kind = COST_WL_TRANSFORMER;
  w->tf.layers = layers;
  w->tf.hidden = hidden;
  w->tf.heads = heads;
  w->tf.kv_heads = 8;
  w->tf.ffn = ffn;
  w->tf.seq_len = 8192;
  w->tf.vocab = 128256;
  w->tf.attention = COST_ATTN_FLASH;
  w->tf.mlp = COST_MLP_SWIGLU;
  w->tf.norm = COST_NORM_RMSNORM;
  w->tf.position = COST_POS_ROTARY;
  w->tf.loss = COST_LOSS_FUSED;
}
