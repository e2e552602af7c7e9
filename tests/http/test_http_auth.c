/* Bearer auth with a token configured: catalog writes need it (401 with
 * WWW-Authenticate when absent, 403 when wrong), reads and compute
 * endpoints stay open, and a refused write changes nothing. */
#include "test_http_common.h"

#define TOKEN "s3cret-token"

static int setup_token(void **state) { return setup_with_token(state, TOKEN); }

static void test_http_auth__write_without_token_is_401(void **state) {
  http_fixture *f = *state;
  http_resp r;
  char *body = descriptor_body("test-gpu");
  assert_int_equal(fixture_send(f, "POST", "/v1/hardware", body, NULL, &r), 0);
  expect_status(&r, 401);
  expect_header(&r, "WWW-Authenticate", "Bearer", 1);
  cJSON *doc = fixture_json(&r);
  assert_string_equal(fixture_err_code(doc), "unauthorized");
  assert_null(strstr(r.body, TOKEN));
  cJSON_Delete(doc);
  http_resp_dispose(&r);

  /* Another scheme is no Bearer token either. */
  const char *basic[] = {"Content-Type: application/json", "Authorization: Basic czNjcmV0", NULL};
  assert_int_equal(http_request(f->port, "DELETE", "/v1/hardware/h200", basic, NULL, 0, &r), 0);
  expect_status(&r, 401);
  http_resp_dispose(&r);
  free(body);
}

static void test_http_auth__wrong_token_is_403(void **state) {
  http_fixture *f = *state;
  http_resp r;
  char *body = descriptor_body("h200");
  static const char *const wrong[] = {"s3cret-toke", "s3cret-tokenx", "S3CRET-TOKEN", ""};
  for (size_t i = 0; i < sizeof wrong / sizeof wrong[0]; i++) {
    assert_int_equal(fixture_send(f, "PUT", "/v1/hardware/h200", body, wrong[i], &r), 0);
    expect_status(&r, 403);
    cJSON *doc = fixture_json(&r);
    assert_string_equal(fixture_err_code(doc), "forbidden");
    cJSON_Delete(doc);
    http_resp_dispose(&r);
  }
  expect_send(f, "DELETE", "/v1/hardware/h200", NULL, "nope", 403);
  expect_get(f, "/v1/hardware/h200", 200); /* still there */
  free(body);
}

static void test_http_auth__right_token_writes(void **state) {
  http_fixture *f = *state;
  char *body = descriptor_body("test-gpu");
  expect_send(f, "POST", "/v1/hardware", body, TOKEN, 201);
  expect_send(f, "DELETE", "/v1/hardware/test-gpu", NULL, TOKEN, 204);
  free(body);
}

static void test_http_auth__reads_and_compute_stay_open(void **state) {
  http_fixture *f = *state;
  http_resp r;
  expect_get(f, "/v1/hardware", 200);
  expect_get(f, "/healthz", 200);
  const char *est =
      "{\"hardware\":\"h200\",\"ops\":[{\"op\":\"gemm\",\"m\":256,\"n\":256,\"k\":256,"
      "\"dtype\":\"bf16\"}]}";
  assert_int_equal(fixture_send(f, "POST", "/v1/estimate", est, NULL, &r), 0);
  assert_int_not_equal(r.status, 401);
  assert_int_not_equal(r.status, 403);
  http_resp_dispose(&r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_http_auth__write_without_token_is_401, setup_token,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_http_auth__wrong_token_is_403, setup_token, teardown),
      cmocka_unit_test_setup_teardown(test_http_auth__right_token_writes, setup_token, teardown),
      cmocka_unit_test_setup_teardown(test_http_auth__reads_and_compute_stay_open, setup_token,
                                      teardown),
  };
  return cmocka_run_group_tests_name("http_auth", tests, NULL, NULL);
}
