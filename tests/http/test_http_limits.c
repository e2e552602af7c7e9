/* Transport limits and routing: 413 (with and without Content-Length),
 * 414, 405 with Allow, 415, 404 for unknown paths, and the static files
 * (types, index, traversal and symlink escapes refused). */
#include <stdio.h>

#include "test_http_common.h"

static void check_error(const http_resp *r, int status, const char *code) {
  expect_status(r, status);
  cJSON *doc = fixture_json(r);
  assert_non_null(doc);
  assert_string_equal(fixture_err_code(doc), code);
  cJSON_Delete(doc);
}

static void test_http_limits__body_over_1mib_is_413(void **state) {
  http_fixture *f = *state;
  http_resp r;
  size_t n = 2u << 20;
  char *big = malloc(n + 1);
  assert_non_null(big);
  memset(big, ' ', n);
  big[0] = '{';
  big[n - 1] = '}';
  big[n] = '\0';
  assert_int_equal(fixture_send(f, "POST", "/v1/hardware", big, NULL, &r), 0);
  check_error(&r, 413, "too_large");
  http_resp_dispose(&r);
  assert_int_equal(fixture_send(f, "POST", "/v1/estimate", big, NULL, &r), 0);
  check_error(&r, 413, "too_large");
  http_resp_dispose(&r);
  free(big);
}

/* Without Content-Length the size is only known while reading: the
 * server drops the excess and answers 413 at the end. */
static void test_http_limits__chunked_body_over_1mib_is_413(void **state) {
  http_fixture *f = *state;
  http_resp r;
  char head[256];
  const size_t chunk = 64 * 1024, nchunks = 24; /* 1.5 MiB */
  size_t cap = nchunks * (chunk + 16) + 8, len = 0;
  char *body = malloc(cap);
  assert_non_null(body);
  for (size_t i = 0; i < nchunks; i++) {
    len += (size_t)snprintf(body + len, cap - len, "%zx\r\n", chunk);
    memset(body + len, ' ', chunk);
    len += chunk;
    memcpy(body + len, "\r\n", 2);
    len += 2;
  }
  memcpy(body + len, "0\r\n\r\n", 5);
  len += 5;
  snprintf(head, sizeof head,
           "POST /v1/estimate HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
           "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n");
  assert_int_equal(http_exchange(f->port, head, body, len, &r), 0);
  check_error(&r, 413, "too_large");
  http_resp_dispose(&r);
  free(body);
}

static void test_http_limits__long_url_is_414(void **state) {
  http_fixture *f = *state;
  http_resp r;
  char path[3100];
  int n = snprintf(path, sizeof path, "/healthz?pad=");
  memset(path + n, 'a', sizeof path - (size_t)n - 1);
  path[sizeof path - 1] = '\0';
  assert_int_equal(fixture_get(f, path, &r), 0);
  check_error(&r, 414, "uri_too_long");
  http_resp_dispose(&r);
  /* Just under the limit is served (health ignores the query). */
  path[2000] = '\0';
  expect_get(f, path, 200);
}

static void test_http_limits__wrong_method_is_405_with_allow(void **state) {
  http_fixture *f = *state;
  http_resp r;
  char allow[128];
  assert_int_equal(fixture_send(f, "PATCH", "/v1/hardware/h200", "{}", NULL, &r), 0);
  check_error(&r, 405, "method_not_allowed");
  assert_non_null(http_header(&r, "Allow", allow, sizeof allow));
  assert_non_null(strstr(allow, "GET"));
  assert_non_null(strstr(allow, "PUT"));
  assert_non_null(strstr(allow, "DELETE"));
  assert_null(strstr(allow, "POST"));
  http_resp_dispose(&r);

  assert_int_equal(fixture_send(f, "POST", "/healthz", "{}", NULL, &r), 0);
  check_error(&r, 405, "method_not_allowed");
  expect_header(&r, "Allow", "GET, HEAD", 0);
  http_resp_dispose(&r);

  assert_int_equal(fixture_get(f, "/v1/estimate", &r), 0);
  check_error(&r, 405, "method_not_allowed");
  expect_header(&r, "Allow", "POST", 0);
  http_resp_dispose(&r);
}

static void test_http_limits__non_json_content_type_is_415(void **state) {
  http_fixture *f = *state;
  http_resp r;
  const char *text[] = {"Content-Type: text/plain", NULL};
  const char *none[] = {NULL};
  const char *charset[] = {"Content-Type: application/json; charset=utf-8", NULL};
  const char *lookalike[] = {"Content-Type: application/jsonx", NULL};
  const char *body = "{\"hardware\":\"h200\",\"ops\":[]}";
  assert_int_equal(http_request(f->port, "POST", "/v1/estimate", text, body, strlen(body), &r), 0);
  check_error(&r, 415, "unsupported_media");
  http_resp_dispose(&r);
  assert_int_equal(http_request(f->port, "PUT", "/v1/hardware/h200", none, body, strlen(body), &r),
                   0);
  check_error(&r, 415, "unsupported_media");
  http_resp_dispose(&r);
  assert_int_equal(http_request(f->port, "POST", "/v1/hardware", lookalike, body, strlen(body), &r),
                   0);
  check_error(&r, 415, "unsupported_media");
  http_resp_dispose(&r);
  /* Parameters are fine: whatever the api says, it is not 415. */
  assert_int_equal(http_request(f->port, "POST", "/v1/estimate", charset, body, strlen(body), &r),
                   0);
  assert_int_not_equal(r.status, 415);
  assert_true(r.status > 0);
  http_resp_dispose(&r);
}

static void test_http_limits__unknown_path_is_404_json(void **state) {
  http_fixture *f = *state;
  http_resp r;
  assert_int_equal(fixture_get(f, "/v2/nothing", &r), 0);
  check_error(&r, 404, "not_found");
  http_resp_dispose(&r);
  assert_int_equal(fixture_send(f, "POST", "/v1/nothing", "{}", NULL, &r), 0);
  check_error(&r, 404, "not_found");
  http_resp_dispose(&r);
  assert_int_equal(fixture_get(f, "/v1/hardware/h200/extra", &r), 0);
  check_error(&r, 404, "not_found");
  http_resp_dispose(&r);
}

static void test_http_static__index_files_and_types(void **state) {
  http_fixture *f = *state;
  http_resp r;
  expect_typed_get(f, "/", "text/html; charset=utf-8", &r);
  assert_non_null(strstr(r.body, "<title>cdplan</title>"));
  http_resp_dispose(&r);

  expect_typed_get(f, "/app.js", "text/javascript; charset=utf-8", &r);
  http_resp_dispose(&r);

  expect_typed_get(f, "/openapi.yaml", "application/yaml", &r);
  assert_memory_equal(r.body, "openapi: 3.1", 12);
  http_resp_dispose(&r);

  assert_int_equal(fixture_get(f, "/missing.js", &r), 0);
  check_error(&r, 404, "not_found");
  http_resp_dispose(&r);
}

static void test_http_static__traversal_is_refused(void **state) {
  http_fixture *f = *state;
  static const char *const paths[] = {
      "/../outside.txt", "/%2e%2e/outside.txt", "/x/../../outside.txt", "/.hidden",
      "/escape.txt",     "//etc/passwd",        "/..%2foutside.txt"};
  for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
    http_resp r;
    assert_int_equal(fixture_get(f, paths[i], &r), 0);
    if (r.status != 404) print_error("%s: %d\n", paths[i], r.status);
    check_error(&r, 404, "not_found");
    assert_null(strstr(r.body, "secret"));
    http_resp_dispose(&r);
  }
}

/* A /v1 route refuses a query parameter it does not read (400, the name
 * in "field"), where a typo was ignored (?vendr=amd gave the whole
 * catalog); the names it reads still work; the open routes (health, the
 * dashboard's files) take any query. */
static void test_http_limits__unknown_query_parameter_is_400(void **state) {
  http_fixture *f = *state;
  static const char *const bad[][2] = {
      {"/v1/hardware?vendr=amd", "vendr"},
      {"/v1/plans?limit=2&offset=4", "offset"},
      {"/v1/hardware/h200?verbose=1", "verbose"},
      {"/v1/plans?limit,after=1", "limit,after"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    http_resp r;
    assert_int_equal(fixture_get(f, bad[i][0], &r), 0);
    check_error(&r, 400, "bad_field");
    cJSON *doc = fixture_json(&r);
    const cJSON *e = cJSON_GetObjectItem(doc, "error");
    const char *field = cJSON_GetStringValue(cJSON_GetObjectItem(e, "field"));
    if (!field || strcmp(field, bad[i][1])) print_error("%s: field %s\n", bad[i][0], field);
    assert_non_null(field);
    assert_string_equal(field, bad[i][1]);
    cJSON_Delete(doc);
    http_resp_dispose(&r);
  }
  expect_get(f, "/v1/hardware?vendor=amd", 200);
  expect_get(f, "/v1/plans?limit=2", 200);
  expect_get(f, "/healthz?probe=1", 200);
  expect_get(f, "/index.html?v=2", 200);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_http_limits__body_over_1mib_is_413, setup_open,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_http_limits__chunked_body_over_1mib_is_413, setup_open,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_http_limits__long_url_is_414, setup_open, teardown),
      cmocka_unit_test_setup_teardown(test_http_limits__unknown_query_parameter_is_400, setup_open,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_http_limits__wrong_method_is_405_with_allow, setup_open,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_http_limits__non_json_content_type_is_415, setup_open,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_http_limits__unknown_path_is_404_json, setup_open,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_http_static__index_files_and_types, setup_open,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_http_static__traversal_is_refused, setup_open, teardown),
  };
  return cmocka_run_group_tests_name("http_limits", tests, NULL, NULL);
}
