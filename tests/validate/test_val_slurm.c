/* Validation runs through a real one-node Slurm (started by slurm_up.sh as
 * a ctest fixture; SLURM_CONF names it): cpu_selftest from submit to
 * stored result within 30 s, a GPU job through the fake gres, cancel of a
 * long job, a failing job, and an api context closed and reopened on the
 * same database while a job is in flight (the restarted server reconciles
 * from scontrol), the job's Slurm placement (typed GPU, partition,
 * constraint, server defaults). Skips (77) only when Slurm is not installed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "api/api_validate.h"
#include "val_tmpctx.h"

static char dir[128], db_path[192];

static int setup(void **state) {
  api_ctx *ctx = NULL;
  int rc = val_tmpctx_open(dir, db_path, "valslurm", &ctx);
  *state = ctx;
  return rc;
}

static int teardown(void **state) { return val_tmpctx_close(*state, dir); }

static const char *str(const cJSON *doc, const char *key) {
  const cJSON *v = cJSON_GetObjectItem(doc, key);
  return cJSON_IsString(v) ? v->valuestring : "";
}

static cJSON *submit(api_ctx *ctx, const char *params, const char *extra) {
  char body[512], *out = NULL;
  svc_err err;
  snprintf(body, sizeof body,
           "{\"kind\":\"cpu_selftest\",\"hardware\":\"h200\",\"backend\":\"slurm\","
           "\"params\":%s%s}",
           params, extra ? extra : "");
  int rc = api_validation_submit(ctx, body, strlen(body), &out, &err);
  if (rc) fprintf(stderr, "submit: %s\n", err.message);
  assert_int_equal(rc, 0);
  cJSON *doc = cJSON_Parse(out);
  free(out);
  if (strcmp(str(doc, "state"), "queued")) fprintf(stderr, "note: %s\n", str(doc, "note"));
  assert_string_equal(str(doc, "state"), "queued");
  assert_true(cJSON_GetObjectItem(doc, "slurm_job_id")->valueint > 0);
  return doc;
}

static cJSON *get(api_ctx *ctx, int id) {
  char ids[16], *out = NULL;
  svc_err err;
  snprintf(ids, sizeof ids, "%d", id);
  int rc = api_validation_get(ctx, ids, &out, &err);
  if (rc) fprintf(stderr, "get: %s\n", err.message);
  assert_int_equal(rc, 0);
  cJSON *doc = cJSON_Parse(out);
  free(out);
  return doc;
}

/* Poll until the state is want or final, at most limit_s. */
static cJSON *wait_for(api_ctx *ctx, int id, const char *want, double limit_s) {
  double end = svc_now() + limit_s;
  for (;;) {
    cJSON *doc = get(ctx, id);
    const char *s = str(doc, "state");
    int final = strcmp(s, "queued") && strcmp(s, "running");
    if (!strcmp(s, want) || final || svc_now() > end) return doc;
    cJSON_Delete(doc);
    usleep(100000);
  }
}

static int id_of(const cJSON *d) { return cJSON_GetObjectItem(d, "id")->valueint; }

/* submit's job id (the answer dropped). */
static int submit_id(api_ctx *ctx, const char *params) {
  cJSON *s = submit(ctx, params, NULL);
  int id = id_of(s);
  cJSON_Delete(s);
  return id;
}

static void test_val_slurm__selftest_result_within_30s(void **state) {
  api_ctx *ctx = *state;
  double t0 = svc_now();
  int id = submit_id(ctx, "{\"n\":2000}");
  cJSON *d = wait_for(ctx, id, "done", 30);
  double took = svc_now() - t0;
  if (strcmp(str(d, "state"), "done")) fprintf(stderr, "note: %s\n", str(d, "note"));
  assert_string_equal(str(d, "state"), "done");
  assert_true(took < 30);
  fprintf(stderr, "slurm: submit to stored result in %.2f s\n", took);
  cJSON *r = cJSON_GetObjectItem(cJSON_GetObjectItem(d, "result"), "result");
  assert_int_equal(cJSON_GetObjectItem(r, "sum")->valueint, 1999000);
  cJSON_Delete(d);
}

static void test_val_slurm__gpu_job_gets_fake_gres(void **state) {
  api_ctx *ctx = *state;
  cJSON *s = submit(ctx, "{\"n\":10}", ",\"gpus\":1");
  int id = id_of(s);
  assert_int_equal(cJSON_GetObjectItem(s, "gpus")->valueint, 1);
  cJSON_Delete(s);
  cJSON *d = wait_for(ctx, id, "done", 30);
  assert_string_equal(str(d, "state"), "done");
  cJSON_Delete(d);
}

/* The job's Slurm placement: a typed GPU (--gres=gpu:h200:1), the
 * partition and a node feature reach sbatch and the job runs; a GPU type or
 * partition the cluster lacks fails the job with sbatch's reason, from the
 * request or from the server's $CDPLAN_SLURM_* defaults; bad characters
 * are a 400 naming the member. */
static cJSON *submit_raw(api_ctx *ctx, const char *extra, int want_rc, svc_err *err) {
  char body[512], *out = NULL;
  snprintf(body, sizeof body,
           "{\"kind\":\"cpu_selftest\",\"hardware\":\"h200\",\"backend\":\"slurm\","
           "\"params\":{\"n\":10},\"gpus\":1%s}",
           extra);
  int rc = api_validation_submit(ctx, body, strlen(body), &out, err);
  assert_int_equal(rc, want_rc);
  cJSON *doc = out ? cJSON_Parse(out) : NULL;
  free(out);
  return doc;
}

static void test_val_slurm__placement_options(void **state) {
  api_ctx *ctx = *state;
  svc_err err;
  cJSON *s = submit_raw(
      ctx, ",\"gpu_type\":\"h200\",\"partition\":\"debug\",\"constraint\":\"h200\"", 0, &err);
  assert_string_equal(str(s, "state"), "queued");
  cJSON *d = wait_for(ctx, id_of(s), "done", 30);
  assert_string_equal(str(d, "state"), "done");
  cJSON_Delete(d), cJSON_Delete(s);
  /* an H100 job must not run on this H200-only cluster */
  s = submit_raw(ctx, ",\"gpu_type\":\"h100\"", 0, &err);
  assert_string_equal(str(s, "state"), "failed");
  assert_non_null(strstr(str(s, "note"), "sbatch failed"));
  cJSON_Delete(s);
  s = submit_raw(ctx, ",\"constraint\":\"mi300x\"", 0, &err);
  assert_string_equal(str(s, "state"), "failed");
  cJSON_Delete(s);
  setenv("CDPLAN_SLURM_PARTITION", "nosuchpartition", 1);
  s = submit_raw(ctx, "", 0, &err);
  assert_string_equal(str(s, "state"), "failed");
  cJSON_Delete(s);
  s = submit_raw(ctx, ",\"partition\":\"debug\"", 0, &err); /* the request's wins */
  assert_string_equal(str(s, "state"), "queued");
  d = wait_for(ctx, id_of(s), "done", 30);
  assert_string_equal(str(d, "state"), "done");
  cJSON_Delete(d), cJSON_Delete(s);
  unsetenv("CDPLAN_SLURM_PARTITION");
  assert_null(submit_raw(ctx, ",\"gpu_type\":\"-x\"", -SVC_BAD_FIELD, &err));
  assert_string_equal(err.field, "gpu_type");
  assert_null(submit_raw(ctx, ",\"qos\":\"a b\"", -SVC_BAD_FIELD, &err));
  assert_string_equal(err.field, "qos");
}

static void test_val_slurm__cancel_long_job(void **state) {
  api_ctx *ctx = *state;
  char ids[16], *out = NULL;
  svc_err err;
  int id = submit_id(ctx, "{\"n\":1,\"sleep_ms\":120000}");
  cJSON *d = wait_for(ctx, id, "running", 30);
  assert_string_equal(str(d, "state"), "running");
  cJSON_Delete(d);
  snprintf(ids, sizeof ids, "%d", id);
  assert_int_equal(api_validation_cancel(ctx, ids, &out, &err), 0);
  free(out);
  /* Slurm agrees, and polling afterwards leaves it cancelled. */
  sleep(1);
  d = get(ctx, id);
  assert_string_equal(str(d, "state"), "cancelled");
  cJSON_Delete(d);
  assert_int_equal(api_validation_cancel(ctx, ids, &out, &err), -SVC_CONFLICT);
}

static void test_val_slurm__failing_job(void **state) {
  api_ctx *ctx = *state;
  int id = submit_id(ctx, "{\"n\":5,\"fail\":true}");
  cJSON *d = wait_for(ctx, id, "failed", 30);
  assert_string_equal(str(d, "state"), "failed");
  const char *note = str(d, "note");
  if (!strstr(note, "failing as asked")) fprintf(stderr, "note: %s\n", note);
  assert_non_null(strstr(note, "FAILED"));
  assert_non_null(strstr(note, "failing as asked"));
  cJSON_Delete(d);
}

static void test_val_slurm__restart_reconciles(void **state) {
  api_ctx *ctx = *state;
  svc_err err;
  int active = -1;
  int id = submit_id(ctx, "{\"n\":10,\"sleep_ms\":3000}");
  cJSON *d = wait_for(ctx, id, "running", 30);
  assert_string_equal(str(d, "state"), "running");
  cJSON_Delete(d);
  /* The "server" goes away while the job runs, and a new one starts. */
  api_ctx_free(ctx);
  *state = NULL;
  assert_int_equal(api_ctx_new(&ctx, db_path, &err), 0);
  *state = ctx;
  assert_int_equal(api_validation_tick(ctx, &active, &err), 0);
  assert_int_equal(active, 1);
  double end = svc_now() + 30;
  while (active > 0 && svc_now() < end) {
    usleep(200000);
    assert_int_equal(api_validation_tick(ctx, &active, &err), 0);
  }
  d = get(ctx, id);
  assert_string_equal(str(d, "state"), "done");
  cJSON_Delete(d);
}

static int slurm_present(void) {
  const char *conf = getenv("SLURM_CONF");
  if (access("/usr/bin/sbatch", X_OK) != 0 && system("command -v sbatch >/dev/null 2>&1") != 0)
    return 0;
  if (!conf || access(conf, R_OK) != 0) {
    /* Installed but not started: the fixture failed, which is a failure. */
    fprintf(stderr, "SLURM_CONF (%s) is not readable: did slurm_up.sh run?\n", conf ? conf : "");
    exit(1);
  }
  return 1;
}

int main(void) {
  if (!slurm_present()) {
    fprintf(stderr, "slurm is not installed: skip\n");
    return 77;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_val_slurm__selftest_result_within_30s, setup, teardown),
      cmocka_unit_test_setup_teardown(test_val_slurm__gpu_job_gets_fake_gres, setup, teardown),
      cmocka_unit_test_setup_teardown(test_val_slurm__placement_options, setup, teardown),
      cmocka_unit_test_setup_teardown(test_val_slurm__cancel_long_job, setup, teardown),
      cmocka_unit_test_setup_teardown(test_val_slurm__failing_job, setup, teardown),
      cmocka_unit_test_setup_teardown(test_val_slurm__restart_reconciles, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
