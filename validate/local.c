/* The local backend: the runner as a child process of whoever submitted.
 *
 * The submitter may be a server (which keeps running and reaps its child)
 * or a CLI (which exits at once, so the runner is re-parented and a later
 * `cdplan validate status` from another process looks at it). So the job
 * never depends on its exit status alone: the process is identified by
 * pid plus its start time (a recycled pid is not our job), and a finished
 * job is judged by its output files; the exit status, when we can reap
 * it, only adds to the note. The timeout is enforced whenever the job is
 * polled (status requests and the server's timer).
 *
 * At most cfg->local_max runners are active at once: a job past the cap
 * stays queued (pid 0, its folder ready) and val_local_fill starts the
 * oldest such job whenever a poll, a cancel or the tick finds a slot. The
 * slot is claimed in the database (pid -1, hwdb_job_claim_slot), so that
 * the server's threads and a CLI beside it never start one job twice or
 * more than the cap between them.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "validate/validate_int.h"

int val_local_start(hwdb *db, const val_cfg *cfg, const hwdb_job *job, svc_err *err) {
  char jobfile[PATH_MAX], out[PATH_MAX], errf[PATH_MAX];
  pid_t pid = 0;
  int rc, changed = 0;
  if (val_join(jobfile, sizeof jobfile, job->workdir, "job.json") ||
      val_join(out, sizeof out, job->workdir, "result.json") ||
      val_join(errf, sizeof errf, job->workdir, "stderr.txt"))
    return svc_err_set(err, SVC_IO, "", "job folder path too long");
  const char *argv[] = {cfg->python, cfg->runner, jobfile, NULL};
  if ((rc = val_spawn(argv, out, errf, &pid, err))) return rc;
  /* Read the start time at once: it is what tells this process from a
   * later one with the same pid. */
  int64_t start = val_proc_start(pid, NULL);
  if ((rc = hwdb_job_set_handles(db, job->id, 0, pid, start, NULL, err)) ||
      (rc = hwdb_job_transition(db, job->id, "queued", "running", "started locally", NULL, &changed,
                                err)) ||
      !changed) {
    /* Not recorded, or cancelled while it was starting: nobody would
     * follow this runner. */
    val_proc_signal(pid, start, SIGKILL);
    waitpid(pid, NULL, 0);
    return rc;
  }
  svc_log(SVC_LOG_INFO, "validation %lld: runner started locally (pid %d)", (long long)job->id,
          (int)pid);
  return 0;
}

/* Whether the job's process is over; *status is the exit status when we
 * reaped it ourselves, else -1. */
static int exited(const hwdb_job *job, int *status) {
  int st = 0, zombie = 0;
  *status = -1;
  pid_t r = waitpid((pid_t)job->pid, &st, WNOHANG);
  if (r == (pid_t)job->pid) {
    *status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    return 1;
  }
  if (r == 0) return 0; /* our child, still running */
  /* Not our child (another process submitted it): ask /proc. */
  int64_t start = val_proc_start((pid_t)job->pid, &zombie);
  return start == 0 || (job->pid_start && start != job->pid_start) || zombie;
}

int val_local_fill(hwdb *db, const val_cfg *cfg, int *started, svc_err *err) {
  int rc = 0, n = 0;
  if (started) *started = 0;
  /* Bounded: each turn claims a slot that a failed start gives back. */
  for (int turn = 0; turn < VAL_TICK_MAX; turn++) {
    int64_t id = 0;
    hwdb_job job;
    svc_err why;
    if ((rc = hwdb_job_claim_slot(db, "local", cfg->local_max, &id, err)) || id == 0) break;
    if ((rc = hwdb_job_get(db, id, &job, err))) break;
    svc_err_clear(&why);
    if (val_local_start(db, cfg, &job, &why) == 0)
      n++;
    else
      val_fail(db, id, why.message, NULL);
    hwdb_job_dispose(&job);
  }
  if (started) *started = n;
  return rc;
}

int val_local_poll(hwdb *db, const val_cfg *cfg, const hwdb_job *job, svc_err *err) {
  char why[96];
  int status = -1;
  if (job->pid == 0 && job->workdir && !strcmp(job->state, "queued"))
    return 0; /* waiting for a slot: val_local_fill starts it */
  if (job->pid < 0 && svc_wall_now() < job->updated_at + VAL_START_GRACE_S)
    return 0; /* a slot is claimed; the claimer is spawning */
  if (job->pid <= 0)
    return job->pid == 0 && val_starting(job)
               ? 0
               : val_fail(db, job->id, "the local runner never started", err);
  if (!exited(job, &status)) {
    if (job->timeout_s <= 0 || svc_wall_now() < job->started_at + (double)job->timeout_s) return 0;
    /* Kill first, then mark: a result written between the two is ignored
     * because the job is already failed when anyone looks again. */
    val_local_stop(job);
    snprintf(why, sizeof why, "timed out after %lld s; the runner was killed",
             (long long)job->timeout_s);
    return val_fail(db, job->id, why, err);
  }
  if (status > 0) {
    snprintf(why, sizeof why, "the runner exited with status %d", status);
    return val_finish_from_files(db, cfg, job, why, err);
  }
  return val_finish_from_files(db, cfg, job, NULL, err);
}

void val_local_stop(const hwdb_job *job) {
  pid_t pid = (pid_t)job->pid;
  if (pid <= 0) return;
  /* SIGTERM lets the runner write partial results; SIGKILL after a grace
   * period makes sure it stops. Reap if it is ours. */
  val_proc_signal(pid, job->pid_start, SIGTERM);
  double deadline = svc_now() + 2.0;
  while (svc_now() < deadline) {
    pid_t r = waitpid(pid, NULL, WNOHANG);
    if (r == pid) return;
    if (r < 0 && errno == ECHILD) {
      int zombie = 0;
      if (val_proc_start(pid, &zombie) != job->pid_start || zombie) return;
    }
    usleep(20000);
  }
  val_proc_signal(pid, job->pid_start, SIGKILL);
  waitpid(pid, NULL, 0);
}
