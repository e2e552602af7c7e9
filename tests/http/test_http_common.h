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

static inline int setup_open(void **state) {
  http_fixture *f = calloc(1, sizeof *f);
  if (!f || fixture_start(f, NULL) < 0) return -1;
  *state = f;
  return 0;
}

static inline int teardown(void **state) {
  http_fixture *f = *state;
  if (f) fixture_stop(f);
  free(f);
  return 0;
}

/* A request whose status must be want; the response is returned. */
#define expect_status(resp, want)                                                                  \
  do {                                                                                             \
    if ((resp)->status != (want))                                                                  \
      print_error("status %d, want %d; body: %s\n", (resp)->status, (want),                        \
                  (resp)->body ? (resp)->body : "(none)");                                         \
    assert_int_equal((resp)->status, (want));                                                      \
  } while (0)

#endif
