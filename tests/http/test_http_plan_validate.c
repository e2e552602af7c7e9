/* POST /v1/plans/{id}/validations over HTTP (issue 22): a stored plan and a
 * compare each become two bundle jobs (baseline and planned recipe on the
 * plan's workload, cdplan's own documents) linked to the plan, which GET
 * /v1/plans/{id} shows under "validation" with what the plan predicted; the
 * compare's baseline is the direct port, recorded as the source GPU's
 * recipe run on the target. Errors: unknown plan 404, a bad backend or an
 * unknown member 400 naming the field, a missing dispatch scope 403. The
 * bundle of an API submission is written and served as a ustar tarball
 * (GET /v1/validations/{id}/bundle) holding the MANIFEST modules and the
 * job document; a non-bundle job has none (409). */
#include <math.h>
#include <stdio.h>

#include "test_http_common.h"

#define PLAN_REQ                                                                                   \
  "{\"workload\":{\"kind\":\"dlrm\",\"name\":\"tiny\",\"dense_features\":13,"                      \
  "\"tables\":[{\"name\":\"t\",\"rows\":20000,\"dim\":16,\"pooling\":4,\"count\":4}],"             \
  "\"bottom_mlp\":[64,16],\"top_mlp\":[64,32,1],\"interaction\":\"dot\","                          \
  "\"optimizers\":{\"dense\":\"adam\",\"sparse\":\"sgd\"}},%s"                                     \
  "\"cluster\":{\"gpus_per_node\":%d,\"nodes\":1},"                                                \
  "\"baseline\":{\"batch_per_gpu\":256,\"precision\":\"fp32\",\"framework\":\"pytorch_eager\","    \
  "\"checkpointing\":\"full\"},"                                                                   \
  "\"knobs\":{\"precision\":[\"fp32\",\"bf16\"],\"checkpointing\":[\"none\",\"full\"]},"           \
  "\"time_limit_s\":5}"

static cJSON *send_json(const http_fixture *f, const char *method, const char *path,
                        const char *body, int want) {
  return expect_json(f, method, path, body, NULL, want);
}

static const cJSON *at(const cJSON *o, const char *a, const char *b) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, a);
  return b ? cJSON_GetObjectItemCaseSensitive(v, b) : v;
}

static char *make(const http_fixture *f, const char *path, const char *hw, int gpus, cJSON **doc) {
  char body[2048];
  snprintf(body, sizeof body, PLAN_REQ, hw, gpus);
  *doc = send_json(f, "POST", path, body, !strcmp(path, "/v1/plans") ? 201 : 200);
  return cJSON_GetObjectItemCaseSensitive(*doc, "id")->valuestring;
}

/* A member of the ustar archive: 1 when name is there. */
static int tar_has(const char *tar, size_t len, const char *name, const char **data, size_t *size) {
  for (size_t off = 0; off + 512 <= len && tar[off];) {
    size_t sz = strtoul(tar + off + 124, NULL, 8);
    const char *slash = strchr(tar + off, '/');
    if (slash && !strcmp(slash + 1, name)) {
      if (data) *data = tar + off + 512, *size = sz;
      return 1;
    }
    off += 512 + (sz + 511) / 512 * 512;
  }
  return 0;
}

static void test_http_plan_validate__plan_compare_and_bundle_tarball(void **state) {
  http_fixture *f = *state;
  char path[160];
  cJSON *plan = NULL, *cmp = NULL;
  const char *id = make(f, "/v1/plans", "\"hardware\":\"h200\",", 1, &plan);

  snprintf(path, sizeof path, "/v1/plans/%s/validations", id);
  cJSON *v = send_json(f, "POST", path, "{\"backend\":\"bundle\",\"steps\":2}", 201);
  const cJSON *jobs = at(v, "jobs", NULL);
  assert_int_equal(cJSON_GetArraySize(jobs), 2);
  const cJSON *j0 = cJSON_GetArrayItem(jobs, 0), *j1 = cJSON_GetArrayItem(jobs, 1);
  assert_string_equal(at(j0, "side", NULL)->valuestring, "baseline");
  assert_string_equal(at(j1, "kind", NULL)->valuestring, "dlrm_step");
  /* the runner's case is the plan's own recipe document and embedding plan */
  const cJSON *c1 = cJSON_GetArrayItem(at(at(j1, "params", NULL), "cases", NULL), 0);
  assert_true(cJSON_Compare(at(c1, "recipe", NULL), at(plan, "recipe", NULL), 1));
  assert_true(cJSON_Compare(at(c1, "embedding_plan", NULL), at(plan, "embedding_plan", NULL), 1));
  assert_non_null(at(j0, "token", NULL));

  /* GET shows the validation, predictions from the plan, nothing measured yet */
  snprintf(path, sizeof path, "/v1/plans/%s", id);
  cJSON *g = send_json(f, "GET", path, NULL, 200);
  const cJSON *val = at(g, "validation", NULL);
  assert_non_null(val);
  assert_string_equal(at(at(val, "planned", NULL), "state", NULL)->valuestring, "queued");
  assert_true(at(at(val, "baseline", NULL), "predicted", NULL) != NULL);
  assert_true(at(at(at(val, "baseline", NULL), "predicted", NULL), "step_ms", NULL)->valuedouble ==
              at(plan, "baseline", "step_ms")->valuedouble);
  assert_true(
      fabs(at(val, "gain", "predicted")->valuedouble - at(plan, "gain", NULL)->valuedouble) < 1e-9);
  assert_true(cJSON_IsNull(at(val, "gain", "measured")));
  assert_true(cJSON_IsNull(at(val, "planned", "measured")));

  /* the planned job's bundle, served as a tarball */
  int jid = (int)at(j1, "id", NULL)->valuedouble;
  snprintf(path, sizeof path, "/v1/validations/%d/bundle", jid);
  http_resp r;
  assert_int_equal(fixture_send(f, "GET", path, NULL, NULL, &r), 0);
  expect_status(&r, 200);
  char ct[64];
  assert_string_equal(http_header(&r, "Content-Type", ct, sizeof ct), "application/x-tar");
  const char *jd = NULL;
  size_t jl = 0;
  static const char *const files[] = {"job.json",         "run.sh",      "runner.py",
                                      "triton_matmul.py", "uvm_bag.py",  "transformer_step.py",
                                      "batch.py",         "dlrm_step.py"};
  for (size_t i = 0; i < sizeof files / sizeof *files; i++)
    assert_true(tar_has(r.body, r.body_len, files[i], NULL, NULL));
  assert_true(tar_has(r.body, r.body_len, "job.json", &jd, &jl));
  char *jtext = strndup(jd, jl);
  cJSON *job = cJSON_Parse(jtext);
  assert_non_null(job);
  assert_string_equal(at(job, "kind", NULL)->valuestring, "dlrm_step");
  assert_int_equal((int)at(job, "id", NULL)->valuedouble, jid);
  cJSON_Delete(job), free(jtext), http_resp_dispose(&r);

  /* a compare: the direct port is the source's recipe run on the target */
  const char *cid = make(f, "/v1/compare", "\"from\":\"h100-sxm\",\"to\":\"h200\",", 2, &cmp);
  snprintf(path, sizeof path, "/v1/plans/%s/validations", cid);
  cJSON *cv = send_json(f, "POST", path, "{\"backend\":\"bundle\"}", 201);
  const cJSON *b = at(at(cv, "validation", NULL), "baseline", NULL);
  assert_string_equal(at(b, "recipe_for", NULL)->valuestring, "h100-sxm");
  assert_string_equal(at(b, "ran_on", NULL)->valuestring, "h200");
  assert_true(cJSON_IsTrue(at(b, "ran_on_other_gpu", NULL)));
  assert_true(at(b, "predicted", "step_ms")->valuedouble ==
              at(cmp, "direct_port", "step_ms")->valuedouble);
  const cJSON *cj = cJSON_GetArrayItem(at(cv, "jobs", NULL), 1);
  const cJSON *cc = cJSON_GetArrayItem(at(at(cj, "params", NULL), "cases", NULL), 0);
  assert_true(cJSON_Compare(at(cc, "recipe", NULL), at(at(cmp, "to", NULL), "recipe", NULL), 1));

  /* errors */
  cJSON *e = send_json(f, "POST", "/v1/plans/0123456789abcdef/validations", "{}", 404);
  assert_string_equal(fixture_err_code(e), "not_found");
  cJSON_Delete(e);
  snprintf(path, sizeof path, "/v1/plans/%s/validations", id);
  e = send_json(f, "POST", path, "{\"backend\":\"ssh\"}", 400);
  assert_string_equal(fixture_err_field(e), "backend");
  cJSON_Delete(e);
  e = send_json(f, "POST", path, "{\"bogus\":1}", 400);
  assert_string_equal(fixture_err_field(e), "bogus");
  cJSON_Delete(e);
  e = send_json(f, "POST", path, "{\"partition\":\"a b\"}", 400);
  assert_string_equal(fixture_err_field(e), "partition");
  cJSON_Delete(e);
  /* a local job has no bundle */
  cJSON *lv =
      send_json(f, "POST", "/v1/validations",
                "{\"kind\":\"cpu_selftest\",\"hardware\":\"h200\",\"params\":{\"n\":1}}", 201);
  snprintf(path, sizeof path, "/v1/validations/%d/bundle", (int)at(lv, "id", NULL)->valuedouble);
  e = send_json(f, "GET", path, NULL, 409);
  cJSON_Delete(e), cJSON_Delete(lv);
  cJSON_Delete(cv), cJSON_Delete(g), cJSON_Delete(v), cJSON_Delete(plan), cJSON_Delete(cmp);
}

/* With tokens, running a plan's recipes needs the dispatch scope. */
static void test_http_plan_validate__needs_dispatch_scope(void **state) {
  http_fixture *f = *state;
  expect_send(f, "POST", "/v1/plans/0123456789abcdef/validations", "{}", NULL, 401);
  expect_send(f, "GET", "/v1/validations/1/bundle", NULL, NULL, 401);
}

/* POST a dlrm_step result for job (row: label, step_ms; device: name,
 * memory) with its token; the status. */
static int post_result(const http_fixture *f, const cJSON *job, const char *label, double ms,
                       const char *dev, double mem) {
  char path[96], hdr[192], *body = malloc(1024);
  long id = (long)at(job, "id", NULL)->valuedouble;
  snprintf(path, sizeof path, "/v1/validations/%ld/results", id);
  snprintf(hdr, sizeof hdr, "X-Job-Token: %s", at(job, "token", NULL)->valuestring);
  int len = snprintf(body, 1024,
                     "{\"id\":%ld,\"kind\":\"dlrm_step\",\"device\":{\"name\":\"%s\","
                     "\"memory_bytes\":%.0f,\"compute_units\":132},"
                     "\"rows\":[{\"label\":\"%s\",\"step_ms\":%.6f}]}",
                     id, dev, mem, label, ms);
  const char *h[] = {"Content-Type: application/json", hdr, NULL};
  http_resp r;
  assert_int_equal(http_request(f->port, "POST", path, h, body, (size_t)len, &r), 0);
  int status = r.status;
  http_resp_dispose(&r);
  free(body);
  return status;
}

/* A GPU-bound plan (at batch 65536 the step model's GPU time is 3-10x its
 * host time: a host-bound step cannot inform a GPU scale). */
#define GPU_PLAN_REQ                                                                               \
  "{\"workload\":{\"kind\":\"dlrm\",\"name\":\"gpu-bound\",\"dense_features\":13,"                 \
  "\"tables\":[{\"name\":\"t\",\"rows\":2000000,\"dim\":64,\"pooling\":8,\"count\":4}],"           \
  "\"bottom_mlp\":[512,256,64],\"top_mlp\":[1024,512,256,1],\"interaction\":\"dot\","              \
  "\"optimizers\":{\"dense\":\"adam\",\"sparse\":\"sgd\"}},\"hardware\":\"h200\","                 \
  "\"cluster\":{\"gpus_per_node\":1,\"nodes\":1},"                                                 \
  "\"baseline\":{\"batch_per_gpu\":65536,\"precision\":\"fp32\",\"framework\":\"pytorch_eager\","  \
  "\"checkpointing\":\"none\"},\"knobs\":{\"precision\":[\"fp32\",\"bf16\"]},\"time_limit_s\":5}"

/* A plan's two jobs measured 60 % slower than the plan predicted: POST
 * /v1/validations/{id}/calibrate fits the step-level scales on the pair
 * (kind step_validation, both jobs named, the device kept) and the plan's
 * step answer moves up; a pair from another GPU is 409 naming device. */
static void test_http_plan_validate__calibrate_from_dlrm_step(void **state) {
  http_fixture *f = *state;
  char path[160];
  cJSON *plan = send_json(f, "POST", "/v1/plans", GPU_PLAN_REQ, 201);
  const char *id = at(plan, "id", NULL)->valuestring;
  double before = at(plan, "step_ms", NULL)->valuedouble;
  for (int k = 0; k < 2; k++) { /* k = 1: the results of an H100 */
    snprintf(path, sizeof path, "/v1/plans/%s/validations", id);
    cJSON *v = send_json(f, "POST", path, "{\"backend\":\"bundle\"}", 201);
    const cJSON *jobs = at(v, "jobs", NULL), *j0 = cJSON_GetArrayItem(jobs, 0),
                *j1 = cJSON_GetArrayItem(jobs, 1);
    const char *dev = k ? "NVIDIA H100 80GB HBM3" : "NVIDIA H200";
    double mem = k ? 85e9 : 150e9;
    assert_int_equal(post_result(f, j0, "baseline",
                                 1.6 * at(plan, "baseline", "step_ms")->valuedouble, dev, mem),
                     200);
    assert_int_equal(post_result(f, j1, "planned", 1.6 * before, dev, mem), 200);
    snprintf(path, sizeof path, "/v1/validations/%ld/calibrate",
             (long)at(j0, "id", NULL)->valuedouble);
    cJSON *c = send_json(f, "POST", path, NULL, k ? 409 : 200);
    if (k) {
      assert_string_equal(fixture_err_field(c), "device");
    } else {
      const cJSON *cal = at(c, "calibration", NULL);
      assert_string_equal(at(cal, "kind", NULL)->valuestring, "step_validation");
      assert_int_equal(cJSON_GetArraySize(at(at(cal, "fitted_on", NULL), "jobs", NULL)), 2);
      assert_string_equal(
          at(at(at(cal, "fitted_on", NULL), "device", NULL), "name", NULL)->valuestring,
          "NVIDIA H200");
      assert_true(at(at(cal, "params", NULL), "step_dlrm_gpu_scale", NULL)->valuedouble > 1.05);
    }
    cJSON_Delete(c);
    cJSON_Delete(v);
  }
  cJSON *again = send_json(f, "POST", "/v1/plans", GPU_PLAN_REQ, 201);
  assert_true(at(again, "step_ms", NULL)->valuedouble > 1.05 * before);
  assert_non_null(at(again, "provenance", "step_calibration"));
  cJSON_Delete(again);
  cJSON_Delete(plan);
}

static int setup_token(void **state) { return setup_with_token(state, "s3cret-token-for-tests"); }

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_http_plan_validate__plan_compare_and_bundle_tarball,
                                      setup_open, teardown),
      cmocka_unit_test_setup_teardown(test_http_plan_validate__needs_dispatch_scope, setup_token,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_http_plan_validate__calibrate_from_dlrm_step, setup_open,
                                      teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
