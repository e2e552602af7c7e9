/* metrics.c: figures the server's /metrics reads from the store (the
 * server never touches hwdb itself). */
#include "api/api_int.h"
#include "api/api_validate.h"

const char *const api_validation_states[API_VAL_NSTATES] = {"queued", "running", "done", "failed",
                                                            "cancelled"};

int api_validation_state_counts(api_ctx *ctx, int64_t counts[API_VAL_NSTATES], svc_err *err) {
  return hwdb_job_count_states(ctx->db, api_validation_states, counts, API_VAL_NSTATES, err);
}
