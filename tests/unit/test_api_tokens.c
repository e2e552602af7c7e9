/* API tokens (api/tokens.c over hwdb/tokens.c on a real SQLite database):
 * a token is shown once and stored only as its SHA-256, verifies to its
 * scopes until revoked, and the scope rule (admin implies all, any scope
 * reads) holds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "api/api_tokens.h"
#include "hwdb/hwdb.h"

static int setup(void **state) {
  api_ctx *ctx = NULL;
  if (api_ctx_new(&ctx, ":memory:", NULL) < 0) return -1;
  *state = ctx;
  return 0;
}

static int teardown(void **state) {
  api_ctx_free(*state);
  return 0;
}

/* Create a token; returns its secret (malloc'd) and id. */
static char *create(api_ctx *ctx, const char *scopes, const char *name, int64_t *id) {
  char *out = NULL;
  svc_err err;
  assert_int_equal(api_token_create(ctx, scopes, name, &out, &err), 0);
  cJSON *doc = cJSON_Parse(out);
  assert_non_null(doc);
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(doc, "token");
  assert_true(cJSON_IsString(t));
  char *secret = strdup(t->valuestring);
  *id = (int64_t)cJSON_GetObjectItemCaseSensitive(doc, "id")->valuedouble;
  cJSON_Delete(doc);
  free(out);
  return secret;
}

static void test_api_tokens__created_once_and_stored_hashed(void **state) {
  api_ctx *ctx = *state;
  int64_t id = 0;
  char *secret = create(ctx, "plan, read", "ci", &id);
  assert_int_equal(strlen(secret), 68);
  assert_memory_equal(secret, "cdp_", 4);
  assert_true(id > 0);

  char *list = NULL;
  assert_int_equal(api_token_list(ctx, &list, NULL), 0);
  assert_null(strstr(list, secret));
  assert_null(strstr(list, secret + 4));
  char hash[65];
  svc_sha256_hex(secret, strlen(secret), hash);
  assert_null(strstr(list, hash)); /* not even the hash leaves the api */
  assert_non_null(strstr(list, "\"scopes\":[\"read\",\"plan\"]"));
  assert_non_null(strstr(list, "\"revoked_at\":null"));
  free(list);
  free(secret);
}

static void test_api_tokens__verify_until_revoked(void **state) {
  api_ctx *ctx = *state;
  int64_t id = 0, got = 0, n = 0;
  unsigned scopes = 0;
  svc_err err;
  char *secret = create(ctx, "dispatch", NULL, &id);
  assert_int_equal(api_tokens_active(ctx, &n, NULL), 0);
  assert_int_equal(n, 1);
  assert_int_equal(api_token_verify(ctx, secret, strlen(secret), &scopes, &got, &err), 0);
  assert_int_equal(scopes, API_SCOPE_DISPATCH);
  assert_int_equal(got, id);

  /* One character off, a prefix, and nothing at all are all refused. */
  secret[10] ^= 1;
  assert_int_equal(api_token_verify(ctx, secret, strlen(secret), &scopes, &got, &err),
                   -SVC_FORBIDDEN);
  secret[10] ^= 1;
  assert_int_equal(api_token_verify(ctx, secret, strlen(secret) - 1, &scopes, &got, &err),
                   -SVC_FORBIDDEN);
  assert_int_equal(api_token_verify(ctx, secret, 0, &scopes, &got, &err), -SVC_FORBIDDEN);

  char *out = NULL;
  assert_int_equal(api_token_revoke(ctx, id, &out, &err), 0);
  free(out);
  assert_int_equal(api_token_revoke(ctx, id, &out, &err), 0); /* idempotent */
  free(out);
  assert_int_equal(api_token_revoke(ctx, id + 100, &out, &err), -SVC_NOT_FOUND);
  assert_int_equal(api_token_verify(ctx, secret, strlen(secret), &scopes, &got, &err),
                   -SVC_FORBIDDEN);
  assert_int_equal(api_tokens_active(ctx, &n, NULL), 0);
  assert_int_equal(n, 0);
  free(secret);
}

static void test_api_tokens__bad_scopes_and_names(void **state) {
  api_ctx *ctx = *state;
  char *out = NULL;
  svc_err err;
  assert_int_equal(api_token_create(ctx, "", NULL, &out, &err), -SVC_MISSING_FIELD);
  assert_int_equal(api_token_create(ctx, "read,root", NULL, &out, &err), -SVC_BAD_FIELD);
  assert_string_equal(err.field, "scope");
  assert_int_equal(api_token_create(ctx, "read", "has space", &out, &err), -SVC_BAD_FIELD);
  assert_string_equal(err.field, "name");
  assert_null(out);
  unsigned m = 0;
  assert_int_equal(api_scopes_parse("admin,,read", &m, &err), 0);
  assert_int_equal(m, API_SCOPE_ADMIN | API_SCOPE_READ);
}

static void test_api_tokens__scope_rule(void **state) {
  assert_true(api_scope_allows(API_SCOPE_ADMIN, API_SCOPE_DISPATCH));
  assert_true(api_scope_allows(API_SCOPE_ADMIN, API_SCOPE_PLAN));
  assert_true(api_scope_allows(API_SCOPE_PLAN, API_SCOPE_READ));
  assert_true(api_scope_allows(API_SCOPE_DISPATCH, API_SCOPE_READ));
  assert_false(api_scope_allows(API_SCOPE_READ, API_SCOPE_PLAN));
  assert_false(api_scope_allows(API_SCOPE_PLAN, API_SCOPE_DISPATCH));
  assert_false(api_scope_allows(API_SCOPE_PLAN | API_SCOPE_DISPATCH, API_SCOPE_ADMIN));
  assert_false(api_scope_allows(0, API_SCOPE_READ));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_api_tokens__created_once_and_stored_hashed, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_api_tokens__verify_until_revoked, setup, teardown),
      cmocka_unit_test_setup_teardown(test_api_tokens__bad_scopes_and_names, setup, teardown),
      cmocka_unit_test(test_api_tokens__scope_rule),
  };
  return cmocka_run_group_tests_name("api_tokens", tests, NULL, NULL);
}
