/* validate: validation runs. A job (kind, hardware, params, the prediction
 * it checks) is stored in hwdb and dispatched to a backend:
 *   local  - the runner (validate/gpu/runner.py) spawned on this host with
 *            posix_spawn, stdout to a result file, a timeout;
 *   slurm  - a batch script submitted with sbatch, followed with
 *            scontrol/squeue, cancelled with scancel;
 *   bundle - nothing is started: the job and the runner package are
 *            written to a folder that runs anywhere (the caller's, or the
 *            job's own, served as a tarball); the result comes back by
 *            ingest or a results POST.
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
#define VAL_LOCAL_MAX_DEFAULT 2 /* local runners at once unless $CDPLAN_LOCAL_MAX says */
#define VAL_LOCAL_MAX_LIMIT 256
#define VAL_TICK_MAX 64 /* jobs one reconcile pass expires or polls, at most */

/* The api's check of a result text (a JSON object whose "id", when
 * present, is this job's). Returns 0 or a negative svc_code with err set;
 * the message becomes the failed job's note. */
typedef int (*val_check_fn)(void *arg, int64_t id, const char *text, size_t len, svc_err *err);

/* Slurm placement of a job: each NULL or "" leaves Slurm's default; sent
 * as sbatch --gres=gpu:TYPE:N, --partition, --account, --qos, --constraint
 * (argv elements, never through a shell; api/ checks the characters). */
typedef struct {
  const char *gpu_type, *partition, *account, *qos, *constraint;
} val_slurm_opts;

/* Where things are and how to talk to them. val_cfg_init fills defaults
 * from the environment; tests override fields. */
typedef struct {
  char workdir[PATH_MAX]; /* job folders live under it: WORKDIR/job-ID */
  char runner[PATH_MAX];  /* runner.py */
  char python[PATH_MAX];  /* the interpreter (absolute when found on PATH) */
  double cmd_timeout_s;   /* sbatch, scontrol, squeue, scancel each */
  int local_max;          /* local runners at once ($CDPLAN_LOCAL_MAX); more wait queued */
  val_check_fn check;     /* may be NULL: any non-empty output is accepted */
  void *check_arg;
  val_slurm_opts slurm; /* the server's defaults ($CDPLAN_SLURM_GPU_TYPE, ...) */
} val_cfg;

/* A submission; strings are borrowed. */
typedef struct {
  const char
      *kind; /* gemm_sweep|kernel_sweep|memory_ops|step|transformer_step|dlrm_step|cpu_selftest */
  const char *hw;         /* hardware name */
  const char *params;     /* JSON text of an object (canonical, from api/) */
  const char *prediction; /* JSON text or NULL */
  const char *backend;    /* local|slurm|bundle */
  int64_t timeout_s;      /* 0 = default (1 h) */
  int64_t gpus;           /* -1 = default (0 for cpu_selftest, else 1) */
  const char *bundle_dir; /* bundle: write the folder here (NULL = the job's own folder) */
  val_slurm_opts slurm;   /* slurm: per job; a NULL member takes cfg->slurm's */
} val_spec;

/* Error statistics over relative errors (|pred - meas| / meas). */
typedef struct {
  size_t n;
  double median, p90, max, mean_signed;
} val_stats;

/* Defaults: workdir $CDPLAN_VAL_DIR, else DB_FILE.validations beside the
 * database, else $TMPDIR/cdplan-validations-PID (for :memory:); runner
 * $CDPLAN_RUNNER, else CDPLAN_SOURCE_DIR/validate/gpu/runner.py, else
 * ./validate/gpu/runner.py; python $CDPLAN_PYTHON, else python3 on PATH;
 * Slurm defaults from $CDPLAN_SLURM_GPU_TYPE, _PARTITION, _ACCOUNT, _QOS
 * and _CONSTRAINT (the environment's strings, borrowed);
 * local_max $CDPLAN_LOCAL_MAX (1 to VAL_LOCAL_MAX_LIMIT; another value is
 * an error), else VAL_LOCAL_MAX_DEFAULT. */
int val_cfg_init(val_cfg *cfg, const char *db_file, svc_err *err);

/* Job kinds: validate/gpu/kinds.def, the list the runner reads too. */
int val_kind_valid(const char *kind);
/* GPUs a job of the kind asks for by default (0: the runner needs Python alone). */
int val_kind_gpus(const char *kind);
/* The result member a case compares when it names no metric ("ms" if unknown). */
const char *val_kind_metric(const char *kind);
/* "a, b, ... or z": the kinds in kinds.def's order, into buf (truncated to size). */
void val_kind_names(char *buf, size_t size);
int val_backend_valid(const char *backend);
int val_state_final(const char *state);

/* Store the job, start it on its backend (a local job waits queued while
 * cfg->local_max local runners are active; val_local_fill, run by polls
 * and the reconcile tick, starts it when a slot frees, oldest first), and
 * give back its id and the token (VAL_TOKEN_LEN hex + NUL) that a results
 * POST must carry; only the token's hash is stored. A job that cannot start is stored as failed
 * (with why) and its id is still returned: the error is the job's state,
 * not the submission's. */
int val_submit(hwdb *db, const val_cfg *cfg, const val_spec *spec, int64_t *id,
               char token[VAL_TOKEN_LEN + 1], svc_err *err);
/* Bring job id's state up to date with its backend (reap a finished local
 * process, enforce its timeout, ask Slurm, expire a bundle job past its
 * timeout_s since submission); a final job is left alone. Polling a local
 * job also starts queued local jobs when a slot is free. */
int val_poll(hwdb *db, const val_cfg *cfg, int64_t id, svc_err *err);
/* One reconcile pass: on start (a restarted server loses nothing) and on
 * a timer. It fails the active jobs past their deadline (found by an
 * indexed query, however old), polls the local and Slurm jobs checked
 * least recently (bundle jobs have nothing to poll: they end when their
 * result is stored, or by their deadline), at most VAL_TICK_MAX jobs in
 * all, and starts queued local jobs while fewer than cfg->local_max run.
 * One job's trouble is logged, not returned. */
typedef struct {
  int expired;    /* jobs past their deadline handled */
  int polled;     /* jobs polled against their backend */
  int started;    /* queued local jobs started */
  int64_t active; /* jobs still queued or running after the pass */
} val_tick;
int val_reconcile_pass(hwdb *db, const val_cfg *cfg, val_tick *out, svc_err *err);
/* The same; *active (may be NULL) gets how many are still in flight. */
int val_reconcile(hwdb *db, const val_cfg *cfg, int *active, svc_err *err);
/* Start queued local jobs, oldest first, while fewer than cfg->local_max
 * local runners are active; *started (may be NULL) gets how many. */
int val_local_fill(hwdb *db, const val_cfg *cfg, int *started, svc_err *err);
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
/* The bundle folder dir of job id as a ustar archive (validate/tar.c): its
 * regular files under cdplan-job-ID/; *out malloc'd. 404 when the folder
 * is gone or empty. */
int val_bundle_tar(const char *dir, int64_t id, char **out, size_t *len, svc_err *err);

/* Statistics of n relative errors (signed; |e| is used for median, p90
 * and max). Percentiles interpolate linearly between order statistics. */
void val_stats_compute(const double *rel, size_t n, val_stats *out);

#endif
