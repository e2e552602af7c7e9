/* Large-model transformer recipes (issue 21, the published LLM rows of
 * bench/published_llm): the interleaved pipeline (vp), context
 * parallelism (cp), Megatron's distributed-optimizer gradient reduction
 * over the data x context group laid out after TP, fp8 scaling and casting,
 * and POST /v1/step's checks of the new recipe fields. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api/api_step.h"
#include "step_fixture.h"

static api_ctx *ctx;
static cost_hw h100;

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

/* Llama 3 70B (Meta's config.json) on 64 H100s, TP 4 x PP 8, fp8, as the
 * Megatron-Bridge 25.11 DGX-H100 row (llm_training.json). */
static void llama70b(cost_workload *w, cost_recipe *r) {
  stepfx_llama3(w, 80, 8192, 64, 28672);
  cost_recipe_init(r);
  r->gpus = 64;
  r->gpus_per_node = 8;
  r->tp = 4;
  r->pp = 8;
  r->batch_per_gpu = 1;
  r->global_batch = 128;
  r->precision = COST_DT_FP8;
  r->framework = COST_FW_MEGATRON;
  r->sequence_parallel = 1;
}

/* Narayanan et al. 2021, sec. 2.2.2: vp chunks per GPU divide the bubble
 * by vp; the sends (vp times as many) are overlapped (overlap_p2p_comm),
 * so the step gets faster by the bubble and the exposed sends saved. */
static void test_step_llm__interleaving_divides_the_bubble(void **state) {
  (void)state;
  cost_workload w;
  cost_recipe r;
  llama70b(&w, &r);
  cost_step_result one = stepfx_step(&h100, &w, &r);
  r.vp = 5;
  cost_step_result five = stepfx_step(&h100, &w, &r);
  int64_t mb = 128 / 2; /* global / (micro x dp 2) */
  assert_true(fabs(one.pipeline_bubble - 7.0 / (double)mb) < 1e-12);
  assert_true(fabs(five.pipeline_bubble - 7.0 / (5.0 * (double)mb)) < 1e-12);
  assert_true(five.step_ms < one.step_ms);
  double saved = one.class_ms[COST_KC_BUBBLE] - five.class_ms[COST_KC_BUBBLE];
  assert_true(saved > 0);
  /* what the step saves: the bubble, and the sends that interleaving
   * overlaps with compute */
  assert_true(one.step_ms - five.step_ms >= 0.9 * saved);
  assert_true(one.step_ms - five.step_ms <= saved + one.class_ms[COST_KC_P2P] + 1.0);
  /* five times the sends, counted but not exposed */
  assert_true(five.class_kernels[COST_KC_P2P] == 5 * one.class_kernels[COST_KC_P2P]);
  assert_true(five.class_ms[COST_KC_P2P] > 4.9 * one.class_ms[COST_KC_P2P]);
}

/* Context parallelism: each rank holds s / cp tokens of every sequence, so
 * the activations and the GEMM time per micro-batch halve at cp = 2 while
 * the attention (1 / cp of the whole causal sequence per rank) does not
 * shrink by the square; the model FLOPs of the step do not change. */
static void test_step_llm__context_parallel_splits_the_tokens(void **state) {
  (void)state;
  cost_workload w;
  cost_recipe r;
  llama70b(&w, &r);
  r.pp = 4;
  r.global_batch = 64;
  cost_step_result c1 = stepfx_step(&h100, &w, &r);
  r.cp = 2;
  cost_step_result c2 = stepfx_step(&h100, &w, &r);
  assert_true(fabs(c1.model_flops / c2.model_flops - 1) < 1e-12);
  /* dp halves (4 -> 2): twice the micro-batches of half the tokens each */
  double act1 = c1.mem_bytes[COST_MEM_ACTIVATIONS], act2 = c2.mem_bytes[COST_MEM_ACTIVATIONS];
  assert_true(act2 < 0.6 * act1 && act2 > 0.4 * act1);
  /* per step the GEMM work on a GPU is the same (same tokens per GPU) */
  double g1 = c1.class_ms[COST_KC_GEMM_FWD] + c1.class_ms[COST_KC_GEMM_BWD];
  double g2 = c2.class_ms[COST_KC_GEMM_FWD] + c2.class_ms[COST_KC_GEMM_BWD];
  assert_true(fabs(g2 / g1 - 1) < 0.15);
  /* and the attention per GPU per step too (1 / cp of each sequence) */
  assert_true(fabs(c2.class_ms[COST_KC_ATTENTION] / c1.class_ms[COST_KC_ATTENTION] - 1) < 0.15);
  /* tokens per second count whole sequences */
  assert_true(c2.tokens_per_s > 0.5 * c1.tokens_per_s && c2.tokens_per_s < 1.5 * c1.tokens_per_s);
}

/* The gradient reduction of a TP 8 job: one member of the data-parallel
 * group per node, so it crosses the scale-out network; with TP 1 the same
 * group size has 8 members per node. The megatron framework reduces 16-bit
 * gradients and shards the optimizer over the group. */
static void test_step_llm__data_parallel_group_is_laid_out_after_tp(void **state) {
  (void)state;
  cost_workload w;
  cost_recipe r;
  llama70b(&w, &r);
  r.tp = 8;
  r.pp = 1;
  r.gpus = 64;
  r.global_batch = 64;
  cost_step_result tp8 = stepfx_step(&h100, &w, &r);
  double comm8 = tp8.class_ms[COST_KC_ALLGATHER_RS];
  assert_true(comm8 > 0);
  /* the same 8 data-parallel ranks inside one 64-GPU scale-up domain */
  r.gpus_per_node = 64;
  cost_step_result nvl = stepfx_step(&h100, &w, &r);
  assert_true(nvl.class_ms[COST_KC_ALLGATHER_RS] < comm8);
  r.gpus_per_node = 8;
  /* the optimizer state is sharded over the 8 data-parallel ranks */
  r.framework = COST_FW_PYTORCH_EAGER;
  r.precision = COST_DT_BF16;
  cost_step_result eager = stepfx_step(&h100, &w, &r);
  r.framework = COST_FW_MEGATRON;
  cost_step_result meg = stepfx_step(&h100, &w, &r);
  assert_true(fabs(meg.mem_bytes[COST_MEM_OPTIMIZER_STATE] * 8.0 /
                       eager.mem_bytes[COST_MEM_OPTIMIZER_STATE] -
                   1) < 1e-12);
}

/* fp8 adds the scaling and casting passes (step_fp8_cast_bytes) on top of
 * the GEMMs; bf16 has none. */
static void test_step_llm__fp8_pays_for_its_casts(void **state) {
  (void)state;
  cost_workload w;
  cost_recipe r;
  llama70b(&w, &r);
  double q = cost_step_param_value(&h100, COST_SP_FP8_CAST_B);
  assert_true(q > 0);
  cost_step_result fp8 = stepfx_step(&h100, &w, &r);
  r.precision = COST_DT_BF16;
  cost_step_result bf16 = stepfx_step(&h100, &w, &r);
  assert_true(fp8.class_kernels[COST_KC_ELEMENTWISE] > bf16.class_kernels[COST_KC_ELEMENTWISE]);
  assert_true(fp8.class_ms[COST_KC_ELEMENTWISE] > bf16.class_ms[COST_KC_ELEMENTWISE]);
}

/* The new fields are checked like the others: 400 naming the field. */
static void test_api_step__vp_and_cp_refusals_name_the_field(void **state) {
  (void)state;
  static const char good[] =
      "{\"hardware\":\"h100-sxm\",\"workload\":{\"kind\":\"transformer\",\"layers\":80,"
      "\"hidden\":8192,\"heads\":64,\"kv_heads\":8,\"ffn\":28672,\"seq_len\":8192,\"vocab\":128256,"
      "\"attention\":\"flash\",\"mlp\":\"swiglu\",\"norm\":\"rmsnorm\",\"loss\":\"fused\"},"
      "\"recipe\":{\"gpus\":64,\"gpus_per_node\":8,\"tp\":4,\"pp\":4,\"vp\":5,\"cp\":2,"
      "\"batch_per_gpu\":1,\"global_batch\":128,\"precision\":\"fp8\",\"framework\":\"megatron\","
      "\"sequence_parallel\":true}}";
  char *out = NULL;
  svc_err err;
  assert_int_equal(api_step(ctx, good, strlen(good), &out, &err), 0);
  free(out);
  static const stepfx_bad bad[] = {
      {"\"vp\":5", "\"vp\":0", SVC_OUT_OF_RANGE, "recipe.vp"},
      {"\"vp\":5", "\"vp\":\"5\"", SVC_BAD_FIELD, "recipe.vp"},
      {"\"pp\":4", "\"pp\":1", SVC_BAD_FIELD, "recipe.vp"},
      {"\"cp\":2", "\"cp\":0", SVC_OUT_OF_RANGE, "recipe.cp"},
      {"\"cp\":2", "\"cp\":3", SVC_BAD_FIELD, "recipe.cp"},
      {"\"cp\":2", "\"cp\":8", SVC_BAD_FIELD, "recipe.gpus"},
      {"\"global_batch\":128", "\"global_batch\":127", SVC_BAD_FIELD, "recipe.global_batch"},
  };
  stepfx_expect_errors(ctx, good, bad, sizeof bad / sizeof bad[0]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_step_llm__interleaving_divides_the_bubble),
      cmocka_unit_test(test_step_llm__context_parallel_splits_the_tokens),
      cmocka_unit_test(test_step_llm__data_parallel_group_is_laid_out_after_tp),
      cmocka_unit_test(test_step_llm__fp8_pays_for_its_casts),
      cmocka_unit_test(test_api_step__vp_and_cp_refusals_name_the_field),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
