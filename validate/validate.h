/* validate: validation runs. A job (kind, hardware, params, the prediction
 * it checks) is stored in hwdb and dispatched to a backend:
 *   local  - the runner (validate/gpu/runner.py) spawned on this host with
 *            posix_spawn, stdout to a result file, a timeout;
 *   slurm  - a batch script submitted with sbatch, followed with
 *            scontrol/squeue, cancelled with scancel;
 *   bundle - nothing is started: the job and the runner are written to a
 *            folder that runs anywhere; the result comes back by ingest.
 * Results come from the job's output file, or are stored by the caller
 * (an HTTP POST checked against the job's token, or `cdplan validate
 * ingest`).
 *
 * validate/ knows no JSON library: params, predictions and results are
 * opaque text produced and checked by api/. The one piece of JSON it
 * writes itself (job.json) embeds the api's canonical params text and
 * escapes every string it adds. Nothing from a job ever reaches a shell:
 * programs are spawned from argv arrays, and the one script we write
 * (Slurm's batch script) names only quoted file paths.
 */
#ifndef CDPLAN_VALIDATE_H
#define CDPLAN_VALIDATE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "common/common.h"
#include "hwdb/hwdb.h"

#define VAL_TOKEN_LEN 64           /* hex characters of a job token */
#define VAL_MAX_RESULT (16u << 20) /* bytes of result we read back */
#define VAL_MAX_TIMEOUT_S (7 * 86400)

/* The api's check of a result text (a JSON object whose "id", when
 * present, is this job's). Returns 0 or a negative svc_code with err set;
 * the message becomes the failed job's note. */
typedef int (*val_check_fn)(void *arg, int64_t id, const char *text, size_t len, svc_err *err);

/* Where things are and how to talk to them. val_cfg_init fills defaults
 * from the environment; tests override fields. */
typedef struct {
  char workdir[PATH_MAX]; /* job folders live under it: WORKDIR/job-ID */
  char runner[PATH_MAX];  /* runner.py */
  char python[PATH_MAX];  /* the interpreter (absolute when found on PATH) */
  double cmd_timeout_s;   /* sbatch, scontrol, squeue, scancel each */
  val_check_fn check;     /* may be NULL: any non-empty output is accepted */
  void *check_arg;
} val_cfg;

/* A submission; strings are borrowed. */
typedef struct {
  const char *kind;       /* gemm_sweep|kernel_sweep|memory_ops|step|cpu_selftest */
  const char *hw;         /* hardware name */
  const char *params;     /* JSON text of an object (canonical, from api/) */
  const char *prediction; /* JSON text or NULL */
  const char *backend;    /* local|slurm|bundle */
  int64_t timeout_s;      /* 0 = default (1 h) */
  int64_t gpus;           /* -1 = default (0 for cpu_selftest, else 1) */
  const char *bundle_dir; /* bundle: write the folder here (NULL = write nothing) */
} val_spec;

/* Error statistics over relative errors (|pred - meas| / meas). */
typedef struct {
  size_t n;
  double median, p90, max, mean_signed;
} val_stats;

/* Defaults: workdir $CDPLAN_VAL_DIR, else DB_FILE.validations beside the
 * database, else $TMPDIR/cdplan-validations-PID (for :memory:); runner
 * $CDPLAN_RUNNER, else CDPLAN_SOURCE_DIR/validate/gpu/runner.py, else
 * ./validate/gpu/runner.py; python $CDPLAN_PYTHON, else python3 on PATH. */
int val_cfg_init(val_cfg *cfg, const char *db_file, svc_err *err);

int val_kind_valid(const char *kind);
int val_backend_valid(const char *backend);
int val_state_final(const char *state);

/* Store the job, start it on its backend, and give back its id and the
 * token (VAL_TOKEN_LEN hex + NUL) that a results POST must carry; only
 * the token's hash is stored. A job that cannot start is stored as failed
 * (with why) and its id is still returned: the error is the job's state,
 * not the submission's. */
int val_submit(hwdb *db, const val_cfg *cfg, const val_spec *spec, int64_t *id,
               char token[VAL_TOKEN_LEN + 1], svc_err *err);
/* Bring job id's state up to date with its backend (reap a finished local
 * process, enforce its timeout, ask Slurm); a final job is left alone. */
int val_poll(hwdb *db, const val_cfg *cfg, int64_t id, svc_err *err);
/* val_poll every queued or running job: on start (a restarted server
 * loses nothing) and on a timer. *active (may be NULL) gets how many are
 * still in flight. One job's trouble is logged, not returned. */
int val_reconcile(hwdb *db, const val_cfg *cfg, int *active, svc_err *err);
/* Stop the job (kill its process group / scancel) and mark it cancelled;
 * 409 when it is already final. */
int val_cancel(hwdb *db, const val_cfg *cfg, int64_t id, svc_err *err);
/* Store a result for job id (checked with cfg->check) and mark it done;
 * 409 when the job is already final. */
int val_store_result(hwdb *db, const val_cfg *cfg, int64_t id, const char *text, size_t len,
                     svc_err *err);
/* 403 unless token is job id's token (constant-time on the hashes). */
int val_token_check(hwdb *db, int64_t id, const char *token, svc_err *err);

/* job.json for the runner: {"kind":..,"id":ID,"params":PARAMS}; malloc'd. */
char *val_job_json(const char *kind, int64_t id, const char *params);
/* Slurm's batch script at path: runs PYTHON RUNNER JOBFILE with each path
 * single-quoted; paths holding control characters are refused. */
int val_write_script(const char *path, const char *python, const char *runner, const char *jobfile,
                     svc_err *err);
/* The bundle folder: job.json, runner.py (a copy) and run.sh. */
int val_write_bundle(const char *dir, const char *runner, int64_t id, const char *job_json,
                     svc_err *err);

/* Statistics of n relative errors (signed; |e| is used for median, p90
 * and max). Percentiles interpolate linearly between order statistics. */
void val_stats_compute(const double *rel, size_t n, val_stats *out);

#endif
