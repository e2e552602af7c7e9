/* Shared by the libFuzzer targets: one api_ctx on an in-memory database,
 * made on the first input and kept (a fresh database per input would
 * spend the run seeding the catalog), and quiet logs. Each target feeds
 * the input, as a request body, to one decoder or operation and frees
 * what it returns; ASan/UBSan and libFuzzer's leak check judge the rest.
 */
#ifndef CDPLAN_FUZZ_COMMON_H
#define CDPLAN_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "api/api.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static inline api_ctx *fuzz_ctx(void) {
  static api_ctx *ctx;
  if (!ctx) {
    svc_log_threshold = SVC_LOG_ERROR - 1; /* silent */
    svc_err err;
    if (api_ctx_new(&ctx, ":memory:", &err) < 0) abort();
  }
  return ctx;
}

/* Run op on the input and free its answer. */
typedef int (*fuzz_op)(api_ctx *, const char *, size_t, char **, svc_err *);
static inline int fuzz_run(fuzz_op op, const uint8_t *data, size_t size) {
  char *out = NULL;
  svc_err err;
  op(fuzz_ctx(), (const char *)data, size, &out, &err);
  free(out);
  return 0;
}

#endif
