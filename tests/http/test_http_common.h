/* cmocka glue shared by the transport tests: a fixture per test, so that
 * each test sees a freshly seeded catalog. */
#ifndef CDPLAN_TESTS_HTTP_COMMON_H
#define CDPLAN_TESTS_HTTP_COMMON_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "http_fixture.h"

/* Start a fixture (token NULL: writes open), or with cfg's token, threads
 * and limits when cfg is not NULL. cmocka skips teardown when setup fails,
 * so a failed start cleans up here. */
static inline int setup_fixture(void **state, const char *token, const srv_config *cfg) {
  http_fixture *f = calloc(1, sizeof *f);
  if (!f) return -1;
  if ((cfg ? fixture_start_with(f, cfg) : fixture_start(f, token)) < 0) {
    fixture_stop(f);
    free(f);
    return -1;
  }
  *state = f;
  return 0;
}

static inline int setup_with_token(void **state, const char *token) {
  return setup_fixture(state, token, NULL);
}

static inline int setup_with_config(void **state, srv_config cfg) {
  return setup_fixture(state, NULL, &cfg);
}

static inline int setup_open(void **state) { return setup_with_token(state, NULL); }

static inline int teardown(void **state) {
  http_fixture *f = *state;
  if (f) fixture_stop(f);
  free(f);
  return 0;
}

/* data/hardware/h200.json renamed to name, printed as a request body
 * (malloc'd). */
static inline char *descriptor_body(const char *name) {
  cJSON *d = fixture_descriptor(name);
  assert_non_null(d);
  char *s = fixture_print(d);
  cJSON_Delete(d);
  return s;
}

/* A request whose status must be want; the response is returned. */
#define expect_status(resp, want)                                                                  \
  do {                                                                                             \
    if ((resp)->status != (want))                                                                  \
      print_error("status %d, want %d; body: %s\n", (resp)->status, (want),                        \
                  (resp)->body ? (resp)->body : "(none)");                                         \
    assert_int_equal((resp)->status, (want));                                                      \
  } while (0)

/* A request through the fixture whose status must be want; the response
 * is dropped. */
#define expect_send(f, method, path, body, token, want)                                            \
  do {                                                                                             \
    http_resp r_;                                                                                  \
    assert_int_equal(fixture_send((f), (method), (path), (body), (token), &r_), 0);                \
    expect_status(&r_, (want));                                                                    \
    http_resp_dispose(&r_);                                                                        \
  } while (0)
#define expect_get(f, path, want)                                                                  \
  do {                                                                                             \
    http_resp r_;                                                                                  \
    assert_int_equal(fixture_get((f), (path), &r_), 0);                                            \
    expect_status(&r_, (want));                                                                    \
    http_resp_dispose(&r_);                                                                        \
  } while (0)

/* r has header name, whose value is want (prefix: starts with want). */
static inline void expect_header(const http_resp *r, const char *name, const char *want,
                                 int prefix) {
  char v[256];
  assert_non_null(http_header(r, name, v, sizeof v));
  if (prefix)
    assert_memory_equal(v, want, strlen(want));
  else
    assert_string_equal(v, want);
}

/* GET path into *r (the caller disposes it): status 200 and Content-Type
 * exactly type. */
static inline void expect_typed_get(const http_fixture *f, const char *path, const char *type,
                                    http_resp *r) {
  assert_int_equal(fixture_get(f, path, r), 0);
  expect_status(r, 200);
  expect_header(r, "Content-Type", type, 0);
}

/* Send with token (NULL: none); the parsed body, which must be JSON (status
 * must be want). The caller deletes it. */
static inline cJSON *expect_json(const http_fixture *f, const char *method, const char *path,
                                 const char *body, const char *token, int want) {
  http_resp r;
  assert_int_equal(fixture_send(f, method, path, body, token, &r), 0);
  expect_status(&r, want);
  cJSON *doc = fixture_json(&r);
  http_resp_dispose(&r);
  assert_non_null(doc);
  return doc;
}

#endif
