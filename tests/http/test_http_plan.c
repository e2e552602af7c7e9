/* Plan and compare over HTTP on the example workloads (issue 23): every
 * binding constraint a plan states survives a re-solve with it relaxed
 * (twice the HBM through a copied descriptor, the global batch pin
 * dropped); the MLPerf plan leaves no table in host memory when HBM has
 * room, nor shards column-wise under 128; compare
 * splits the gain into the hardware's and the co-design share, X -> X
 * gives 1 for both, and its tuned source is the plan for the source. */
#include <math.h>
#include <stdio.h>

#include "test_http_common.h"

static cJSON *load(const char *rel) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", CDPLAN_SOURCE_DIR, rel);
  FILE *fp = fopen(path, "rb");
  assert_non_null(fp);
  static char buf[1 << 20];
  size_t n = fread(buf, 1, sizeof buf - 1, fp);
  fclose(fp);
  buf[n] = '\0';
  cJSON *doc = cJSON_Parse(buf);
  assert_non_null(doc);
  return doc;
}

static cJSON *post(const http_fixture *f, const char *path, const cJSON *req, int want) {
  char *body = fixture_print(req);
  http_resp r;
  assert_int_equal(fixture_send(f, "POST", path, body, NULL, &r), 0);
  free(body);
  expect_status(&r, want);
  cJSON *doc = fixture_json(&r);
  http_resp_dispose(&r);
  assert_non_null(doc);
  return doc;
}

static void set(cJSON *o, const char *k, cJSON *v) {
  cJSON_DeleteItemFromObjectCaseSensitive(o, k);
  cJSON_AddItemToObject(o, k, v);
}

/* The MLPerf DLRM-DCNv2 step request as a plan request on 8 x 8 GPUs. */
static cJSON *mlperf_plan(const char *hw) {
  cJSON *step = load("data/workloads/mlperf_dcnv2.json"), *req = cJSON_CreateObject();
  cJSON *base = cJSON_DetachItemFromObject(step, "recipe");
  cJSON_DeleteItemFromObject(base, "gpus");
  cJSON_DeleteItemFromObject(base, "sharding");
  set(req, "workload", cJSON_DetachItemFromObject(step, "workload"));
  set(req, "baseline", base);
  set(req, "hardware", cJSON_CreateString(hw));
  cJSON *cl = cJSON_AddObjectToObject(req, "cluster");
  cJSON_AddNumberToObject(cl, "gpus_per_node", 8);
  cJSON_AddNumberToObject(cl, "nodes", 8);
  cJSON *k = cJSON_AddObjectToObject(req, "knobs");
  const char *prec[] = {"bf16", "fp8"}, *emb[] = {"fp32", "fp16"};
  cJSON_AddItemToObject(k, "precision", cJSON_CreateStringArray(prec, 2));
  cJSON_AddItemToObject(k, "embedding_precision", cJSON_CreateStringArray(emb, 2));
  cJSON_AddNumberToObject(req, "time_limit_s", 3);
  cJSON_Delete(step);
  return req;
}

static double num(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static const cJSON *get(const cJSON *o, const char *path) {
  char buf[128], *save = NULL;
  snprintf(buf, sizeof buf, "%s", path);
  for (char *t = strtok_r(buf, ".", &save); t && o; t = strtok_r(NULL, ".", &save))
    o = cJSON_GetObjectItemCaseSensitive(o, t);
  return o;
}

static double at(const cJSON *o, const char *path) {
  const cJSON *v = get(o, path);
  return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* No host placement, no split of a table under 1,000 rows, no column-wise
 * shard under 128 (rows and dims from the request's tables by name). */
static void check_rules(const cJSON *plan, const cJSON *req) {
  const cJSON *tabs = get(req, "workload.tables"), *t;
  /* the answer says what produced the embedding plan and what ended the solve */
  static const char *const methods[] = {
      "exact",  "decomposed", "decomposed+repair", "memory_first_fallback", "greedy+local_search",
      "greedy", "given"};
  const cJSON *m = get(plan, "explanation.embedding.method");
  int known = 0;
  for (size_t i = 0; cJSON_IsString(m) && i < sizeof methods / sizeof methods[0]; i++)
    known |= !strcmp(m->valuestring, methods[i]);
  assert_true(known);
  const cJSON *lim = get(plan, "search.limit");
  assert_true(cJSON_IsString(lim) && strstr("none work time", lim->valuestring));
  assert_true(cJSON_IsString(get(plan, "explanation.embedding.limit")));
  cJSON_ArrayForEach(t, get(plan, "embedding_plan.tables")) {
    const char *name = cJSON_GetObjectItemCaseSensitive(t, "name")->valuestring;
    const char *shard = cJSON_GetObjectItemCaseSensitive(t, "sharding_type")->valuestring;
    const char *kern = cJSON_GetObjectItemCaseSensitive(t, "compute_kernel")->valuestring;
    double rows = 0, dim = 0;
    const cJSON *w;
    cJSON_ArrayForEach(w, tabs) {
      const char *wn = cJSON_GetObjectItemCaseSensitive(w, "name")->valuestring;
      if (!strncmp(name, wn, strlen(wn)) && (name[strlen(wn)] == 0 || name[strlen(wn)] == '#'))
        rows = num(w, "rows"), dim = num(w, "dim");
    }
    assert_true(rows > 0);
    if (strcmp(kern, "fused")) fail_msg("table %s placed on host (%s)", name, kern);
    int split = strcmp(shard, "table_wise") && strcmp(shard, "data_parallel");
    /* a small table may stay split where no unsplit placement holds the
     * slowest rank (MLPerf's 155-row cat_15: its pooled output over 64
     * GPUs is 0.92 ms on one rank); test_planner_emb checks that rule */
    if (rows < 1000 && split) fprintf(stderr, "  %s (%.0f rows) stays %s\n", name, rows, shard);
    if (!strcmp(shard, "column_wise"))
      assert_true(dim / cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(t, "ranks")) >= 128);
  }
}

/* Each binding constraint of the plan answer to req is re-solved relaxed. */
static void check_binding(http_fixture *f, cJSON *req, const cJSON *plan, const char *hwfield) {
  const cJSON *b;
  double sps = num(plan, "samples_per_s");
  cJSON_ArrayForEach(b, get(plan, "explanation.binding_constraints")) {
    cJSON *rq = cJSON_Duplicate(req, 1);
    fprintf(stderr, "  binding: %s\n", b->valuestring);
    if (strstr(b->valuestring, "HBM")) {
      /* the same accelerator with twice the HBM, as a catalog entry */
      char path[96], name[80];
      const char *hw = cJSON_GetObjectItemCaseSensitive(req, hwfield)->valuestring;
      snprintf(path, sizeof path, "/v1/hardware/%s", hw);
      snprintf(name, sizeof name, "%s-2xhbm", hw);
      http_resp r;
      assert_int_equal(fixture_get(f, path, &r), 0);
      cJSON *d = fixture_json(&r);
      http_resp_dispose(&r);
      assert_non_null(d);
      cJSON_DeleteItemFromObject(d, "calibration");
      set(d, "name", cJSON_CreateString(name));
      set(d, "hbm_bytes", cJSON_CreateNumber(2 * num(d, "hbm_bytes")));
      set(d, "hbm_usable_bytes", cJSON_CreateNumber(2 * num(d, "hbm_usable_bytes")));
      char *body = fixture_print(d);
      assert_int_equal(fixture_send(f, "POST", "/v1/hardware", body, NULL, &r), 0);
      assert_true(r.status == 201 || r.status == 409);
      http_resp_dispose(&r);
      free(body);
      cJSON_Delete(d);
      set(rq, hwfield, cJSON_CreateString(name));
    } else if (strstr(b->valuestring, "global batch")) {
      cJSON_DeleteItemFromObject(rq, "constraints");
    } else {
      fail_msg("a binding constraint the test cannot relax: %s", b->valuestring);
    }
    cJSON *rel = post(f, "/v1/plans", rq, 201);
    assert_true(num(rel, "samples_per_s") > sps * (1 + 1e-6));
    cJSON_Delete(rel), cJSON_Delete(rq);
  }
}

static void test_http_plan__example_workloads_state_true_reasons(void **state) {
  http_fixture *f = *state;
  static const char *const files[] = {"data/workloads/plan_dlrm_mi350x.json",
                                      "data/workloads/plan_compare_h100_to_h200.json",
                                      "data/workloads/plan_compare_b200_to_mi350x.json", NULL};
  for (int i = 0; files[i] || i == 3; i++) {
    cJSON *req;
    if (files[i]) {
      req = load(files[i]);
      const cJSON *from = cJSON_GetObjectItemCaseSensitive(req, "from");
      if (from) set(req, "hardware", cJSON_CreateString(from->valuestring));
      cJSON_DeleteItemFromObject(req, "from");
      cJSON_DeleteItemFromObject(req, "to");
      set(req, "time_limit_s", cJSON_CreateNumber(2));
    } else {
      req = mlperf_plan("h100-sxm");
    }
    fprintf(stderr, "%s\n", files[i] ? files[i] : "mlperf_dcnv2 on h100-sxm");
    cJSON *plan = post(f, "/v1/plans", req, 201);
    check_binding(f, req, plan, "hardware");
    const cJSON *sb;
    cJSON_ArrayForEach(sb, get(plan, "explanation.step_bound"))
        fprintf(stderr, "  bound: %s\n", sb->valuestring);
    if (!files[i]) {
      check_rules(plan, req);
      cJSON_Delete(plan), cJSON_Delete(req);
      break;
    }
    cJSON_Delete(plan), cJSON_Delete(req);
  }
}

/* X -> X: the port is the tuned recipe on the same chip (hardware share 1)
 * and the target plan cannot beat the tuned source (co-design share 1). */
static void test_http_plan__compare_same_chip_is_one(void **state) {
  http_fixture *f = *state;
  cJSON *req = load("data/workloads/plan_compare_b200_to_mi350x.json");
  set(req, "to", cJSON_CreateString("b200"));
  set(req, "time_limit_s", cJSON_CreateNumber(2));
  cJSON *doc = post(f, "/v1/compare", req, 200);
  assert_true(fabs(num(doc, "hardware_share") - 1) < 5e-4);
  assert_true(fabs(num(doc, "gain") - 1) < 5e-4);
  assert_true(fabs(num(doc, "total") - 1) < 5e-4);
  double st = num(doc, "source_tuning_gain"); /* null: the baseline does not fit on b200 */
  assert_true(isnan(st) || st >= 1 - 1e-9);
  assert_true(isnan(st) == !cJSON_IsTrue(get(doc, "source_baseline.fits")));
  /* one chip: one calibration, the like-basis share is the share */
  assert_true(cJSON_IsTrue(get(doc, "calibration_basis.like")));
  assert_true(at(doc, "calibration_basis.hardware_share_like_basis") == num(doc, "hardware_share"));
  cJSON_Delete(doc), cJSON_Delete(req);
}

/* H100 -> H200 in a fresh database: the H200 rests on its own shipped
 * calibration, the H100 on the Hopper architecture's (with the H200's
 * measured memory and GEMM-structure terms); compare says so and prices
 * the hardware share with both at the architecture's calibration (the
 * same chip with HBM3e for HBM3: a share above 1, below 1.2), with the
 * band of that level. Since the H100 takes the H200's measured GEMM
 * terms the mixed share agrees with it within 1 % (1.050 and 1.050; it
 * was 1.015 against 1.053 before). */
static void test_http_plan__compare_prices_like_calibrations(void **state) {
  http_fixture *f = *state;
  cJSON *req = load("data/workloads/plan_compare_h100_to_h200.json");
  set(req, "time_limit_s", cJSON_CreateNumber(2));
  cJSON *doc = post(f, "/v1/compare", req, 200);
  assert_string_equal(get(doc, "calibration_basis.from.calibration")->valuestring, "architecture");
  assert_string_equal(get(doc, "calibration_basis.to.calibration")->valuestring, "own");
  assert_false(cJSON_IsTrue(get(doc, "calibration_basis.like")));
  assert_string_equal(get(doc, "calibration_basis.like_level")->valuestring, "architecture");
  double mixed = num(doc, "hardware_share"),
         like = at(doc, "calibration_basis.hardware_share_like_basis");
  if (!(mixed > 1 && mixed < 1.2 && like > 1 && like < 1.2 && fabs(mixed / like - 1) < 0.01))
    fail_msg("hardware_share %g, like basis %g", mixed, like);
  assert_true(at(doc, "calibration_basis.ratio_band.gemm_ratio_median") > 0);
  assert_true(at(doc, "calibration_basis.ratio_band.pair") > 0);
  /* the same request priced on datasheet figures only: like on both */
  set(req, "calibration", cJSON_CreateString("none"));
  cJSON *none = post(f, "/v1/compare", req, 200);
  assert_true(cJSON_IsTrue(get(none, "calibration_basis.like")));
  assert_string_equal(get(none, "calibration_basis.like_level")->valuestring, "datasheet");
  assert_true(at(none, "calibration_basis.hardware_share_like_basis") ==
              num(none, "hardware_share"));
  cJSON_Delete(none), cJSON_Delete(doc), cJSON_Delete(req);
}

/* H100 -> MI300X at 64 GPUs: the tuned source is the plan for the H100
 * under the same request (recipe, embedding plan, step), the shares
 * multiply to the total, tune_from is accepted with a deprecation note. */
static void test_http_plan__compare_tuned_source_is_the_source_plan(void **state) {
  http_fixture *f = *state;
  cJSON *req = mlperf_plan("h100-sxm");
  /* One node and 5 s: this search ends on its work limits (2.3 s here), so
   * its answer does not follow the CPU share; 64 GPUs in 3 s ended on the
   * clock and gave ddp in one call, fsdp in the other under load. */
  cJSON_ReplaceItemInObject(cJSON_GetObjectItemCaseSensitive(req, "cluster"), "nodes",
                            cJSON_CreateNumber(1));
  cJSON_ReplaceItemInObject(req, "time_limit_s", cJSON_CreateNumber(5));
  cJSON *plan = post(f, "/v1/plans", req, 201);
  cJSON_DeleteItemFromObject(req, "hardware");
  cJSON_AddStringToObject(req, "from", "h100-sxm");
  cJSON_AddStringToObject(req, "to", "mi300x");
  cJSON_AddBoolToObject(req, "tune_from", 0);
  cJSON *doc = post(f, "/v1/compare", req, 200);
  const cJSON *ts = get(doc, "tuned_source");
  /* Two searches that ended on the clock (a machine too slow or too busy
   * for 5 s) may differ: then the identity is not checked, and said. */
  const cJSON *l1 = get(plan, "search.limit"), *l2 = get(ts, "search.limit");
  int clock = (cJSON_IsString(l1) && !strcmp(l1->valuestring, "time")) ||
              (cJSON_IsString(l2) && !strcmp(l2->valuestring, "time"));
  static const char *const keys[] = {"recipe",        "embedding_plan",    "step_ms",
                                     "samples_per_s", "peak_memory_bytes", NULL};
  for (int i = 0; keys[i]; i++) {
    char *a = cJSON_PrintUnformatted(get(plan, keys[i]));
    char *b = cJSON_PrintUnformatted(get(ts, keys[i]));
    if (strcmp(a, b) && clock)
      fprintf(stderr, "NOTE: a search ended on the clock; tuned_source.%s not compared\n", keys[i]);
    else if (strcmp(a, b))
      fail_msg("tuned_source.%s differs from the plan: %.200s vs %.200s", keys[i], b, a);
    free(a), free(b);
  }
  double g = num(doc, "gain"), h = num(doc, "hardware_share"), t = num(doc, "total");
  fprintf(stderr,
          "h100 -> mi300x: hardware share %.4f x co-design %.4f = total %.4f; tuning "
          "the source alone x%.4f\n",
          h, g, t, num(doc, "source_tuning_gain"));
  assert_true(g > 0 && h > 0 && fabs(h * g - t) < 1e-9 * t);
  assert_true(fabs(num(get(doc, "direct_port"), "samples_per_s") /
                       num(get(doc, "tuned_source"), "samples_per_s") -
                   h) < 1e-9);
  assert_non_null(strstr(cJSON_GetArrayItem(get(doc, "notes"), 0)->valuestring, "deprecated"));
  check_rules(get(doc, "to"), req);
  cJSON_Delete(doc), cJSON_Delete(plan), cJSON_Delete(req);
}

/* The error a request answered 400 names: field and message. */
static void expect_400(const http_fixture *f, const char *path, const cJSON *req, const char *field,
                       const char *says) {
  cJSON *doc = post(f, path, req, 400);
  const cJSON *fl = get(doc, "error.field"), *msg = get(doc, "error.message");
  assert_true(cJSON_IsString(fl) && cJSON_IsString(msg));
  if (strcmp(fl->valuestring, field) || !strstr(msg->valuestring, says))
    fail_msg("%s: field %s (want %s), message '%s' (want '%s' in it)", path, fl->valuestring, field,
             msg->valuestring, says);
  cJSON_Delete(doc);
}

/* More GPUs per node than the accelerator's scale-up domain is a 400 for
 * plan, compare (either side) and step (MI250X: 4 per domain); a plan
 * baseline stating other GPUs than its cluster is one too. */
/* get() for a member the test edits */
static cJSON *mget(cJSON *o, const char *path) { return (cJSON *)get(o, path); }

static void test_http_plan__gpus_beyond_the_scaleup_domain_refused(void **state) {
  http_fixture *f = *state;
  cJSON *cmp = load("data/workloads/plan_compare_b200_to_mi350x.json");
  set(cmp, "time_limit_s", cJSON_CreateNumber(1));
  cJSON *plan = cJSON_Duplicate(cmp, 1);
  cJSON_DeleteItemFromObject(plan, "from");
  cJSON_DeleteItemFromObject(plan, "to");
  set(plan, "hardware", cJSON_CreateString("mi250x"));
  expect_400(f, "/v1/plans", plan, "cluster.gpus_per_node", "4 GPUs per scale-up domain");
  set(cmp, "to", cJSON_CreateString("mi250x"));
  expect_400(f, "/v1/compare", cmp, "cluster.gpus_per_node", "to: ");
  set(cmp, "from", cJSON_CreateString("mi250x"));
  set(cmp, "to", cJSON_CreateString("b200"));
  expect_400(f, "/v1/compare", cmp, "cluster.gpus_per_node", "from: ");
  /* the cluster's fabric overrides change no domain size */
  cJSON_AddNumberToObject(mget(plan, "cluster"), "scaleup_bandwidth_bytes_per_s", 1e12);
  expect_400(f, "/v1/plans", plan, "cluster.gpus_per_node", "mi250x");

  /* a baseline that disagrees with its cluster (b200, 8 x 1) */
  set(plan, "hardware", cJSON_CreateString("b200"));
  cJSON_AddNumberToObject(mget(plan, "baseline"), "gpus", 16);
  expect_400(f, "/v1/plans", plan, "baseline.gpus", "8 GPUs");
  cJSON_DeleteItemFromObject(mget(plan, "baseline"), "gpus");
  cJSON_AddNumberToObject(mget(plan, "baseline"), "gpus_per_node", 4);
  expect_400(f, "/v1/plans", plan, "baseline.gpus_per_node", "cluster");
  cJSON_DeleteItemFromObject(mget(plan, "baseline"), "gpus_per_node");

  /* host memory per node (issue 24): a number of bytes in [1e9, 1e15] */
  cJSON_AddNumberToObject(mget(plan, "cluster"), "host_memory_bytes", 5);
  expect_400(f, "/v1/plans", plan, "cluster.host_memory_bytes", "host_memory_bytes");
  cJSON_ReplaceItemInObject(mget(plan, "cluster"), "host_memory_bytes", cJSON_CreateString("2TB"));
  expect_400(f, "/v1/plans", plan, "cluster.host_memory_bytes", "host_memory_bytes");

  cJSON *step = load("data/workloads/dlrm_h200_step.json");
  set(step, "hardware", cJSON_CreateString("mi250x"));
  set(mget(step, "recipe"), "gpus", cJSON_CreateNumber(8));
  set(mget(step, "recipe"), "gpus_per_node", cJSON_CreateNumber(8));
  expect_400(f, "/v1/step", step, "recipe.gpus_per_node", "4 GPUs per scale-up domain");
  set(mget(step, "recipe"), "gpus_per_node", cJSON_CreateNumber(4));
  cJSON_Delete(post(f, "/v1/step", step, 200));
  cJSON_Delete(step), cJSON_Delete(plan), cJSON_Delete(cmp);
}

/* A compare request has no "hardware" member (it is an unknown field
 * there): an unknown accelerator is named by the member that gave it,
 * from or to. */
static void test_http_plan__compare_unknown_accelerator_names_from_or_to(void **state) {
  http_fixture *f = *state;
  static const char *const sides[] = {"from", "to"};
  cJSON *cmp = load("data/workloads/plan_compare_b200_to_mi350x.json");
  set(cmp, "time_limit_s", cJSON_CreateNumber(1));
  for (int i = 0; i < 2; i++) {
    cJSON *req = cJSON_Duplicate(cmp, 1);
    set(req, sides[i], cJSON_CreateString("no-such-chip"));
    cJSON *doc = post(f, "/v1/compare", req, 404);
    assert_string_equal(get(doc, "error.field")->valuestring, sides[i]);
    assert_non_null(strstr(get(doc, "error.message")->valuestring, "no-such-chip"));
    cJSON_Delete(doc), cJSON_Delete(req);
  }
  cJSON_Delete(cmp);
}

/* A pinned global batch too large for the step model to price per GPU
 * (over 2^31 samples per GPU, the bound of recipe.batch_per_gpu) is a 400
 * naming constraints.global_batch, not a 422 "cannot price the dense
 * part (code -1)" blamed on knobs; a large one it can price stays a 422
 * that says what does not fit. */
static void test_http_plan__global_batch_beyond_the_step_model_is_400(void **state) {
  http_fixture *f = *state;
  cJSON *req = load("data/workloads/plan_dlrm_mi350x.json"); /* 8 GPUs per node */
  set(req, "time_limit_s", cJSON_CreateNumber(1));
  cJSON *cons = cJSON_CreateObject();
  cJSON_AddNumberToObject(cons, "global_batch", 68719476736.0); /* 2^36: 2^33 per GPU */
  set(req, "constraints", cons);
  expect_400(f, "/v1/plans", req, "constraints.global_batch", "global_batch");
  cJSON_ReplaceItemInObject(cons, "global_batch", cJSON_CreateNumber(17179869184.0)); /* 2^34 */
  cJSON *doc = post(f, "/v1/plans", req, 422);
  assert_non_null(strstr(get(doc, "error.message")->valuestring, "HBM"));
  cJSON_Delete(doc), cJSON_Delete(req);
}

/* TorchRec keys a plan by table name: two tables whose TorchRec names
 * are the same (given twice, or "large" x 2 expanded to large_1 beside a
 * table named large_1) made a dict literal with a key twice, whose last
 * entry silently replaced the first table's sharding. The export
 * refuses them, naming the table, as it refuses a '.' in a name. */
static void test_http_plan__torchrec_export_refuses_a_table_name_twice(void **state) {
  http_fixture *f = *state;
  static const char *const tables[] = {
      "[{\"name\":\"t\",\"rows\":100000000,\"dim\":128,\"pooling\":10},"
      "{\"name\":\"t\",\"rows\":1000,\"dim\":128}]",
      "[{\"name\":\"large\",\"rows\":1000,\"dim\":128,\"count\":2},"
      "{\"name\":\"large_1\",\"rows\":100000000,\"dim\":128,\"pooling\":10}]",
  };
  static const char *const dup[] = {"'t'", "'large_1'"};
  for (int i = 0; i < 2; i++) {
    cJSON *req = load("data/workloads/plan_dlrm_mi350x.json");
    set(req, "time_limit_s", cJSON_CreateNumber(1));
    set(mget(req, "workload"), "tables", cJSON_Parse(tables[i]));
    cJSON *plan = post(f, "/v1/plans", req, 201);
    char path[128];
    snprintf(path, sizeof path, "/v1/plans/%s?format=torchrec", get(plan, "id")->valuestring);
    http_resp r;
    assert_int_equal(fixture_send(f, "GET", path, NULL, NULL, &r), 0);
    expect_status(&r, 400);
    cJSON *doc = fixture_json(&r);
    assert_string_equal(fixture_err_field(doc), "workload.tables");
    assert_non_null(strstr(get(doc, "error.message")->valuestring, dup[i]));
    cJSON_Delete(doc), cJSON_Delete(plan), cJSON_Delete(req);
    http_resp_dispose(&r);
  }
}

static cJSON *get_json(const http_fixture *f, const char *path, int want) {
  http_resp r;
  assert_int_equal(fixture_send(f, "GET", path, NULL, NULL, &r), 0);
  expect_status(&r, want);
  cJSON *doc = fixture_json(&r);
  http_resp_dispose(&r);
  assert_non_null(doc);
  return doc;
}

/* GET /v1/plans: newest first, pages by the next_after cursor, each entry
 * the stored plan's figures; bad limit/after are 400 naming the field. */
static void test_http_plan__list_pages_newest_first(void **state) {
  http_fixture *f = *state;
  const char *hws[] = {"mi350x", "h200", "b200"};
  char ids[3][40], path[128];
  double tput[3];
  for (int i = 0; i < 3; i++) {
    cJSON *req = load("data/workloads/plan_dlrm_mi350x.json");
    set(req, "hardware", cJSON_CreateString(hws[i]));
    set(req, "time_limit_s", cJSON_CreateNumber(2));
    cJSON *doc = post(f, "/v1/plans", req, 201);
    snprintf(ids[i], sizeof ids[i], "%s", cJSON_GetObjectItem(doc, "id")->valuestring);
    tput[i] = num(doc, "samples_per_s");
    cJSON_Delete(doc), cJSON_Delete(req);
  }
  cJSON *p1 = get_json(f, "/v1/plans?limit=2", 200);
  const cJSON *list = cJSON_GetObjectItem(p1, "plans");
  assert_int_equal(cJSON_GetArraySize(list), 2);
  for (int i = 0; i < 2; i++) {
    const cJSON *e = cJSON_GetArrayItem(list, i);
    assert_string_equal(cJSON_GetObjectItem(e, "id")->valuestring, ids[2 - i]);
    assert_string_equal(cJSON_GetObjectItem(e, "hardware")->valuestring, hws[2 - i]);
    assert_true(num(e, "samples_per_s") == tput[2 - i]);
  }
  assert_string_equal(cJSON_GetObjectItem(p1, "next_after")->valuestring, ids[1]);
  snprintf(path, sizeof path, "/v1/plans?limit=2&after=%s", ids[1]);
  cJSON *p2 = get_json(f, path, 200);
  list = cJSON_GetObjectItem(p2, "plans");
  assert_int_equal(cJSON_GetArraySize(list), 1);
  assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(list, 0), "id")->valuestring, ids[0]);
  assert_true(cJSON_IsNull(cJSON_GetObjectItem(p2, "next_after")));
  cJSON_Delete(p1), cJSON_Delete(p2);
  const char *bad[][2] = {{"/v1/plans?limit=0", "limit"},
                          {"/v1/plans?limit=101", "limit"},
                          {"/v1/plans?limit=-1", "limit"},
                          {"/v1/plans?limit=", "limit"},
                          {"/v1/plans?after=xyz", "after"},
                          {"/v1/plans?after=", "after"},
                          {"/v1/plans?after=0000000000000000", "after"}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    cJSON *e = get_json(f, bad[i][0], 400);
    assert_string_equal(get(e, "error.field")->valuestring, bad[i][1]);
    cJSON_Delete(e);
  }
}

/* A baseline that names its sharding is planned with it (issue 27: the
 * dashboard's sharding knob): on 8 GPUs, row_wise and table_wise baselines
 * of the H200 step workload differ, each echoes its sharding, and one that
 * names none says "planner". The plan itself may still change it. */
static void test_http_plan__baseline_keeps_its_sharding(void **state) {
  http_fixture *f = *state;
  const char *shard[] = {"table_wise", "row_wise", NULL};
  double ms[3];
  for (int i = 0; i < 3; i++) {
    cJSON *step = load("data/workloads/dlrm_h200_step.json"), *req = cJSON_CreateObject();
    cJSON *base = cJSON_DetachItemFromObject(step, "recipe");
    cJSON_DeleteItemFromObject(base, "gpus");
    cJSON_DeleteItemFromObject(base, "sharding");
    if (shard[i]) cJSON_AddStringToObject(base, "sharding", shard[i]);
    set(req, "workload", cJSON_DetachItemFromObject(step, "workload"));
    set(req, "baseline", base);
    set(req, "hardware", cJSON_CreateString("h200"));
    cJSON *cl = cJSON_AddObjectToObject(req, "cluster");
    cJSON_AddNumberToObject(cl, "gpus_per_node", 8);
    cJSON_AddNumberToObject(cl, "nodes", 1);
    cJSON_AddNumberToObject(req, "time_limit_s", 2);
    cJSON *plan = post(f, "/v1/plans", req, 201);
    const cJSON *s = get(plan, "baseline.sharding");
    assert_true(cJSON_IsString(s));
    assert_string_equal(s->valuestring, shard[i] ? shard[i] : "planner");
    ms[i] = num(get(plan, "baseline"), "step_ms");
    fprintf(stderr, "  baseline %s: %.3f ms\n", s->valuestring, ms[i]);
    assert_true(ms[i] > 0);
    cJSON_Delete(plan), cJSON_Delete(req), cJSON_Delete(step);
  }
  assert_true(fabs(ms[0] - ms[1]) > 0.01 * ms[0]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_http_plan__example_workloads_state_true_reasons,
                                      setup_open, teardown),
      cmocka_unit_test_setup_teardown(test_http_plan__gpus_beyond_the_scaleup_domain_refused,
                                      setup_open, teardown),
      cmocka_unit_test_setup_teardown(test_http_plan__list_pages_newest_first, setup_open,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_http_plan__baseline_keeps_its_sharding, setup_open,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_http_plan__compare_same_chip_is_one, setup_open,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_http_plan__torchrec_export_refuses_a_table_name_twice,
                                      setup_open, teardown),
      cmocka_unit_test_setup_teardown(test_http_plan__global_batch_beyond_the_step_model_is_400,
                                      setup_open, teardown),
      cmocka_unit_test_setup_teardown(test_http_plan__compare_unknown_accelerator_names_from_or_to,
                                      setup_open, teardown),
      cmocka_unit_test_setup_teardown(test_http_plan__compare_prices_like_calibrations, setup_open,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_http_plan__compare_tuned_source_is_the_source_plan,
                                      setup_open, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
