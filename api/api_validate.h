/* api: validation runs (/v1/validations, `cdplan validate ...`). JSON in
 * and out like every api operation: *out is a malloc'd JSON document the
 * caller frees; on failure a negative svc_code with err filled.
 *
 * Ids arrive as the text of a URL segment or CLI argument ("12") and are
 * checked here (400 bad_field "id" when not a positive integer, 404 when
 * no such job). The job document:
 *   {"id","kind","hardware","backend","state","params","prediction"?,
 *    "timeout_s","gpus","created_at","started_at"?,"finished_at"?,
 *    "note"?,"slurm_job_id"?,"pid"?,"workdir"?,
 *    "history":[{"state","at","note"}],"result"?}
 * (times are unix seconds; "pid" and "workdir" are left out with
 * API_VAL_HIDE_PRIVATE). Submission adds "token" (shown once; only its
 * hash is kept) and "job" (the runner's job.json document).
 */
#ifndef CDPLAN_API_VALIDATE_H
#define CDPLAN_API_VALIDATE_H

#include <stddef.h>
#include <stdint.h>

#include "api/api.h"

/* The largest result accepted (a sweep's result outgrows API_MAX_BODY):
 * the server should allow this much on POST /v1/validations/{id}/results. */
#define API_MAX_RESULT (16u << 20)

/* What a job document leaves out (the flags of the _flags variants; the
 * plain functions pass 0 and show everything, as the local CLI does).
 * HIDE_PRIVATE: "pid" and "workdir", this host's processes and paths; the
 * server shows them to admin callers only. */
#define API_VAL_HIDE_PRIVATE 1u

/* Options of a submission. backend and bundle_dir: only a local caller
 * (the CLI) may give them; flags: as above, for the reply. */
typedef struct {
  const char *backend;    /* overrides the body's "backend" when not NULL */
  const char *bundle_dir; /* bundle: write job.json, runner.py, run.sh here */
  unsigned flags;         /* API_VAL_HIDE_PRIVATE, ... */
  /* The largest body taken, 0 = API_MAX_BODY; a local caller may raise it
   * up to API_MAX_RESULT (bench/report_join submits 80,000 cases). */
  size_t max_body;
} api_val_opts;

/* POST /v1/validations: {"kind","hardware","params":{},"prediction"?,
 * "backend":"local|slurm|bundle" (default local),"timeout_s"?,"gpus"?}.
 * 201 with the job document. A job whose backend could not start it is
 * returned with state "failed" and the reason in "note". */
int api_validation_submit(api_ctx *ctx, const char *body, size_t len, char **out, svc_err *err);
/* The same with CLI options (opts may be NULL). */
int api_validation_submit_opts(api_ctx *ctx, const char *body, size_t len, const api_val_opts *opts,
                               char **out, svc_err *err);
/* The same as a typed reply: r->id is the job's id, r->state its state. */
int api_validation_submit_reply(api_ctx *ctx, const char *body, size_t len,
                                const api_val_opts *opts, api_reply *r, svc_err *err);
/* GET /v1/validations/{id}: the job, polled against its backend first. */
int api_validation_get(api_ctx *ctx, const char *id, char **out, svc_err *err);
int api_validation_get_flags(api_ctx *ctx, const char *id, unsigned flags, char **out,
                             svc_err *err);
/* The same as a typed reply: r->id is the job's id, r->state its state. */
int api_validation_get_reply(api_ctx *ctx, const char *id, unsigned flags, api_reply *r,
                             svc_err *err);
/* GET /v1/validations: {"validations":[job without history/result...]},
 * newest first (at most 200); one reconcile pass runs first
 * (api_validation_tick). Results are not read at all. */
int api_validation_list(api_ctx *ctx, char **out, svc_err *err);

/* Jobs per state now, in the order of api_validation_states (/metrics). */
#define API_VAL_NSTATES 5
extern const char *const api_validation_states[API_VAL_NSTATES];
int api_validation_state_counts(api_ctx *ctx, int64_t counts[API_VAL_NSTATES], svc_err *err);
int api_validation_list_flags(api_ctx *ctx, unsigned flags, char **out, svc_err *err);
/* POST /v1/validations/{id}/cancel: the cancelled job; 409 when final. */
int api_validation_cancel(api_ctx *ctx, const char *id, char **out, svc_err *err);
int api_validation_cancel_flags(api_ctx *ctx, const char *id, unsigned flags, char **out,
                                svc_err *err);
/* POST /v1/validations/{id}/results: body is the runner's result; token
 * is the job's token (header X-Job-Token): 401 when missing, 403 when
 * wrong, 409 when the job is already final. Returns the job. */
int api_validation_results(api_ctx *ctx, const char *id, const char *token, const char *body,
                           size_t len, char **out, svc_err *err);
int api_validation_results_flags(api_ctx *ctx, const char *id, const char *token, const char *body,
                                 size_t len, unsigned flags, char **out, svc_err *err);
/* `cdplan validate ingest RESULT.json`: a trusted local caller; the job
 * id comes from the result's "id". Returns the job. */
int api_validation_ingest(api_ctx *ctx, const char *body, size_t len, char **out, svc_err *err);
/* GET /v1/validations/{id}/report[?calibrate=1]: predicted against
 * measured per case with error statistics; calibrate != 0 also fits a new
 * calibration version from the result (api_calibrate) and includes its
 * report under "calibration". 409 while the job has no result. */
int api_validation_report(api_ctx *ctx, const char *id, int calibrate, char **out, svc_err *err);
/* One bounded reconcile pass (val_reconcile_pass): jobs past their
 * deadline fail, the local and Slurm jobs checked least recently are
 * polled (at most VAL_TICK_MAX jobs in all), and queued local jobs start
 * while fewer than $CDPLAN_LOCAL_MAX run. Call once when the server starts
 * (state lost by a restart is recovered from Slurm and the job files) and
 * then every few seconds. *active (may be NULL) gets how many remain. */
int api_validation_tick(api_ctx *ctx, int *active, svc_err *err);
/* Job following (api/job_follow.c): *following is 1 when this process
 * follows the store's validation jobs (it holds the replicas' leader lock,
 * or it is the embedded store's only user), 0 when another replica does.
 * refresh: ask the store now (else an answer up to 1 s old is reused).
 * The tick and the reads that would poll a job skip polling when 0. */
int api_validation_following(api_ctx *ctx, int refresh, int *following, svc_err *err);
/* The last answer, for /metrics: 1 leader, 0 another replica leads, -1 no
 * election (embedded store), -2 not asked yet. */
int api_validation_leader(api_ctx *ctx);

/* GET /v1/validations/{id}/bundle: a bundle job's folder (job.json,
 * run.sh, runner.py and the MANIFEST modules) as a ustar archive in *data
 * (malloc'd, *len bytes); 409 for a job of another backend, 404 when the
 * folder is gone. */
int api_validation_bundle(api_ctx *ctx, const char *id, char **data, size_t *len, svc_err *err);

#endif
