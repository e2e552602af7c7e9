/* Job following among service replicas (issue 29): of several `cdplan
 * serve` processes on one PostgreSQL store, only the one holding the
 * store's leader lock (hwdb_follow_jobs) polls Slurm and the job files,
 * expires jobs and starts local ones; the others answer from the store.
 * An embedded SQLite store has one owner, which always follows.
 *
 * The answer is kept for FOLLOW_TTL_MS so that reads which would poll a
 * job (GET /v1/validations/{id}) do not each ask the database; the serve
 * loop's tick (every 2 s) refreshes it, so a replica takes over within
 * one tick plus FOLLOW_TTL_MS of the leader's session ending.
 */
#include "api/api_int.h"
#include "api/api_validate.h"

#define FOLLOW_TTL_MS 1000

static int64_t now_ms(void) { return (int64_t)(svc_now() * 1000.0); }

int api_validation_following(api_ctx *ctx, int refresh, int *following, svc_err *err) {
  int64_t at = atomic_load(&ctx->follow_at_ms), now = now_ms();
  int state = atomic_load(&ctx->follow_state), rc = 0;
  if (refresh || !at || now - at >= FOLLOW_TTL_MS) {
    int fresh = HWDB_FOLLOW_OTHER;
    rc = hwdb_follow_jobs(ctx->db, &fresh, err);
    /* A failed check (the store unreachable) counts as not leading. */
    if (rc) fresh = HWDB_FOLLOW_OTHER;
    int was = atomic_exchange(&ctx->follow_state, fresh);
    atomic_store(&ctx->follow_at_ms, now);
    if (at && was != fresh && fresh == HWDB_FOLLOW_ELECTED)
      svc_log(SVC_LOG_INFO, "job following: this replica took the leader lock; it follows "
                            "validation jobs now");
    else if (!at && fresh == HWDB_FOLLOW_ELECTED)
      svc_log(SVC_LOG_INFO, "job following: this replica holds the leader lock");
    else if (was == HWDB_FOLLOW_ELECTED && fresh != HWDB_FOLLOW_ELECTED)
      svc_log(SVC_LOG_WARN, "job following: this replica lost the leader lock");
    state = fresh;
  }
  *following = state != HWDB_FOLLOW_OTHER;
  return rc;
}

int api_validation_leader(api_ctx *ctx) {
  if (!atomic_load(&ctx->follow_at_ms)) return -2;
  int state = atomic_load(&ctx->follow_state);
  return state == HWDB_FOLLOW_SOLE ? -1 : state == HWDB_FOLLOW_ELECTED;
}
