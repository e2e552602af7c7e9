/* results_admit.c: the job-token check of a results upload, apart from
 * the upload itself (api_validation_results checks it again with the
 * body, so the two can never disagree about what is stored). */
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#include "api/api_results.h"
#include "validate/validate.h"

int api_validation_token_check(api_ctx *ctx, const char *ids, const char *token, svc_err *err) {
  char *end = NULL;
  long long v = ids && *ids >= '1' && *ids <= '9' && strlen(ids) <= 15 ? strtoll(ids, &end, 10) : 0;
  if (v <= 0 || !end || *end)
    return svc_err_set(err, SVC_BAD_FIELD, "id", "a validation id is a positive integer");
  return val_token_check(ctx->db, (int64_t)v, token, err);
}
