/* Token scopes from the database (cdplan token create): once one active
 * token exists, every /v1 route needs a token with its scope (reads any
 * valid token), health/metrics/docs stay open, the --token-file token
 * still acts as admin, and a revoked token stops working within the
 * server's one-second cache. */
#include <stdio.h>
#include <unistd.h>

#include "api/api_tokens.h"
#include "server/server_int.h"
#include "test_http_common.h"

#define FILE_TOKEN "file-token-123"

typedef struct {
  http_fixture f;
  char *read, *plan, *admin; /* secrets */
  int64_t read_id;
} scoped;

static char *make(api_ctx *ctx, const char *scopes, int64_t *id) {
  char *out = NULL;
  svc_err err;
  assert_int_equal(api_token_create(ctx, scopes, "test", &out, &err), 0);
  cJSON *doc = cJSON_Parse(out);
  char *secret = strdup(cJSON_GetObjectItemCaseSensitive(doc, "token")->valuestring);
  if (id) *id = (int64_t)cJSON_GetObjectItemCaseSensitive(doc, "id")->valuedouble;
  cJSON_Delete(doc);
  free(out);
  return secret;
}

/* Tokens are made before the first request, so the server's first look
 * at the database already sees them. */
static int start(void **state, const char *file_token) {
  scoped *s = calloc(1, sizeof *s);
  if (!s) return -1;
  if (fixture_start(&s->f, file_token) < 0) {
    fixture_stop(&s->f);
    free(s);
    return -1;
  }
  s->read = make(s->f.api, "read", &s->read_id);
  s->plan = make(s->f.api, "plan", NULL);
  s->admin = make(s->f.api, "admin", NULL);
  *state = s;
  return 0;
}

static int setup_db_tokens(void **state) { return start(state, NULL); }
static int setup_db_and_file(void **state) { return start(state, FILE_TOKEN); }

static int teardown_scoped(void **state) {
  scoped *s = *state;
  fixture_stop(&s->f);
  free(s->read);
  free(s->plan);
  free(s->admin);
  free(s);
  return 0;
}

static int send_status(scoped *s, const char *method, const char *path, const char *body,
                       const char *token) {
  http_resp r;
  assert_int_equal(fixture_send(&s->f, method, path, body, token, &r), 0);
  int st = r.status;
  if (st == 401 || st == 403) {
    cJSON *doc = fixture_json(&r);
    assert_string_equal(fixture_err_code(doc), st == 401 ? "unauthorized" : "forbidden");
    assert_string_equal(fixture_err_field(doc), "Authorization");
    if (token) assert_null(strstr(r.body, token)); /* the secret never comes back */
    cJSON_Delete(doc);
  }
  http_resp_dispose(&r);
  return st;
}

static const char est[] = "{\"hardware\":\"h200\",\"ops\":[{\"op\":\"gemm\",\"m\":256,\"n\":256,"
                          "\"k\":256,\"dtype\":\"bf16\"}]}";

static void test_http_scopes__reads_need_a_token_once_tokens_exist(void **state) {
  scoped *s = *state;
  assert_int_equal(send_status(s, "GET", "/v1/hardware", NULL, NULL), 401);
  assert_int_equal(send_status(s, "POST", "/v1/estimate", est, NULL), 401);
  assert_int_equal(send_status(s, "GET", "/v1/hardware", NULL, "cdp_not-a-token"), 403);
  assert_int_equal(send_status(s, "GET", "/v1/hardware", NULL, s->read), 200);
  assert_int_equal(send_status(s, "GET", "/v1/hardware/h200", NULL, s->plan), 200);
  assert_int_equal(send_status(s, "POST", "/v1/estimate", est, s->read), 200);
  assert_int_equal(send_status(s, "POST", "/v1/estimate", est, s->admin), 200);
  /* Open whatever the tokens: probes, metrics, the API document. */
  assert_int_equal(send_status(s, "GET", "/healthz", NULL, NULL), 200);
  assert_int_equal(send_status(s, "GET", "/metrics", NULL, NULL), 200);
  assert_int_equal(send_status(s, "GET", "/openapi.yaml", NULL, NULL), 200);
}

static void test_http_scopes__catalog_writes_need_admin(void **state) {
  scoped *s = *state;
  char *body = descriptor_body("scoped-gpu");
  http_resp r;
  assert_int_equal(send_status(s, "POST", "/v1/hardware", body, NULL), 401);
  assert_int_equal(fixture_send(&s->f, "POST", "/v1/hardware", body, s->read, &r), 0);
  expect_status(&r, 403);
  assert_non_null(strstr(r.body, "admin"));
  http_resp_dispose(&r);
  assert_int_equal(send_status(s, "POST", "/v1/hardware", body, s->plan), 403);
  assert_int_equal(send_status(s, "GET", "/v1/hardware/scoped-gpu", NULL, s->read), 404);
  assert_int_equal(send_status(s, "POST", "/v1/hardware", body, s->admin), 201);
  assert_int_equal(send_status(s, "PUT", "/v1/hardware/scoped-gpu", body, s->plan), 403);
  assert_int_equal(send_status(s, "DELETE", "/v1/hardware/scoped-gpu", NULL, s->read), 403);
  assert_int_equal(send_status(s, "DELETE", "/v1/hardware/scoped-gpu", NULL, s->admin), 204);
  free(body);
}

/* Every row of the table is held to its scope: a route needing plan or
 * dispatch refuses a read token, whatever the lead adds later. */
static void test_http_scopes__every_route_refuses_a_missing_scope(void **state) {
  scoped *s = *state;
  size_t n;
  const srv_route *rt = srv_routes(&n);
  for (size_t i = 0; i < n; i++) {
    char path[256];
    size_t o = 0;
    /* Any value for a {param}: auth runs before the handler. */
    for (const char *p = rt[i].path; *p && o + 3 < sizeof path; p++) {
      if (*p == '{') {
        path[o++] = '1';
        while (*p && *p != '}') p++;
      } else {
        path[o++] = *p;
      }
    }
    path[o] = '\0';
    if (rt[i].scope == SRV_SCOPE_OPEN) continue;
    int st = send_status(s, rt[i].method, path, rt[i].body ? "{}" : NULL, NULL);
    if (st != 401) print_error("%s %s without a token: %d\n", rt[i].method, rt[i].path, st);
    assert_int_equal(st, 401);
    if (rt[i].scope != SRV_SCOPE_READ) {
      st = send_status(s, rt[i].method, path, rt[i].body ? "{}" : NULL, s->read);
      if (st != 403) print_error("%s %s with read: %d\n", rt[i].method, rt[i].path, st);
      assert_int_equal(st, 403);
    }
  }
}

static void test_http_scopes__file_token_is_admin_beside_db_tokens(void **state) {
  scoped *s = *state;
  char *body = descriptor_body("file-gpu");
  assert_int_equal(send_status(s, "GET", "/v1/hardware", NULL, NULL), 401);
  assert_int_equal(send_status(s, "GET", "/v1/hardware", NULL, FILE_TOKEN), 200);
  assert_int_equal(send_status(s, "POST", "/v1/hardware", body, FILE_TOKEN), 201);
  assert_int_equal(send_status(s, "POST", "/v1/hardware", body, FILE_TOKEN "x"), 403);
  free(body);
}

static void test_http_scopes__revoked_token_stops_working(void **state) {
  scoped *s = *state;
  char *out = NULL;
  assert_int_equal(send_status(s, "GET", "/v1/hardware", NULL, s->read), 200);
  assert_int_equal(api_token_revoke(s->f.api, s->read_id, &out, NULL), 0);
  free(out);
  usleep(1100 * 1000); /* past the server's cache of verified tokens */
  assert_int_equal(send_status(s, "GET", "/v1/hardware", NULL, s->read), 403);
  assert_int_equal(send_status(s, "GET", "/v1/hardware", NULL, s->plan), 200);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_http_scopes__reads_need_a_token_once_tokens_exist,
                                      setup_db_tokens, teardown_scoped),
      cmocka_unit_test_setup_teardown(test_http_scopes__catalog_writes_need_admin, setup_db_tokens,
                                      teardown_scoped),
      cmocka_unit_test_setup_teardown(test_http_scopes__every_route_refuses_a_missing_scope,
                                      setup_db_tokens, teardown_scoped),
      cmocka_unit_test_setup_teardown(test_http_scopes__file_token_is_admin_beside_db_tokens,
                                      setup_db_and_file, teardown_scoped),
      cmocka_unit_test_setup_teardown(test_http_scopes__revoked_token_stops_working,
                                      setup_db_tokens, teardown_scoped),
  };
  return cmocka_run_group_tests_name("http_scopes", tests, NULL, NULL);
}
