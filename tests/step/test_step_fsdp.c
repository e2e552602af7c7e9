/* FSDP of a transformer (costmodel/step_fsdp.c, recipe dense_parallel
 * "fsdp"): weights, gradients and optimizer state shard over the data-
 * parallel ranks, two layers' weights and the root unit's stay gathered,
 * and every micro-batch all-gathers each layer twice and reduce-scatters
 * it once, overlapped with the layer's compute. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

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

/* Llama 3 8B (Meta's config.json) on gpus H100s, TP 1 PP 1, fp8, micro
 * batch 1, global batch 128: the Megatron-Bridge DGX-H100 FSDP row. */
static void llama8b(cost_workload *w, cost_recipe *r, int64_t gpus, int dp) {
  stepfx_llama3(w, 32, 4096, 32, 14336);
  cost_recipe_init(r);
  r->gpus = gpus;
  r->gpus_per_node = 8;
  r->batch_per_gpu = 1;
  r->global_batch = 128;
  r->precision = COST_DT_FP8;
  r->framework = COST_FW_MEGATRON;
  r->dense_parallel = dp;
}

/* one layer's and the root unit's (embedding + output) parameters */
static const double layer_p =
    4096.0 * (4096.0 + 2 * 8 * 128) + 4096.0 * 4096.0 + 3.0 * 4096.0 * 14336.0 + 4.0 * 4096.0;
static const double root_p = 128256.0 * 4096.0;

static void test_step_fsdp__state_shards_over_the_data_parallel_ranks(void **state) {
  (void)state;
  cost_workload w;
  cost_recipe r;
  llama8b(&w, &r, 8, COST_DP_DDP);
  cost_step_result ddp = stepfx_step(&h100, &w, &r);
  llama8b(&w, &r, 8, COST_DP_FSDP);
  cost_step_result f8 = stepfx_step(&h100, &w, &r);
  llama8b(&w, &r, 16, COST_DP_FSDP);
  cost_step_result f16 = stepfx_step(&h100, &w, &r);
  double W = ddp.mem_bytes[COST_MEM_WEIGHTS], G = ddp.mem_bytes[COST_MEM_GRADIENTS];
  /* 8 ranks: 1/8 of DDP's weights, plus two layers and the root gathered
   * in fp8 (fp8_param_gather): 1 byte per parameter */
  double wbuf = 2.0 * layer_p + root_p;
  assert_true(fabs(f8.mem_bytes[COST_MEM_WEIGHTS] - (W / 8.0 + wbuf)) < 1e-9 * W);
  /* gradients: 1/8 of DDP's, plus two layers' bf16 gradients */
  assert_true(fabs(f8.mem_bytes[COST_MEM_GRADIENTS] - (G / 8.0 + 2.0 * 2.0 * layer_p)) < 1e-9 * G);
  /* the persistent part halves again from 8 to 16 ranks; the buffers stay */
  assert_true(fabs((f8.mem_bytes[COST_MEM_WEIGHTS] - f16.mem_bytes[COST_MEM_WEIGHTS]) - W / 16.0) <
              1e-9 * W);
  assert_true(
      fabs((f8.mem_bytes[COST_MEM_OPTIMIZER_STATE] - f16.mem_bytes[COST_MEM_OPTIMIZER_STATE]) -
           f8.mem_bytes[COST_MEM_OPTIMIZER_STATE] / 2.0) <
      1e-9 * f8.mem_bytes[COST_MEM_OPTIMIZER_STATE]);
  assert_true(f16.peak_memory_bytes < f8.peak_memory_bytes);
  assert_true(f8.peak_memory_bytes < ddp.peak_memory_bytes);
  /* activations do not shard */
  assert_true(fabs(f8.mem_bytes[COST_MEM_ACTIVATIONS] - ddp.mem_bytes[COST_MEM_ACTIVATIONS]) < 1.0);
}

static double coll_s(int kind, double bytes) {
  cost_collective_op c = {
      .kind = kind, .bytes = bytes, .ranks = 8, .scope = COST_SCOPE_NODE, .gpus_per_node = 8};
  cost_result cr;
  assert_int_equal(cost_collective(&h100, &c, &cr), 0);
  return cr.ms;
}

static void test_step_fsdp__every_micro_batch_gathers_and_reduces(void **state) {
  (void)state;
  cost_workload w;
  cost_recipe r;
  llama8b(&w, &r, 8, COST_DP_DDP);
  cost_step_result ddp = stepfx_step(&h100, &w, &r);
  llama8b(&w, &r, 8, COST_DP_FSDP);
  cost_step_result f = stepfx_step(&h100, &w, &r);
  double mb = 128.0 / 8.0; /* micro-batches per step */
  /* per micro-batch: each layer gathered twice (fp8) and reduce-scattered
   * once (bf16), the root gathered and reduced once */
  double ag = coll_s(COST_COLL_ALLGATHER, layer_p),
         rs = coll_s(COST_COLL_REDUCESCATTER, 2 * layer_p);
  double ag0 = coll_s(COST_COLL_ALLGATHER, root_p),
         rs0 = coll_s(COST_COLL_REDUCESCATTER, 2 * root_p);
  double full = mb * (ag0 + rs0 + 32.0 * (2.0 * ag + rs));
  assert_true(fabs(f.class_ms[COST_KC_ALLGATHER_RS] - full) < 1e-6 * full);
  assert_int_equal(f.class_kernels[COST_KC_ALLGATHER_RS], 16 * (3 * 32 + 2));
  /* exposed: at least the first gathers and the last reduce-scatters of
   * each micro-batch, at most everything */
  double edge = mb * (ag0 + ag + rs + rs0);
  assert_true(f.comp_ms[COST_COMP_COMMUNICATION] >= edge - 1e-9);
  assert_true(f.comp_ms[COST_COMP_COMMUNICATION] <= full);
  /* the same compute, and per-micro-batch collectives instead of the
   * distributed optimizer's once per step: never faster */
  assert_true(fabs(f.class_ms[COST_KC_GEMM_FWD] - ddp.class_ms[COST_KC_GEMM_FWD]) < 1e-9);
  assert_true(f.step_ms >= ddp.step_ms);
  assert_true(f.class_ms[COST_KC_ALLGATHER_RS] > ddp.class_ms[COST_KC_ALLGATHER_RS]);
}

/* Slow links: every rank on its own node (flat over the NICs), so a
 * layer's gathers outlast its compute and the step pays for them. */
static void test_step_fsdp__slow_links_expose_the_gathers(void **state) {
  (void)state;
  cost_workload w;
  cost_recipe r;
  llama8b(&w, &r, 8, COST_DP_FSDP);
  cost_step_result fast = stepfx_step(&h100, &w, &r);
  r.gpus_per_node = 1;
  cost_step_result slow = stepfx_step(&h100, &w, &r);
  assert_true(slow.comp_ms[COST_COMP_COMMUNICATION] > fast.comp_ms[COST_COMP_COMMUNICATION]);
  assert_true(slow.step_ms > fast.step_ms);
}

/* One GPU: nothing to shard, FSDP prices exactly as DDP. */
static void test_step_fsdp__one_gpu_is_ddp(void **state) {
  (void)state;
  cost_workload w;
  cost_recipe r;
  llama8b(&w, &r, 1, COST_DP_DDP);
  r.global_batch = 4;
  r.framework = COST_FW_PYTORCH_EAGER;
  r.precision = COST_DT_BF16;
  cost_step_result ddp = stepfx_step(&h100, &w, &r);
  r.dense_parallel = COST_DP_FSDP;
  cost_step_result f = stepfx_step(&h100, &w, &r);
  assert_true(f.step_ms == ddp.step_ms);
  assert_true(f.peak_memory_bytes == ddp.peak_memory_bytes);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_step_fsdp__state_shards_over_the_data_parallel_ranks),
      cmocka_unit_test(test_step_fsdp__every_micro_batch_gathers_and_reduces),
      cmocka_unit_test(test_step_fsdp__slow_links_expose_the_gathers),
      cmocka_unit_test(test_step_fsdp__one_gpu_is_ddp),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
