/* api/plan: POST /v1/plans, GET /v1/plans/{id}, POST /v1/compare and
 * `cdplan plan` / `cdplan compare`.
 *
 * A plan call runs the planner for up to the request's time_limit_s
 * (default 10 s, at most 300 s): call it off the HTTP threads (the
 * server's planning queue). Every function is thread-safe on a shared
 * api_ctx; planning itself holds no lock (GLPK runs thread-local).
 * Results are stored in hwdb under a random 16-hex-digit id that the
 * answer carries as "id".
 */
#ifndef CDPLAN_API_PLAN_H
#define CDPLAN_API_PLAN_H

#include <stddef.h>

#include "api/api.h"
#include "planner/planner.h"

#define API_PLAN_MAX_TIME_S 300.0

/* POST /v1/plans: {"workload","hardware","cluster","baseline","knobs",
 * "constraints","objective","time_limit_s",...} -> the plan document
 * (docs/planner.md). 422 (INFEASIBLE) names the constraint that cannot be
 * met. progress (may be NULL) sees the solver's incumbent and bound. */
int api_plan(api_ctx *ctx, const char *body, size_t len, char **out, svc_err *err);
int api_plan_ex(api_ctx *ctx, const char *body, size_t len, plan_progress_fn progress,
                void *progress_user, char **out, svc_err *err);
/* The same as a typed reply: r->id is the stored plan's id. */
int api_plan_reply(api_ctx *ctx, const char *body, size_t len, api_reply *r, svc_err *err);

/* GET /v1/plans/{id}: the stored document; 404 when unknown. */
int api_plan_get(api_ctx *ctx, const char *id, char **out, svc_err *err);
/* The same as a typed reply: r->id the plan's id, r->state its validation's
 * least final side ("running", "queued"; "" when both jobs are final or the
 * plan has no validation): api_reply_active says whether to poll again. */
int api_plan_get_reply(api_ctx *ctx, const char *id, api_reply *r, svc_err *err);

/* GET /v1/plans?limit=&after=: the stored plans, newest first, as
 * {"plans":[{"id","created_at","hardware","objective","step_ms",
 * "samples_per_s","peak_memory_bytes","hbm_usable_bytes","gap","gain",
 * "recipe":{"gpus","batch_per_gpu","precision"}}],"next_after":ID|null}.
 * limit (query text, NULL: API_PLAN_LIST_DEFAULT) is an integer in
 * 1..API_PLAN_LIST_MAX; after (NULL: from the newest) is the id of the last
 * plan of the previous page. 400 naming "limit" or "after" otherwise. */
#define API_PLAN_LIST_DEFAULT 20
#define API_PLAN_LIST_MAX 100
int api_plan_list(api_ctx *ctx, const char *limit, const char *after, char **out, svc_err *err);

/* POST /v1/plans/{id}/validations: {"backend":"local|slurm|bundle"?,
 * "gpus"?,"timeout_s"?,"steps"?,"warmup"?, Slurm's "gpu_type",
 * "partition","account","qos","constraint"?} (an empty body is {}) ->
 * two dlrm_step runner jobs, the plan's baseline and planned recipes on its
 * workload (a compare: the direct port and the target's plan), linked to
 * the plan: {"plan","kind","jobs":[job document + "side"],"validation"}.
 * 404 unknown plan, 400 naming the field. GET /v1/plans/{id} then carries
 * "validation" (api/plan_validate.c). */
typedef struct {
  const char *backend;    /* overrides the body's when not NULL (the CLI) */
  const char *bundle_dir; /* bundle: each side's folder DIR/baseline, DIR/planned */
  unsigned flags;         /* API_VAL_HIDE_PRIVATE for the job documents */
} api_plan_val_opts;
int api_plan_validate(api_ctx *ctx, const char *id, const char *body, size_t len,
                      const api_plan_val_opts *opts, char **out, svc_err *err);

/* POST /v1/compare: {"workload","from","to","cluster","baseline",...} ->
 * the recipe tuned for "from" run unchanged on "to" (the direct port)
 * against the plan made for "to", with the gain split by change. */
int api_compare(api_ctx *ctx, const char *body, size_t len, char **out, svc_err *err);
int api_compare_ex(api_ctx *ctx, const char *body, size_t len, plan_progress_fn progress,
                   void *progress_user, char **out, svc_err *err);

#endif
