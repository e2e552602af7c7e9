/* The validation routes over HTTP: a CPU self-test dispatched to the local
 * backend runs to a stored result; the runner's results POST is authorized
 * by the job's own token and may carry more than the 1 MiB request limit;
 * cancel; unknown ids; a job's host paths and pids only for admin tokens. */
#include <stdio.h>
#include <unistd.h>

#include "api/api_tokens.h"
#include "test_http_common.h"

/* Submit body; return the job id and (when tok is given) its token. */
static long submit(http_fixture *f, const char *body, char *tok, size_t toksz) {
  http_resp r;
  char loc[64];
  assert_int_equal(fixture_send(f, "POST", "/v1/validations", body, NULL, &r), 0);
  if (r.status != 201) fail_msg("submit: %d %s", r.status, r.body);
  cJSON *doc = fixture_json(&r);
  long id = (long)cJSON_GetObjectItem(doc, "id")->valuedouble;
  snprintf(tok, toksz, "%s", cJSON_GetObjectItem(doc, "token")->valuestring);
  assert_non_null(http_header(&r, "Location", loc, sizeof loc));
  char want[64];
  snprintf(want, sizeof want, "/v1/validations/%ld", id);
  assert_string_equal(loc, want);
  cJSON_Delete(doc);
  http_resp_dispose(&r);
  return id;
}

/* Poll the job until its state is final (at most ~30 s). */
static cJSON *wait_final(http_fixture *f, long id) {
  char path[64];
  snprintf(path, sizeof path, "/v1/validations/%ld", id);
  for (int i = 0; i < 300; i++) {
    http_resp r;
    assert_int_equal(fixture_get(f, path, &r), 0);
    expect_status(&r, 200);
    cJSON *doc = fixture_json(&r);
    http_resp_dispose(&r);
    const char *st = cJSON_GetObjectItem(doc, "state")->valuestring;
    if (strcmp(st, "queued") && strcmp(st, "running")) return doc;
    cJSON_Delete(doc);
    usleep(100 * 1000);
  }
  fail_msg("job %ld never finished", id);
  return NULL;
}

static void test_http_validations__local_selftest_runs_to_a_stored_result(void **state) {
  http_fixture *f = *state;
  char tok[128];
  long id = submit(f,
                   "{\"kind\":\"cpu_selftest\",\"hardware\":\"h200\",\"backend\":\"local\","
                   "\"params\":{\"n\":1000}}",
                   tok, sizeof tok);
  cJSON *job = wait_final(f, id);
  assert_string_equal(cJSON_GetObjectItem(job, "state")->valuestring, "done");
  cJSON *res = cJSON_GetObjectItem(job, "result");
  assert_non_null(res);
  /* sum of 0..999 computed by the runner */
  assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(res, "result"), "sum")->valuedouble,
                   499500);
  cJSON_Delete(job);
  http_resp r;
  assert_int_equal(fixture_get(f, "/v1/validations", &r), 0);
  expect_status(&r, 200);
  assert_non_null(strstr(r.body, "\"cpu_selftest\""));
  http_resp_dispose(&r);
}

static void test_http_validations__results_post_needs_job_token_and_takes_big_bodies(void **state) {
  http_fixture *f = *state;
  char tok[128], path[96], hdr[192];
  long id = submit(f,
                   "{\"kind\":\"cpu_selftest\",\"hardware\":\"h200\",\"backend\":\"local\","
                   "\"params\":{\"n\":10,\"sleep_ms\":20000}}",
                   tok, sizeof tok);
  snprintf(path, sizeof path, "/v1/validations/%ld/results", id);
  /* A result of 2 MiB: over the 1 MiB request limit, under the results'. */
  size_t n = 2u << 20;
  char *big = malloc(n + 256);
  size_t len = (size_t)snprintf(big, 256,
                                "{\"id\":%ld,\"kind\":\"cpu_selftest\",\"ok\":true,"
                                "\"result\":{\"n\":10,\"sum\":45},\"log\":\"",
                                id);
  memset(big + len, 'x', n);
  len += n;
  len += (size_t)snprintf(big + len, 8, "\"}");
  http_resp r;
  const char *no_token[] = {"Content-Type: application/json", NULL};
  assert_int_equal(http_request(f->port, "POST", path, no_token, big, len, &r), 0);
  expect_status(&r, 401);
  http_resp_dispose(&r);
  const char *wrong[] = {"Content-Type: application/json", "X-Job-Token: not-the-token", NULL};
  assert_int_equal(http_request(f->port, "POST", path, wrong, big, len, &r), 0);
  expect_status(&r, 403);
  http_resp_dispose(&r);
  snprintf(hdr, sizeof hdr, "X-Job-Token: %s", tok);
  const char *right[] = {"Content-Type: application/json", hdr, NULL};
  assert_int_equal(http_request(f->port, "POST", path, right, big, len, &r), 0);
  if (r.status != 200) fail_msg("results: %d %s", r.status, r.body);
  assert_non_null(strstr(r.body, "\"state\":\"done\""));
  http_resp_dispose(&r);
  /* Final now: a second post is refused. */
  assert_int_equal(http_request(f->port, "POST", path, right, big, len, &r), 0);
  expect_status(&r, 409);
  http_resp_dispose(&r);
  free(big);
}

static void test_http_validations__cancel_and_unknown_ids(void **state) {
  http_fixture *f = *state;
  char tok[128], path[96];
  long id = submit(f,
                   "{\"kind\":\"cpu_selftest\",\"hardware\":\"h200\",\"backend\":\"local\","
                   "\"params\":{\"n\":10,\"sleep_ms\":20000}}",
                   tok, sizeof tok);
  http_resp r;
  snprintf(path, sizeof path, "/v1/validations/%ld/cancel", id);
  assert_int_equal(fixture_send(f, "POST", path, NULL, NULL, &r), 0);
  expect_status(&r, 200);
  assert_non_null(strstr(r.body, "\"state\":\"cancelled\""));
  http_resp_dispose(&r);
  expect_send(f, "POST", path, NULL, NULL, 409);
  expect_get(f, "/v1/validations/999999", 404);
  expect_get(f, "/v1/validations/abc", 400);
  assert_int_equal(fixture_send(f, "POST", "/v1/validations",
                                "{\"kind\":\"teleport\",\"hardware\":\"h200\"}", NULL, &r),
                   0);
  expect_status(&r, 400);
  cJSON *doc = fixture_json(&r);
  assert_string_equal(fixture_err_field(doc), "kind");
  cJSON_Delete(doc);
  http_resp_dispose(&r);
}

static char *make_token(http_fixture *f, const char *scopes) {
  char *out = NULL;
  svc_err err;
  assert_int_equal(api_token_create(f->api, scopes, "test", &out, &err), 0);
  cJSON *doc = cJSON_Parse(out);
  char *secret = strdup(cJSON_GetObjectItemCaseSensitive(doc, "token")->valuestring);
  cJSON_Delete(doc);
  free(out);
  return secret;
}

static int has(const cJSON *doc, const char *key) { return cJSON_GetObjectItem(doc, key) != NULL; }

/* workdir (an absolute path on the server) and pid: admin tokens see them,
 * a read or dispatch token does not, in every job document. */
static void test_http_validations__private_fields_need_admin(void **state) {
  http_fixture *f = *state;
  char *rd = make_token(f, "read"), *disp = make_token(f, "dispatch"),
       *admin = make_token(f, "admin");
  char path[96];
  cJSON *s = expect_json(f, "POST", "/v1/validations",
                         "{\"kind\":\"cpu_selftest\",\"hardware\":\"h200\",\"backend\":\"local\","
                         "\"params\":{\"n\":10,\"sleep_ms\":20000}}",
                         disp, 201);
  long id = (long)cJSON_GetObjectItem(s, "id")->valuedouble;
  assert_string_equal(cJSON_GetObjectItem(s, "state")->valuestring, "running");
  assert_false(has(s, "workdir") || has(s, "pid"));
  cJSON_Delete(s);
  snprintf(path, sizeof path, "/v1/validations/%ld", id);
  cJSON *d = expect_json(f, "GET", path, NULL, rd, 200);
  assert_false(has(d, "workdir") || has(d, "pid"));
  assert_true(has(d, "history")); /* the rest is there */
  cJSON_Delete(d);
  d = expect_json(f, "GET", "/v1/validations", NULL, rd, 200);
  cJSON *first = cJSON_GetArrayItem(cJSON_GetObjectItem(d, "validations"), 0);
  assert_non_null(first);
  assert_false(has(first, "workdir") || has(first, "pid"));
  cJSON_Delete(d);
  d = expect_json(f, "GET", path, NULL, admin, 200);
  assert_true(cJSON_IsString(cJSON_GetObjectItem(d, "workdir")));
  assert_true(cJSON_GetObjectItem(d, "pid")->valuedouble > 0);
  cJSON_Delete(d);
  d = expect_json(f, "GET", "/v1/validations", NULL, admin, 200);
  assert_true(has(cJSON_GetArrayItem(cJSON_GetObjectItem(d, "validations"), 0), "workdir"));
  cJSON_Delete(d);
  snprintf(path, sizeof path, "/v1/validations/%ld/cancel", id);
  d = expect_json(f, "POST", path, NULL, disp, 200);
  assert_false(has(d, "workdir"));
  cJSON_Delete(d);
  free(rd);
  free(disp);
  free(admin);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_http_validations__local_selftest_runs_to_a_stored_result,
                                      setup_open, teardown),
      cmocka_unit_test_setup_teardown(
          test_http_validations__results_post_needs_job_token_and_takes_big_bodies, setup_open,
          teardown),
      cmocka_unit_test_setup_teardown(test_http_validations__cancel_and_unknown_ids, setup_open,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_http_validations__private_fields_need_admin, setup_open,
                                      teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
