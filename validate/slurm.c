/* The Slurm backend: sbatch a script that runs the runner on job.json,
 * follow the job with scontrol (squeue when scontrol has forgotten it),
 * stop it with scancel. Everything Slurm needs to know travels as sbatch
 * argv elements (never through a shell), and the script names only
 * quoted paths (files.c). The job's stdout is its result file, so the
 * result is there when Slurm says COMPLETED; a POST with the job token
 * may bring it sooner. State lives in Slurm and in hwdb, never only in
 * our memory, so a restarted server reconciles from scontrol. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "validate/validate_int.h"

/* Slurm expands %j, %u, ... in --output/--error; %% is a literal %. */
static int slurm_path(char *buf, size_t size, const char *dir, const char *name) {
  size_t n = 0;
  char full[PATH_MAX];
  if (val_join(full, sizeof full, dir, name)) return -1;
  for (const char *p = full; *p; p++) {
    if (n + 3 > size) return -1;
    if (*p == '%') buf[n++] = '%';
    buf[n++] = *p;
  }
  buf[n] = '\0';
  return 0;
}

/* "--key=value" into buf when value is set; 1 when added. */
static int opt(char *buf, size_t size, const char *key, const char *value) {
  if (!value || !*value) return 0;
  int n = snprintf(buf, size, "--%s=%s", key, value);
  return n > 0 && (size_t)n < size;
}

int val_slurm_start(hwdb *db, const val_cfg *cfg, const hwdb_job *job, const val_slurm_opts *so,
                    svc_err *err) {
  char script[PATH_MAX], jobfile[PATH_MAX], out[PATH_MAX], errf[PATH_MAX], name[48], time_opt[48],
      gres[112], output[PATH_MAX + 16], error[PATH_MAX + 16], chdir_opt[PATH_MAX + 16], reply[1024],
      note[96], place[4][160];
  int rc, status = 0;
  if (val_join(script, sizeof script, job->workdir, "job.sh") ||
      val_join(jobfile, sizeof jobfile, job->workdir, "job.json") ||
      slurm_path(out, sizeof out, job->workdir, "result.json") ||
      slurm_path(errf, sizeof errf, job->workdir, "stderr.txt"))
    return svc_err_set(err, SVC_IO, "", "job folder path too long");
  if ((rc = val_write_script(script, cfg->python, cfg->runner, jobfile, err))) return rc;
  snprintf(name, sizeof name, "--job-name=cdplan-val-%lld", (long long)job->id);
  /* Slurm's limit is in minutes; round up so it never cuts a job short. */
  snprintf(time_opt, sizeof time_opt, "--time=%lld", (long long)((job->timeout_s + 59) / 60));
  /* a GPU type asks for that model (--gres=gpu:h200:1): a job for one
   * accelerator must not land on another */
  if (so && so->gpu_type && *so->gpu_type)
    snprintf(gres, sizeof gres, "--gres=gpu:%.64s:%lld", so->gpu_type, (long long)job->gpus);
  else
    snprintf(gres, sizeof gres, "--gres=gpu:%lld", (long long)job->gpus);
  snprintf(output, sizeof output, "--output=%s", out);
  snprintf(error, sizeof error, "--error=%s", errf);
  snprintf(chdir_opt, sizeof chdir_opt, "--chdir=%s", job->workdir);
  const char *argv[16] = {"sbatch", "--parsable", name,      time_opt,
                          output,   error,        chdir_opt, "--ntasks=1"};
  int n = 8;
  if (job->gpus > 0) argv[n++] = gres;
  if (so) {
    static const char *const keys[4] = {"partition", "account", "qos", "constraint"};
    const char *vals[4] = {so->partition, so->account, so->qos, so->constraint};
    for (int i = 0; i < 4; i++)
      if (opt(place[i], sizeof place[i], keys[i], vals[i])) argv[n++] = place[i];
  }
  argv[n++] = script; /* options after the script would go to the script */
  argv[n] = NULL;
  if ((rc = val_run(argv, cfg->cmd_timeout_s, reply, sizeof reply, &status, err))) return rc;
  char *end = NULL;
  long long sid = strtoll(reply, &end, 10);
  if (status != 0 || sid <= 0 || (end && *end != '\0' && *end != ';' && *end != '\n')) {
    reply[strcspn(reply, "\n")] = '\0';
    return svc_err_set(err, SVC_UNAVAILABLE, "", "sbatch failed (status %d): %.300s", status,
                       reply);
  }
  if ((rc = hwdb_job_set_handles(db, job->id, sid, 0, 0, NULL, err))) {
    /* Not recorded means never followed: take it back from Slurm. */
    snprintf(reply, sizeof reply, "%lld", sid);
    const char *cancel[] = {"scancel", reply, NULL};
    val_run(cancel, cfg->cmd_timeout_s, note, sizeof note, &status, NULL);
    return rc;
  }
  svc_log(SVC_LOG_INFO, "validation %lld: submitted to slurm as job %lld", (long long)job->id, sid);
  return 0;
}

/* The value of "Key=" in scontrol's one-line output, into buf. */
static const char *field(const char *text, const char *key, char *buf, size_t size) {
  size_t k = strlen(key);
  buf[0] = '\0';
  for (const char *p = text; (p = strstr(p, key)) != NULL; p += k) {
    if (p != text && p[-1] != ' ' && p[-1] != '\n') continue;
    p += k;
    size_t n = strcspn(p, " \n");
    if (n >= size) n = size - 1;
    memcpy(buf, p, n);
    buf[n] = '\0';
    return buf;
  }
  return buf;
}

/* Slurm's view of job sid: JobState plus ExitCode and Reason; "" when
 * Slurm no longer knows it. */
static int ask_slurm(const val_cfg *cfg, int64_t sid, char *state, size_t size, char *detail,
                     size_t dsize, svc_err *err) {
  char id[32], out[8192], code[32], reason[128];
  int status = 0, rc;
  snprintf(id, sizeof id, "%lld", (long long)sid);
  const char *show[] = {"scontrol", "-o", "show", "job", id, NULL};
  state[0] = detail[0] = '\0';
  if ((rc = val_run(show, cfg->cmd_timeout_s, out, sizeof out, &status, err))) return rc;
  if (status == 0) {
    field(out, "JobState=", state, size);
    field(out, "ExitCode=", code, sizeof code);
    field(out, "Reason=", reason, sizeof reason);
    snprintf(detail, dsize, "exit code %s, reason %s", code, reason);
    return 0;
  }
  /* scontrol forgets finished jobs after MinJobAge; squeue may still list
   * a pending one when the controller is busy. */
  const char *q[] = {"squeue", "-h", "-j", id, "-o", "%T", NULL};
  if ((rc = val_run(q, cfg->cmd_timeout_s, out, sizeof out, &status, err))) return rc;
  if (status == 0) {
    out[strcspn(out, " \n")] = '\0';
    svc_strlcpy(state, out, size);
  }
  return 0;
}

int val_slurm_poll(hwdb *db, const val_cfg *cfg, const hwdb_job *job, svc_err *err) {
  char state[64], detail[256], note[384];
  int rc;
  if (job->slurm_id <= 0)
    return val_starting(job) ? 0 : val_fail(db, job->id, "never reached slurm", err);
  if ((rc = ask_slurm(cfg, job->slurm_id, state, sizeof state, detail, sizeof detail, err)))
    return rc;
  if (!strcmp(state, "PENDING") || !strcmp(state, "REQUEUED") || !strcmp(state, "SUSPENDED") ||
      !strcmp(state, "REQUEUE_HOLD") || !strcmp(state, "REQUEUE_FED"))
    return 0;
  if (!strcmp(state, "RUNNING") || !strcmp(state, "CONFIGURING") || !strcmp(state, "COMPLETING") ||
      !strcmp(state, "STAGE_OUT") || !strcmp(state, "RESIZING")) {
    if (!strcmp(job->state, "queued")) {
      snprintf(note, sizeof note, "slurm job %lld is %s", (long long)job->slurm_id, state);
      return hwdb_job_transition(db, job->id, "queued", "running", note, NULL, NULL, err);
    }
    return 0;
  }
  if (!strcmp(state, "COMPLETED") || !state[0])
    return val_finish_from_files(db, cfg, job, state[0] ? NULL : "slurm no longer knows the job",
                                 err);
  if (!strcmp(state, "CANCELLED")) {
    snprintf(note, sizeof note, "slurm job %lld was cancelled outside cdplan",
             (long long)job->slurm_id);
    return hwdb_job_transition(db, job->id, VAL_ACTIVE, "cancelled", note, NULL, NULL, err);
  }
  /* FAILED, TIMEOUT, NODE_FAIL, OUT_OF_MEMORY, BOOT_FAIL, DEADLINE, ... */
  snprintf(note, sizeof note, "slurm job %lld ended %s (%s)", (long long)job->slurm_id, state,
           detail);
  return val_finish_from_files(db, cfg, job, note, err);
}

int val_slurm_stop(const val_cfg *cfg, const hwdb_job *job, svc_err *err) {
  char id[32], out[1024];
  int status = 0, rc;
  if (job->slurm_id <= 0) return 0;
  snprintf(id, sizeof id, "%lld", (long long)job->slurm_id);
  const char *argv[] = {"scancel", id, NULL};
  if ((rc = val_run(argv, cfg->cmd_timeout_s, out, sizeof out, &status, err))) return rc;
  if (status != 0)
    return svc_err_set(err, SVC_UNAVAILABLE, "", "scancel %s failed: %.300s", id, out);
  return 0;
}
