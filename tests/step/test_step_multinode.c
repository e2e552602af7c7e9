/* Multi-node DLRM steps (issue 19): the hugectr framework profile (one
 * CUDA graph per step, half-precision exchange and gradients, one grouped
 * all-reduce, the hierarchical rail all-to-all), row_shards (a row-split
 * table over k GPUs or k nodes, as HugeCTR's planners split them), FSDP's
 * all-gather / reduce-scatter through the hierarchical collectives, and
 * the request checks of the new fields over POST /v1/step's code. */
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

/* The MLPerf DLRM-DCNv2 shape (data/workloads/mlperf_dcnv2.json): 26
 * tables of dim 128 with their multi-hot sizes, DCN with rank 512, fp16
 * dense, fp32 tables, Adagrad; 64 GPUs of 8 per node unless changed. */
static void dcnv2(cost_workload *w, cost_recipe *r, int sharding, int framework) {
  static const int64_t hot[26] = {3, 2, 1, 2, 6, 1, 1,  1,   1,  7,  3, 8, 1,
                                  6, 9, 5, 1, 1, 1, 12, 100, 27, 10, 3, 1, 1};
  stepfx_criteo26(w, tabs, 40000000);
  for (int i = 0; i < 26; i++) {
    tabs[i].pooling = hot[i];
    tabs[i].sharding = tabs[i].rows < 30000 ? COST_SHARD_DATA_PARALLEL : -1;
  }
  w->dlrm.interaction = COST_INTER_DCN;
  w->dlrm.cross_layers = 3;
  w->dlrm.cross_rank = 512;
  w->dlrm.dense_optimizer = COST_OPT_ADAGRAD;
  w->dlrm.sparse_optimizer = COST_OPT_ADAGRAD;
  cost_recipe_init(r);
  r->gpus = 64;
  r->gpus_per_node = 8;
  r->batch_per_gpu = 2112;
  r->precision = COST_DT_FP16;
  r->embedding_precision = COST_DT_FP32;
  r->sharding = sharding;
  r->framework = framework;
}

static cost_step_result step(const cost_workload *w, const cost_recipe *r) {
  return stepfx_step(&h100, w, r);
}

/* The same table_row_wise DCNv2 step under TorchRec and under HugeCTR. */
static void torchrec_and_hugectr(cost_step_result *tr, cost_step_result *hc) {
  cost_workload w;
  cost_recipe r;
  dcnv2(&w, &r, COST_SHARD_TABLE_ROW_WISE, COST_FW_TORCHREC_FBGEMM);
  *tr = step(&w, &r);
  dcnv2(&w, &r, COST_SHARD_TABLE_ROW_WISE, COST_FW_HUGECTR);
  *hc = step(&w, &r);
}

/* One CUDA graph per step: no per-op dispatch, so the host is no floor;
 * the same recipe under TorchRec dispatches every op from Python. */
static void test_step__hugectr_graph_has_no_dispatch_floor(void **state) {
  (void)state;
  cost_step_result tr, hc;
  torchrec_and_hugectr(&tr, &hc);
  assert_true(tr.host_ms > 0.5);
  assert_true(hc.host_ms < 0.05);
  assert_true(hc.step_ms < tr.step_ms);
  assert_int_equal(cost_framework_parse("hugectr"), COST_FW_HUGECTR);
  assert_string_equal(cost_framework_name(COST_FW_HUGECTR), "hugectr");
}

/* HugeCTR under mixed precision exchanges half-precision pooled rows over
 * one rail and all-reduces half gradients in one grouped call. */
static void test_step__hugectr_exchanges_half_over_the_rail(void **state) {
  (void)state;
  cost_workload w;
  cost_recipe r;
  cost_step_result tr, hc;
  torchrec_and_hugectr(&tr, &hc);
  assert_true(hc.class_ms[COST_KC_ALLTOALL] > 0);
  assert_true(hc.class_ms[COST_KC_ALLTOALL] < 0.7 * tr.class_ms[COST_KC_ALLTOALL]);
  assert_true(hc.class_ms[COST_KC_ALLGATHER_RS] < 0.7 * tr.class_ms[COST_KC_ALLGATHER_RS]);
  assert_int_equal(hc.class_kernels[COST_KC_ALLREDUCE], 1); /* grouped */
  assert_true(tr.class_kernels[COST_KC_ALLREDUCE] > 1);     /* DDP buckets + the DP tables */
  /* fp32 dense under HugeCTR: full-width exchange, as TorchRec's */
  dcnv2(&w, &r, COST_SHARD_TABLE_ROW_WISE, COST_FW_HUGECTR);
  r.precision = COST_DT_FP32;
  cost_step_result f32 = step(&w, &r);
  assert_true(f32.class_ms[COST_KC_ALLGATHER_RS] > 1.5 * hc.class_ms[COST_KC_ALLGATHER_RS]);
  /* FSDP shards the dense gradients; the data-parallel tables' are still
   * all-reduced */
  dcnv2(&w, &r, COST_SHARD_TABLE_ROW_WISE, COST_FW_HUGECTR);
  r.dense_parallel = COST_DP_FSDP;
  cost_step_result fs = step(&w, &r);
  assert_int_equal(fs.class_kernels[COST_KC_ALLREDUCE], 1);
  assert_true(fs.class_ms[COST_KC_ALLREDUCE] > 0);
}

/* A row-wise table split over k of the G GPUs: k shards go to k GPUs
 * (their busiest GPU does more lookups than when all G share them), and
 * the partial sums travel by all-to-all instead of a reduce-scatter over
 * all G ranks. */
static void test_step__row_shards_split_over_k_gpus(void **state) {
  (void)state;
  cost_workload w;
  cost_recipe r;
  dcnv2(&w, &r, COST_SHARD_TABLE_WISE, COST_FW_HUGECTR);
  r.gpus_per_node = 64; /* one NVLink domain, as the GB200 row */
  tabs[20].sharding = COST_SHARD_ROW_WISE;
  cost_step_result all = step(&w, &r);
  tabs[20].row_shards = 32;
  cost_step_result k32 = step(&w, &r);
  assert_true(all.class_ms[COST_KC_ALLGATHER_RS] > 0);
  assert_true(k32.class_ms[COST_KC_ALLGATHER_RS] == 0);
  assert_true(k32.class_ms[COST_KC_ALLTOALL] > all.class_ms[COST_KC_ALLTOALL]);
  assert_true(k32.comp_ms[COST_COMP_COMMUNICATION] < all.comp_ms[COST_COMP_COMMUNICATION]);
  tabs[20].row_shards = 2; /* 2 GPUs carry the 100-hot table: a busier GPU */
  cost_step_result k2 = step(&w, &r);
  assert_true(k2.class_ms[COST_KC_EMB_FWD] > k32.class_ms[COST_KC_EMB_FWD]);
}

/* table_row_wise over k nodes (hier_auto's row splits): the heaviest
 * table's lookups spread over k nodes' GPUs instead of one node's. */
static void test_step__table_row_wise_row_shards_over_nodes(void **state) {
  (void)state;
  cost_workload w;
  cost_recipe r;
  dcnv2(&w, &r, COST_SHARD_TABLE_ROW_WISE, COST_FW_HUGECTR);
  cost_step_result one = step(&w, &r);
  tabs[20].row_shards = 4;
  cost_step_result four = step(&w, &r);
  assert_true(four.gpu_ms < 0.8 * one.gpu_ms);
  assert_true(four.class_ms[COST_KC_EMB_FWD] < one.class_ms[COST_KC_EMB_FWD]);
}

/* FSDP: the dense weights are sharded over all GPUs; each step
 * all-gathers them (forward and backward) and reduce-scatters the
 * gradients through the hierarchical collectives, so fewer GPUs per node
 * (more of each collective across the network) make it slower. */
static void test_step__fsdp_gathers_and_scatters_hierarchically(void **state) {
  (void)state;
  cost_workload w;
  cost_recipe r;
  dcnv2(&w, &r, COST_SHARD_TABLE_WISE, COST_FW_TORCHREC_FBGEMM);
  r.gpus = 16;
  cost_step_result ddp = step(&w, &r);
  r.dense_parallel = COST_DP_FSDP;
  cost_step_result f8 = step(&w, &r);
  r.gpus_per_node = 2;
  cost_step_result f2 = step(&w, &r);
  assert_true(f8.class_ms[COST_KC_ALLGATHER_RS] > ddp.class_ms[COST_KC_ALLGATHER_RS]);
  assert_true(f8.class_ms[COST_KC_ALLREDUCE] < ddp.class_ms[COST_KC_ALLREDUCE]);
  assert_true(f2.class_ms[COST_KC_ALLGATHER_RS] > 1.5 * f8.class_ms[COST_KC_ALLGATHER_RS]);
  /* weights and optimizer state: 1/16 of DDP's fp32 copies */
  assert_true(f8.mem_bytes[COST_MEM_OPTIMIZER_STATE] * 15 <
              ddp.mem_bytes[COST_MEM_OPTIMIZER_STATE]);
  assert_int_equal(cost_dense_parallel_parse("fsdp"), COST_DP_FSDP);
}

/* ---- POST /v1/step's checks of the new fields ---------------------------- */

static const char *const good =
    "{\"hardware\":\"h100-sxm\",\"workload\":{\"kind\":\"dlrm\",\"dense_features\":13,"
    "\"tables\":[{\"name\":\"a\",\"rows\":40000000,\"dim\":128,\"pooling\":100,"
    "\"sharding\":\"row_wise\",\"row_shards\":4},{\"name\":\"b\",\"rows\":3000000,\"dim\":128,"
    "\"pooling\":3,\"sharding\":\"table_row_wise\"}],\"bottom_mlp\":[512,256,128],"
    "\"top_mlp\":[1024,256,1],\"interaction\":\"dcn\",\"cross_layers\":3,\"cross_rank\":512,"
    "\"optimizers\":{\"dense\":\"adagrad\",\"sparse\":\"adagrad\"}},\"recipe\":{\"gpus\":64,"
    "\"gpus_per_node\":8,\"batch_per_gpu\":2112,\"precision\":\"fp16\",\"framework\":\"hugectr\","
    "\"dense_parallel\":\"fsdp\"}}";

static void test_api_step__multinode_fields(void **state) {
  (void)state;
  char *out = NULL;
  svc_err err;
  if (api_step(ctx, good, strlen(good), &out, &err)) fail_msg("%s (%s)", err.message, err.field);
  cJSON *doc = cJSON_Parse(out);
  assert_true(cJSON_GetNumberValue(cJSON_GetObjectItem(doc, "samples_per_s")) > 0);
  assert_true(cJSON_GetNumberValue(cJSON_GetObjectItem(doc, "host_ms")) < 0.05);
  cJSON_Delete(doc);
  free(out);
  /* row_shards: more GPUs than the job's, more nodes than it has, on a
   * table that is not split by rows, not a count */
  static const stepfx_bad bad[] = {
      {"\"row_shards\":4", "\"row_shards\":65", SVC_OUT_OF_RANGE, "workload.tables[0].row_shards"},
      {"\"table_row_wise\"}", "\"table_row_wise\",\"row_shards\":9}", SVC_OUT_OF_RANGE,
       "workload.tables[1].row_shards"},
      {"\"sharding\":\"row_wise\"", "\"sharding\":\"table_wise\"", SVC_BAD_FIELD,
       "workload.tables[0].row_shards"},
      {"\"row_shards\":4", "\"row_shards\":2.5", SVC_BAD_FIELD, "workload.tables[0].row_shards"},
      {"\"row_shards\":4", "\"row_shards\":0", SVC_OUT_OF_RANGE, "workload.tables[0].row_shards"},
      {"\"hugectr\"", "\"tensorflow\"", SVC_BAD_FIELD, "recipe.framework"},
      {"\"fsdp\"", "\"zero3\"", SVC_BAD_FIELD, "recipe.dense_parallel"},
  };
  stepfx_expect_errors(ctx, good, bad, sizeof bad / sizeof bad[0]);
}

/* The planner prices FSDP with the same hierarchical collectives: on two
 * nodes of 8 H100s a model of 5 G dense parameters (Adam) is faster
 * sharded than all-reduced, and the same 16 GPUs as 4 nodes of 4 put more
 * of every all-gather and reduce-scatter on the NICs: a slower step. */
static double plan_fsdp(int gpn, int nodes, char *dp, size_t dp_size) {
  char body[2048], *out = NULL;
  svc_err err;
  snprintf(body, sizeof body,
           "{\"workload\":{\"kind\":\"dlrm\",\"dense_features\":13,\"tables\":[{\"name\":"
           "\"a\",\"rows\":1000000,\"dim\":128,\"pooling\":4},{\"name\":\"b\",\"rows\":"
           "200000,\"dim\":128,\"pooling\":2}],\"bottom_mlp\":[512,128],\"top_mlp\":[40960,"
           "40960,40960,40960,1],\"interaction\":\"dot\",\"optimizers\":{\"dense\":\"adam\","
           "\"sparse\":\"rowwise_adagrad\"}},\"hardware\":\"h100-sxm\",\"cluster\":{"
           "\"gpus_per_node\":%d,\"nodes\":%d},\"baseline\":{\"batch_per_gpu\":1024,"
           "\"precision\":\"bf16\",\"embedding_precision\":\"fp32\",\"framework\":"
           "\"torchrec_fbgemm\",\"dense_parallel\":\"ddp\"},\"knobs\":{\"dense_parallel\":"
           "[\"ddp\",\"fsdp\"]},\"objective\":\"throughput\",\"time_limit_s\":2}",
           gpn, nodes);
  if (api_plan(ctx, body, strlen(body), &out, &err)) fail_msg("%s (%s)", err.message, err.field);
  cJSON *doc = cJSON_Parse(out);
  const char *v = cJSON_GetStringValue(
      cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "recipe"), "dense_parallel"));
  snprintf(dp, dp_size, "%s", v ? v : "");
  double ms = cJSON_GetNumberValue(cJSON_GetObjectItem(doc, "step_ms"));
  cJSON_Delete(doc);
  free(out);
  return ms;
}

static void test_api_plan__fsdp_across_nodes(void **state) {
  (void)state;
  char dp8[16], dp4[16];
  double t8 = plan_fsdp(8, 2, dp8, sizeof dp8), t4 = plan_fsdp(4, 4, dp4, sizeof dp4);
  assert_string_equal(dp8, "fsdp");
  assert_string_equal(dp4, "fsdp");
  assert_true(t4 > 1.2 * t8);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_step__hugectr_graph_has_no_dispatch_floor),
      cmocka_unit_test(test_step__hugectr_exchanges_half_over_the_rail),
      cmocka_unit_test(test_step__row_shards_split_over_k_gpus),
      cmocka_unit_test(test_step__table_row_wise_row_shards_over_nodes),
      cmocka_unit_test(test_step__fsdp_gathers_and_scatters_hierarchically),
      cmocka_unit_test(test_api_step__multinode_fields),
      cmocka_unit_test(test_api_plan__fsdp_across_nodes),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
