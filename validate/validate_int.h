/* validate internals shared by the validate/ files: process helpers
 * (spawn.c), file helpers, and the backends' entry points. */
#ifndef CDPLAN_VALIDATE_INT_H
#define CDPLAN_VALIDATE_INT_H

#include <sys/types.h>

#include "validate/validate.h"

#define VAL_ACTIVE "queued,running"
#define VAL_TAIL_BYTES 1200  /* of stderr kept as a failed job's note */
#define VAL_START_GRACE_S 60 /* seconds a queued job may sit between record and start */

/* Spawn argv[0] (searched on PATH) in its own process group with stdin
 * from /dev/null and stdout/stderr appended to the given files (NULL =
 * /dev/null). No shell is involved. */
int val_spawn(const char *const *argv, const char *out_path, const char *err_path, pid_t *pid,
              svc_err *err);
/* Run argv to completion (at most timeout_s, then SIGKILL), capturing up
 * to outsz-1 bytes of stdout+stderr into out. *status gets the exit
 * status (or 128+signal). 0 when it ran (whatever its status). */
int val_run(const char *const *argv, double timeout_s, char *out, size_t outsz, int *status,
            svc_err *err);
/* The start time of process pid in clock ticks since boot (/proc), 0 when
 * there is no such process; *zombie set when it exited but is unreaped. */
int64_t val_proc_start(pid_t pid, int *zombie);
/* Send sig to the process group led by pid, if pid still is the process
 * that started at start (a recycled pid is left alone). */
void val_proc_signal(pid_t pid, int64_t start, int sig);

/* Write len bytes to path through a temporary file and rename (0600). */
int val_write_file(const char *path, const char *data, size_t len, int mode, svc_err *err);
/* The last max bytes of path, trimmed to whole lines; malloc'd ("" when
 * the file is missing). */
char *val_read_tail(const char *path, size_t max);
/* mkdir -p with mode 0700 for what it creates. */
int val_mkdirs(const char *path, svc_err *err);
/* "DIR/name" into buf; -1 when it does not fit. */
int val_join(char *buf, size_t size, const char *dir, const char *name);

/* The job is over: judge its output files (result.json, stderr.txt in
 * job->workdir) and move it to done or failed. why (may be NULL) says
 * what the backend knows: a non-zero exit, a Slurm state. */
int val_finish_from_files(hwdb *db, const val_cfg *cfg, const hwdb_job *job, const char *why,
                          svc_err *err);
/* Move an active job to failed with note. */
/* A queued job whose submitter may still be between recording it and
 * starting it (spawn, sbatch): a server's timer can poll in that window,
 * so a job without a pid or Slurm id is only given up after
 * VAL_START_GRACE_S. */
int val_starting(const hwdb_job *job);
int val_fail(hwdb *db, int64_t id, const char *note, svc_err *err);

/* Backends. start: the job row exists (queued) with its workdir and
 * job.json written; on success the job's handles are stored. */
int val_local_start(hwdb *db, const val_cfg *cfg, const hwdb_job *job, svc_err *err);
int val_local_poll(hwdb *db, const val_cfg *cfg, const hwdb_job *job, svc_err *err);
void val_local_stop(const hwdb_job *job);
int val_slurm_start(hwdb *db, const val_cfg *cfg, const hwdb_job *job, const val_slurm_opts *opts,
                    svc_err *err);
int val_slurm_poll(hwdb *db, const val_cfg *cfg, const hwdb_job *job, svc_err *err);
int val_slurm_stop(const val_cfg *cfg, const hwdb_job *job, svc_err *err);

#endif
