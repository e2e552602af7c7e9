/* Validation jobs across backends: configuration, submission, polling,
 * cancelling, storing results, tokens.
 *
 * Invariants: a job's files live in WORKDIR/job-ID (job.json, result.json,
 * stderr.txt, job.sh); every state change goes through hwdb's
 * compare-and-set, so whichever of the server timer, a status request or
 * a results POST sees the end first decides it, and the others find the
 * job final and leave it alone.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "validate/validate_int.h"

#define DEFAULT_TIMEOUT_S 3600

/* The runner's kinds, declared once in the runner package (job_kinds.py reads the same
 * file, and the bundle carries it). */
typedef struct {
  const char *name, *metric;
  int gpus;
} kind_info;
static const kind_info kinds[] = {
#define VAL_KIND(name, gpus, metric) {#name, #metric, gpus},
#include "validate/gpu/kinds.def"
#undef VAL_KIND
};
#define N_KINDS (sizeof kinds / sizeof kinds[0])
static const char *const backends[] = {"local", "slurm", "bundle", NULL};

static int in_list(const char *const *list, const char *s) {
  for (; s && *list; list++)
    if (!strcmp(*list, s)) return 1;
  return 0;
}

static const kind_info *kind_find(const char *s) {
  for (size_t i = 0; s && i < N_KINDS; i++)
    if (!strcmp(kinds[i].name, s)) return &kinds[i];
  return NULL;
}

int val_kind_valid(const char *kind) { return kind_find(kind) != NULL; }
int val_kind_gpus(const char *kind) {
  const kind_info *k = kind_find(kind);
  return k ? k->gpus : 1;
}
const char *val_kind_metric(const char *kind) {
  const kind_info *k = kind_find(kind);
  return k ? k->metric : "ms";
}
void val_kind_names(char *buf, size_t size) {
  size_t n = 0;
  if (!size) return;
  buf[0] = '\0';
  for (size_t i = 0; i < N_KINDS && n < size; i++) {
    const char *sep = i == 0 ? "" : i + 1 == N_KINDS ? " or " : ", ";
    int w = snprintf(buf + n, size - n, "%s%s", sep, kinds[i].name);
    if (w < 0) break;
    n += (size_t)w;
  }
}
int val_backend_valid(const char *backend) { return in_list(backends, backend); }
int val_state_final(const char *s) {
  return !strcmp(s, "done") || !strcmp(s, "failed") || !strcmp(s, "cancelled");
}

/* name found on PATH as an absolute path into out; 0 when found. */
static int which(const char *name, char *out, size_t size) {
  const char *path = getenv("PATH");
  char dir[PATH_MAX];
  while (path && *path) {
    size_t n = strcspn(path, ":");
    if (n > 0 && n < sizeof dir) {
      memcpy(dir, path, n);
      dir[n] = '\0';
      if (!val_join(out, size, dir, name) && access(out, X_OK) == 0 && out[0] == '/') return 0;
    }
    path += n + (path[n] == ':');
  }
  return -1;
}

/* a + b + c into buf; -1 when it does not fit (the check also keeps the
 * compiler's truncation warning quiet). */
static int cat3(char *buf, size_t size, const char *a, const char *b, const char *c) {
  int n = snprintf(buf, size, "%s%s%s", a, b, c);
  return n < 0 || (size_t)n >= size ? -1 : 0;
}

int val_cfg_init(val_cfg *cfg, const char *db_file, svc_err *err) {
  const char *env;
  char cwd[PATH_MAX], base[PATH_MAX + 2];
  int bad = 0;
  memset(cfg, 0, sizeof *cfg);
  cfg->cmd_timeout_s = 20;
  if (!getcwd(cwd, sizeof cwd)) svc_strlcpy(cwd, "/tmp", sizeof cwd);
  /* Jobs outlive the process that submitted them: every path is absolute. */
  cat3(base, sizeof base, cwd, "/", "");
  if ((env = getenv("CDPLAN_VAL_DIR")) && *env)
    bad |= cat3(cfg->workdir, sizeof cfg->workdir, env[0] == '/' ? "" : base, env, "");
  else if (db_file && *db_file && strcmp(db_file, ":memory:"))
    bad |= cat3(cfg->workdir, sizeof cfg->workdir, db_file[0] == '/' ? "" : base, db_file,
                ".validations");
  else {
    char pid[32];
    snprintf(pid, sizeof pid, "/cdplan-validations-%d", (int)getpid());
    bad |= cat3(cfg->workdir, sizeof cfg->workdir, (env = getenv("TMPDIR")) && *env ? env : "/tmp",
                pid, "");
  }
  if ((env = getenv("CDPLAN_RUNNER")) && *env) {
    bad |= cat3(cfg->runner, sizeof cfg->runner, env[0] == '/' ? "" : base, env, "");
  } else {
#ifdef CDPLAN_SOURCE_DIR
    bad |= cat3(cfg->runner, sizeof cfg->runner, CDPLAN_SOURCE_DIR, "/validate/gpu/runner.py", "");
    if (access(cfg->runner, R_OK) != 0)
#endif
      bad |= cat3(cfg->runner, sizeof cfg->runner, cwd, "/validate/gpu/runner.py", "");
  }
  cfg->local_max = VAL_LOCAL_MAX_DEFAULT;
  if ((env = getenv("CDPLAN_LOCAL_MAX")) && *env) {
    char *end = NULL;
    long v = strtol(env, &end, 10);
    if (!end || *end || v < 1 || v > VAL_LOCAL_MAX_LIMIT)
      return svc_err_set(err, SVC_INTERNAL, "", "CDPLAN_LOCAL_MAX must be an integer from 1 to %d",
                         VAL_LOCAL_MAX_LIMIT);
    cfg->local_max = (int)v;
  }
  cfg->slurm.gpu_type = getenv("CDPLAN_SLURM_GPU_TYPE");
  cfg->slurm.partition = getenv("CDPLAN_SLURM_PARTITION");
  cfg->slurm.account = getenv("CDPLAN_SLURM_ACCOUNT");
  cfg->slurm.qos = getenv("CDPLAN_SLURM_QOS");
  cfg->slurm.constraint = getenv("CDPLAN_SLURM_CONSTRAINT");
  if ((env = getenv("CDPLAN_PYTHON")) && *env)
    svc_strlcpy(cfg->python, env, sizeof cfg->python);
  else if (which("python3", cfg->python, sizeof cfg->python))
    svc_strlcpy(cfg->python, "python3", sizeof cfg->python);
  if (bad) return svc_err_set(err, SVC_INTERNAL, "", "validation paths are too long");
  return 0;
}

static int make_token(char token[VAL_TOKEN_LEN + 1], char hash[65], svc_err *err) {
  unsigned char raw[VAL_TOKEN_LEN / 2];
  if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw)
    return svc_err_set(err, SVC_INTERNAL, "", "no randomness for the job token: %s",
                       strerror(errno));
  for (size_t i = 0; i < sizeof raw; i++) sprintf(token + 2 * i, "%02x", raw[i]);
  svc_sha256_hex(token, VAL_TOKEN_LEN, hash);
  return 0;
}

int val_starting(const hwdb_job *job) {
  return !strcmp(job->state, "queued") && svc_wall_now() < job->created_at + VAL_START_GRACE_S;
}

int val_fail(hwdb *db, int64_t id, const char *note, svc_err *err) {
  svc_log(SVC_LOG_INFO, "validation %lld failed: %.200s", (long long)id, note);
  return hwdb_job_transition(db, id, VAL_ACTIVE, "failed", note, NULL, NULL, err);
}

/* Write job.json into the job's own folder and record the folder. */
static int prepare_dir(hwdb *db, const val_cfg *cfg, hwdb_job *job, svc_err *err) {
  char dir[PATH_MAX], path[PATH_MAX], name[32];
  char *text = NULL;
  int rc;
  snprintf(name, sizeof name, "job-%lld", (long long)job->id);
  if (val_join(dir, sizeof dir, cfg->workdir, name) || val_join(path, sizeof path, dir, "job.json"))
    return svc_err_set(err, SVC_IO, "", "validation folder path too long");
  if ((rc = val_mkdirs(dir, err))) return rc;
  if (!(text = val_job_json(job->kind, job->id, job->params)))
    return svc_err_set(err, SVC_NOMEM, "", NULL);
  rc = val_write_file(path, text, strlen(text), 0600, err);
  free(text);
  if (!rc) rc = hwdb_job_set_handles(db, job->id, 0, 0, 0, dir, err);
  if (!rc && !(job->workdir = strdup(dir))) rc = svc_err_set(err, SVC_NOMEM, "", NULL);
  return rc;
}

int val_submit(hwdb *db, const val_cfg *cfg, const val_spec *spec, int64_t *id,
               char token[VAL_TOKEN_LEN + 1], svc_err *err) {
  hwdb_job job = {0};
  svc_err why;
  char *text = NULL;
  int rc;
  if (!val_kind_valid(spec->kind)) return svc_err_set(err, SVC_BAD_FIELD, "kind", "unknown kind");
  if (!val_backend_valid(spec->backend))
    return svc_err_set(err, SVC_BAD_FIELD, "backend", "backend must be local, slurm or bundle");
  svc_strlcpy(job.kind, spec->kind, sizeof job.kind);
  svc_strlcpy(job.backend, spec->backend, sizeof job.backend);
  if (svc_strlcpy(job.hw, spec->hw, sizeof job.hw))
    return svc_err_set(err, SVC_BAD_FIELD, "hardware", "hardware name too long");
  job.params = (char *)spec->params;
  job.prediction = (char *)spec->prediction;
  job.timeout_s = spec->timeout_s > 0 ? spec->timeout_s : DEFAULT_TIMEOUT_S;
  job.gpus = spec->gpus >= 0 ? spec->gpus : val_kind_gpus(spec->kind);
  if ((rc = make_token(token, job.token_hash, err))) return rc;
  if ((rc = hwdb_job_add(db, &job, err))) return rc;
  job.params = job.prediction = NULL; /* borrowed until here */
  *id = job.id;
  if (!(text = val_job_json(spec->kind, job.id, spec->params))) {
    rc = svc_err_set(err, SVC_NOMEM, "", NULL);
    goto cleanup;
  }
  if (!strcmp(spec->backend, "bundle")) {
    /* The job waits for its result to be ingested; the folder is the only
     * thing made now, and failing to make it is the caller's error. */
    svc_err_clear(&why);
    /* Without a folder of the caller's (a submission over the API) it goes
     * in the job's own folder, served as a tarball (val_bundle_tar); either
     * way the folder is recorded as the job's. */
    char dir[PATH_MAX], real[PATH_MAX], name[32];
    snprintf(name, sizeof name, "job-%lld", (long long)job.id);
    if (spec->bundle_dir)
      svc_strlcpy(dir, spec->bundle_dir, sizeof dir);
    else if (val_join(dir, sizeof dir, cfg->workdir, name))
      rc = svc_err_set(&why, SVC_IO, "", "validation folder path too long");
    if (!rc) rc = val_write_bundle(dir, cfg->runner, job.id, text, &why);
    if (!rc) rc = hwdb_job_set_handles(db, job.id, 0, 0, 0, realpath(dir, real) ? real : dir, &why);
    if (rc) {
      val_fail(db, job.id, why.message, NULL);
      if (err) *err = why;
    }
    goto cleanup;
  }
  job.params = (char *)spec->params;
  svc_err_clear(&why);
  rc = prepare_dir(db, cfg, &job, &why);
  /* A local job is started by the queue (oldest first, at most local_max at
   * once): this one, now, when a slot is free; a runner that cannot start
   * fails its own job there. */
  /* the job's Slurm placement, member by member over the server's */
  const val_slurm_opts *a = &spec->slurm, *b = &cfg->slurm;
  val_slurm_opts so = {a->gpu_type ? a->gpu_type : b->gpu_type,
                       a->partition ? a->partition : b->partition,
                       a->account ? a->account : b->account, a->qos ? a->qos : b->qos,
                       a->constraint ? a->constraint : b->constraint};
  if (!rc)
    rc = !strcmp(spec->backend, "local") ? val_local_fill(db, cfg, NULL, &why)
                                         : val_slurm_start(db, cfg, &job, &so, &why);
  job.params = NULL;
  /* A job that could not start is a failed job, not a failed request. */
  if (rc) rc = val_fail(db, job.id, why.message, err);
cleanup:
  job.params = job.prediction = NULL;
  free(text);
  hwdb_job_dispose(&job);
  return rc;
}

/* A bundle job has nothing to poll: it ends with its result, or when its
 * timeout_s since submission is over (hwdb_job_expired's deadline). */
static int bundle_expire(hwdb *db, const hwdb_job *job, svc_err *err) {
  char why[96];
  if (svc_wall_now() < job->created_at + (double)job->timeout_s) return 0;
  snprintf(why, sizeof why, "timed out after %lld s without a result", (long long)job->timeout_s);
  return val_fail(db, job->id, why, err);
}

static int poll_job(hwdb *db, const val_cfg *cfg, const hwdb_job *job, svc_err *err) {
  if (val_state_final(job->state)) return 0;
  if (!strcmp(job->backend, "local")) return val_local_poll(db, cfg, job, err);
  if (!strcmp(job->backend, "slurm")) return val_slurm_poll(db, cfg, job, err);
  return bundle_expire(db, job, err);
}

int val_poll(hwdb *db, const val_cfg *cfg, int64_t id, svc_err *err) {
  hwdb_job job;
  svc_err e;
  int rc = hwdb_job_get(db, id, &job, err);
  if (rc) return rc;
  rc = poll_job(db, cfg, &job, err);
  /* A local job that ended freed a slot; one that waits may get it. */
  if (!rc && !strcmp(job.backend, "local") && val_local_fill(db, cfg, NULL, &e))
    svc_log(SVC_LOG_WARN, "validation: cannot start queued local jobs: %s", e.message);
  hwdb_job_dispose(&job);
  return rc;
}

/* Job id is past its deadline: poll it (a runner that finished in time is
 * judged by its files; one still running is killed), and fail it if it is
 * somehow still active, so that it does not come back every pass. */
static void expire_one(hwdb *db, const val_cfg *cfg, int64_t id) {
  hwdb_job job;
  svc_err e;
  int rc = hwdb_job_get(db, id, &job, &e);
  if (!rc) rc = poll_job(db, cfg, &job, &e);
  hwdb_job_dispose(&job);
  if (!rc && !(rc = hwdb_job_get(db, id, &job, &e)) && !val_state_final(job.state)) {
    if (!strcmp(job.backend, "local")) val_local_stop(&job);
    rc = val_fail(db, id, "timed out", &e);
  }
  if (rc) svc_log(SVC_LOG_WARN, "validation %lld: cannot expire: %s", (long long)id, e.message);
  hwdb_job_dispose(&job);
}

int val_reconcile_pass(hwdb *db, const val_cfg *cfg, val_tick *out, svc_err *err) {
  int64_t ids[VAL_TICK_MAX];
  size_t n = 0, m = 0;
  val_tick t = {0};
  svc_err e;
  int rc;
  if ((rc = hwdb_job_expired(db, svc_wall_now(), ids, VAL_TICK_MAX, &n, err))) return rc;
  for (size_t i = 0; i < n; i++) expire_one(db, cfg, ids[i]);
  t.expired = (int)n;
  if ((rc = hwdb_job_pick_poll(db, ids, VAL_TICK_MAX - n, &m, err))) return rc;
  for (size_t i = 0; i < m; i++) {
    hwdb_job job;
    if ((rc = hwdb_job_get(db, ids[i], &job, &e)) == 0) rc = poll_job(db, cfg, &job, &e);
    if (rc) svc_log(SVC_LOG_WARN, "validation %lld: cannot poll: %s", (long long)ids[i], e.message);
    hwdb_job_dispose(&job);
  }
  t.polled = (int)m;
  if (val_local_fill(db, cfg, &t.started, &e))
    svc_log(SVC_LOG_WARN, "validation: cannot start queued local jobs: %s", e.message);
  if ((rc = hwdb_job_count_active(db, &t.active, err))) return rc;
  if (out) *out = t;
  return 0;
}

int val_reconcile(hwdb *db, const val_cfg *cfg, int *active, svc_err *err) {
  val_tick t;
  int rc = val_reconcile_pass(db, cfg, &t, err);
  if (!rc && active) *active = t.active > INT_MAX ? INT_MAX : (int)t.active;
  return rc;
}

int val_cancel(hwdb *db, const val_cfg *cfg, int64_t id, svc_err *err) {
  hwdb_job job;
  int rc = hwdb_job_get(db, id, &job, err), changed = 0;
  if (rc) return rc;
  /* Mark first: a poll racing with the kill then finds the job final and
   * does not call the killed runner a failure. */
  if ((rc = hwdb_job_transition(db, id, VAL_ACTIVE, "cancelled", "cancelled by request", NULL,
                                &changed, err)))
    goto cleanup;
  if (!changed) {
    rc = svc_err_set(err, SVC_CONFLICT, "id", "validation job %lld is already %s", (long long)id,
                     job.state);
    goto cleanup;
  }
  if (!strcmp(job.backend, "local")) {
    svc_err e;
    val_local_stop(&job);
    if (val_local_fill(db, cfg, NULL, &e))
      svc_log(SVC_LOG_WARN, "validation: cannot start queued local jobs: %s", e.message);
  } else if (!strcmp(job.backend, "slurm")) {
    svc_err e;
    if (val_slurm_stop(cfg, &job, &e))
      svc_log(SVC_LOG_WARN, "validation %lld: %s", (long long)id, e.message);
  }
cleanup:
  hwdb_job_dispose(&job);
  return rc;
}

int val_store_result(hwdb *db, const val_cfg *cfg, int64_t id, const char *text, size_t len,
                     svc_err *err) {
  hwdb_job job;
  char *copy = NULL;
  int rc = hwdb_job_get(db, id, &job, err), changed = 0;
  if (rc) return rc;
  if (val_state_final(job.state)) {
    rc = svc_err_set(err, SVC_CONFLICT, "id", "validation job %lld is already %s", (long long)id,
                     job.state);
    goto cleanup;
  }
  if (cfg->check && (rc = cfg->check(cfg->check_arg, id, text, len, err))) goto cleanup;
  if (!(copy = strndup(text, len))) {
    rc = svc_err_set(err, SVC_NOMEM, "", NULL);
    goto cleanup;
  }
  if ((rc =
           hwdb_job_transition(db, id, VAL_ACTIVE, "done", "result received", copy, &changed, err)))
    goto cleanup;
  if (!changed)
    rc = svc_err_set(err, SVC_CONFLICT, "id", "validation job %lld finished meanwhile",
                     (long long)id);
cleanup:
  free(copy);
  hwdb_job_dispose(&job);
  return rc;
}

int val_token_check(hwdb *db, int64_t id, const char *token, svc_err *err) {
  hwdb_job job;
  char hash[65];
  int rc;
  if (!token || !*token)
    return svc_err_set(err, SVC_UNAUTHORIZED, "token", "the job token is required");
  if ((rc = hwdb_job_get(db, id, &job, err))) return rc;
  svc_sha256_hex(token, strlen(token), hash);
  if (!svc_consttime_eq(hash, strlen(hash), job.token_hash, strlen(job.token_hash)))
    rc = svc_err_set(err, SVC_FORBIDDEN, "token", "the job token does not match");
  hwdb_job_dispose(&job);
  return rc;
}

int val_finish_from_files(hwdb *db, const val_cfg *cfg, const hwdb_job *job, const char *why,
                          svc_err *err) {
  char path[PATH_MAX], *text = NULL, *tail = NULL, *note = NULL;
  size_t len = 0;
  svc_err bad;
  int rc = 0, ok = 0;
  svc_err_clear(&bad);
  if (!job->workdir || val_join(path, sizeof path, job->workdir, "result.json")) {
    svc_err_set(&bad, SVC_IO, "", "the job has no folder");
  } else if (svc_read_file(path, VAL_MAX_RESULT, &text, &len, &bad) == 0) {
    if (len == 0)
      svc_err_set(&bad, SVC_IO, "", "the runner wrote no result");
    else
      ok = !cfg->check || cfg->check(cfg->check_arg, job->id, text, len, &bad) == 0;
  }
  if (ok && !why) {
    rc = hwdb_job_transition(db, job->id, VAL_ACTIVE, "done", "result read from the job's output",
                             text, NULL, err);
    goto cleanup;
  }
  if (job->workdir && !val_join(path, sizeof path, job->workdir, "stderr.txt"))
    tail = val_read_tail(path, VAL_TAIL_BYTES);
  size_t n = 64 + (why ? strlen(why) : 0) + strlen(bad.message) + (tail ? strlen(tail) : 0);
  if (!(note = malloc(n))) {
    rc = svc_err_set(err, SVC_NOMEM, "", NULL);
    goto cleanup;
  }
  snprintf(note, n, "%s%s%s; stderr: %s", why ? why : "", why && !ok ? "; " : "",
           ok ? "" : bad.message, tail && *tail ? tail : "(empty)");
  svc_log(SVC_LOG_INFO, "validation %lld failed: %.200s", (long long)job->id, note);
  /* A partial result (a runner stopped by a signal) is kept for reading. */
  rc = hwdb_job_transition(db, job->id, VAL_ACTIVE, "failed", note, ok ? text : NULL, NULL, err);
cleanup:
  free(text);
  free(tail);
  free(note);
  return rc;
}
