/* hwdb: the only database user. Owns the store: the hardware catalog
 * (each descriptor kept as the canonical JSON text api/ produced), the
 * calibration versions per hardware, plans, tokens and validation jobs.
 * Two backends: a SQLite file (the embedded default; schema changes are
 * numbered migrations keyed on PRAGMA user_version) and a PostgreSQL
 * database (a postgres:// or postgresql:// URI; its own numbered
 * migrations in a schema_version table), which several service replicas
 * may share. Every write runs in one transaction.
 *
 * hwdb knows nothing of JSON: documents are opaque text to it.
 * A handle is safe to share between threads (SQLite serialized mode plus
 * our own mutex around each statement sequence; PostgreSQL: a small pool
 * of connections, one per statement sequence).
 */
#ifndef CDPLAN_HWDB_H
#define CDPLAN_HWDB_H

#include <stddef.h>
#include <stdint.h>

#include "common/common.h"

typedef struct hwdb hwdb;

/* One hardware row. doc is malloc'd (hwdb_hw_dispose frees it). */
typedef struct {
  char name[64];
  char vendor[32];
  char *doc;
  int64_t updated_at; /* unix seconds */
} hwdb_hw;

/* One calibration version. params and report are malloc'd JSON text. */
typedef struct {
  char hw[64];
  int version;
  char *params;
  char *report;
  int64_t created_at;
} hwdb_calib;

/* Open or create path (":memory:" allowed; a postgres:// or postgresql://
 * URI opens that PostgreSQL database), apply migrations. *created is set
 * to 1 when the store had no schema yet (the caller seeds it). */
int hwdb_open(hwdb **out, const char *path, int *created, svc_err *err);
void hwdb_free(hwdb *db);

/* Job following: which process polls the validation backends. SOLE: this
 * process owns the store's jobs alone (an embedded file: every process
 * follows them, as always). ELECTED: this replica holds the store's
 * leader lock and follows the jobs; OTHER: another replica holds it, so
 * this one leaves jobs alone. Each call tries to take the lock when
 * nobody holds it (the holder's death frees it), so calling it on every
 * tick is how a replica takes over. */
enum { HWDB_FOLLOW_OTHER = 0, HWDB_FOLLOW_ELECTED = 1, HWDB_FOLLOW_SOLE = 2 };
int hwdb_follow_jobs(hwdb *db, int *state, svc_err *err);

/* Catalog. put: mode 0 = insert (409 when present), 1 = upsert. */
int hwdb_hw_put(hwdb *db, const char *name, const char *vendor, const char *doc, int mode,
                int *created, svc_err *err);
int hwdb_hw_get(hwdb *db, const char *name, hwdb_hw *out, svc_err *err); /* 404 when absent */
int hwdb_hw_delete(hwdb *db, const char *name, svc_err *err);            /* 404 when absent */
/* List, ordered by name; vendor NULL = all. *out is a malloc'd array. */
int hwdb_hw_list(hwdb *db, const char *vendor, hwdb_hw **out, size_t *n, svc_err *err);
int hwdb_hw_count(hwdb *db, int64_t *n, svc_err *err);
void hwdb_hw_dispose(hwdb_hw *hw);
void hwdb_hw_list_free(hwdb_hw *list, size_t n);

/* Several puts as one transaction (all or nothing). */
int hwdb_hw_put_many(hwdb *db, size_t n, const char *const *names, const char *const *vendors,
                     const char *const *docs, svc_err *err);
/* The general form: mode as in hwdb_hw_put; *created (may be NULL) tells
 * whether the last row was new. */
int hwdb_hw_put_many_mode(hwdb *db, size_t n, const char *const *names, const char *const *vendors,
                          const char *const *docs, int mode, int *created, svc_err *err);

/* Calibration versions: numbered 1, 2, ... per hardware. */
int hwdb_calib_add(hwdb *db, const char *hw, const char *params, const char *report, int *version,
                   svc_err *err);
/* The latest version; returns SVC_NOT_FOUND (negated) when none. */
int hwdb_calib_latest(hwdb *db, const char *hw, hwdb_calib *out, svc_err *err);
void hwdb_calib_dispose(hwdb_calib *c);
/* The same per architecture ("cdna3"): versions 1, 2, ... per arch, out->hw
 * holds the arch. No catalog row is needed: an arch calibration may
 * precede the accelerators that use it. */
int hwdb_arch_calib_add(hwdb *db, const char *arch, const char *params, const char *report,
                        int *version, svc_err *err);
int hwdb_arch_calib_latest(hwdb *db, const char *arch, hwdb_calib *out, svc_err *err);

/* A counter bumped by every write; readers compare it to know whether their
 * cached decodings are stale. */
uint64_t hwdb_generation(hwdb *db);

/* ---- Validation jobs (hwdb/jobs.c; owned by the validate/ module) ----
 * A job row: what to run (kind, hardware, params and the prediction it
 * checks, all opaque text), where (backend + its handles), its state and
 * result. States: "queued", "running" (non-final), "done", "failed",
 * "cancelled" (final). Every state change is appended to the history.
 * Strings marked malloc'd are freed by hwdb_job_dispose. */
typedef struct {
  int64_t id;
  char kind[32];
  char hw[64];
  char backend[16];
  char state[16];
  char token_hash[65]; /* hex SHA-256 of the job's token */
  char *params;        /* malloc'd JSON text */
  char *prediction;    /* malloc'd JSON text or NULL */
  char *result;        /* malloc'd JSON text or NULL (set when done) */
  char *note;          /* malloc'd: the last state change's note (why it failed) */
  char *workdir;       /* malloc'd or NULL: where the job's files live */
  int64_t slurm_id;    /* 0 = none */
  int64_t pid;         /* 0 = none; -1 = a slot is claimed, the process starting */
  int64_t pid_start;   /* the process's start time (clock ticks since boot) */
  int64_t timeout_s;
  int64_t gpus;
  double created_at, started_at, finished_at, updated_at; /* unix seconds; 0 = not yet */
} hwdb_job;

typedef struct {
  char state[16];
  double at;
  char *note; /* malloc'd or NULL */
} hwdb_job_event;

/* Insert job (kind, hw, backend, params, prediction, token_hash, timeout_s,
 * gpus are read; state starts "queued") and fill job->id, created_at. */
int hwdb_job_add(hwdb *db, hwdb_job *job, svc_err *err);
int hwdb_job_get(hwdb *db, int64_t id, hwdb_job *out, svc_err *err); /* 404 when absent */
/* Newest first, at most limit rows. active_only: queued and running only.
 * *out is a malloc'd array (hwdb_job_list_free). */
int hwdb_job_list(hwdb *db, int active_only, int limit, hwdb_job **out, size_t *n, svc_err *err);
/* The same with flags: HWDB_JOB_NO_RESULT leaves every result NULL (not
 * read from the file at all: a list never prints results). */
#define HWDB_JOB_NO_RESULT 1u
int hwdb_job_list_flags(hwdb *db, int active_only, int limit, unsigned flags, hwdb_job **out,
                        size_t *n, svc_err *err);
/* The reconcile tick's queries; each fills ids (at most cap) and *n.
 * expired: active jobs whose deadline is at or before now (unix seconds),
 * soonest first: a local job's started_at + timeout_s, a bundle job's
 * created_at + timeout_s (Slurm jobs: none; Slurm enforces --time). Uses
 * an index, whatever the number or age of the jobs.
 * pick_poll: the active non-bundle jobs checked least recently (then by
 * id), stamped as checked now, so successive calls go round all of them. */
int hwdb_job_expired(hwdb *db, double now, int64_t *ids, size_t cap, size_t *n, svc_err *err);
int hwdb_job_pick_poll(hwdb *db, int64_t *ids, size_t cap, size_t *n, svc_err *err);
/* Claim the oldest queued job of backend that has its folder (workdir) and
 * no process yet (pid 0), if fewer than max_started active jobs of backend
 * hold a process or a claim (pid != 0): its pid becomes -1 ("starting")
 * and *id its id; *id = 0 when there is no such job or no free slot. */
int hwdb_job_claim_slot(hwdb *db, const char *backend, int64_t max_started, int64_t *id,
                        svc_err *err);
/* How many jobs are queued or running. */
int hwdb_job_count_active(hwdb *db, int64_t *n, svc_err *err);
/* counts[i] = the jobs in states[i] now (0 for a state none is in). */
int hwdb_job_count_states(hwdb *db, const char *const *states, int64_t *counts, size_t n,
                          svc_err *err);
/* Move job id to state to if its current state is listed in from (a
 * comma-separated list such as "queued,running"); *changed (may be NULL)
 * tells whether it moved. note and result (may be NULL) are stored with
 * it. This compare-and-set is what keeps two pollers (server timer, CLI,
 * a results POST) from finishing one job twice. */
int hwdb_job_transition(hwdb *db, int64_t id, const char *from, const char *to, const char *note,
                        const char *result, int *changed, svc_err *err);
/* Record the backend handles (0 / NULL leave a field unchanged). */
int hwdb_job_set_handles(hwdb *db, int64_t id, int64_t slurm_id, int64_t pid, int64_t pid_start,
                         const char *workdir, svc_err *err);
/* The state changes of job id, oldest first. */
int hwdb_job_history(hwdb *db, int64_t id, hwdb_job_event **out, size_t *n, svc_err *err);
/* The database file's path ("" for :memory: and PostgreSQL); valid while
 * db is open. */
const char *hwdb_filename(hwdb *db);
void hwdb_job_dispose(hwdb_job *job);
void hwdb_job_list_free(hwdb_job *list, size_t n);
void hwdb_job_history_free(hwdb_job_event *ev, size_t n);

/* ---- API tokens (hwdb/tokens.c; owned by the hardening work: api/tokens.c) ----
 * A token row: its name, its scopes (opaque comma-separated text such as
 * "read,plan") and the hex SHA-256 of its secret; the secret is never
 * stored. revoked_at is 0 while the token is active. */
typedef struct {
  int64_t id;
  char name[64];
  char scopes[64];
  char hash[65];
  double created_at, revoked_at; /* unix seconds; revoked_at 0 = active */
} hwdb_token;

/* Insert t (name, scopes, hash read); fills t->id and t->created_at. 409
 * when the hash exists. */
int hwdb_token_add(hwdb *db, hwdb_token *t, svc_err *err);
/* The active token with this hash; 404 when none (or revoked). */
int hwdb_token_find(hwdb *db, const char *hash, hwdb_token *out, svc_err *err);
/* Every token, revoked ones too, by id; *out is malloc'd (free()). */
int hwdb_token_list(hwdb *db, hwdb_token **out, size_t *n, svc_err *err);
/* Mark token id revoked (idempotent); 404 when no such id. */
int hwdb_token_revoke(hwdb *db, int64_t id, svc_err *err);
/* How many tokens are not revoked. */
int hwdb_token_count_active(hwdb *db, int64_t *n, svc_err *err);

/* ---- Plans (hwdb/plans.c; owned by the planner work: api/plan.c) ----------
 * One stored plan or compare answer: its id (16 hex characters, chosen by
 * the caller), kind ("plan" | "compare"), the hardware it is for, and the
 * request and result documents as opaque text. */
typedef struct {
  char id[40];
  char kind[16];
  char hw[64];
  char *request; /* malloc'd */
  char *result;  /* malloc'd */
  double created_at;
} hwdb_plan;

/* Store a plan; 409 when the id exists. */
int hwdb_plan_put(hwdb *db, const char *id, const char *kind, const char *hw, const char *request,
                  const char *result, svc_err *err);
/* The plan with this id; 404 when none. */
int hwdb_plan_get(hwdb *db, const char *id, hwdb_plan *out, svc_err *err);
void hwdb_plan_dispose(hwdb_plan *p);
/* Up to limit plans of this kind, newest first, older than the plan `after`
 * (NULL: from the newest) into caller-owned out[limit] (*n filled; each
 * with its result, request NULL; dispose each). *more: older ones remain.
 * 400 naming "after" when no plan of this kind has that id. */
int hwdb_plan_list(hwdb *db, const char *kind, const char *after, size_t limit, hwdb_plan *out,
                   size_t *n, int *more, svc_err *err);

/* ---- Plan validations (hwdb/plan_validations.c; owned by api/plan_validate.c)
 * A runner job that ran one side ("baseline" | "planned") of a stored plan,
 * with info: opaque JSON of what the plan predicted for that side. */
typedef struct {
  int64_t job_id;
  char side[16];
  char *info; /* malloc'd */
  double created_at;
} hwdb_plan_val;

/* Link job_id to plan_id. */
int hwdb_plan_val_add(hwdb *db, const char *plan_id, const char *side, int64_t job_id,
                      const char *info, svc_err *err);
/* The plan's validation jobs, newest first, at most cap into caller-owned
 * out[cap] (*n filled; dispose each). */
int hwdb_plan_val_list(hwdb *db, const char *plan_id, hwdb_plan_val *out, size_t cap, size_t *n,
                       svc_err *err);
void hwdb_plan_val_dispose(hwdb_plan_val *v);
/* The plan job_id ran a side of, into plan_id (at least 33 bytes); 404
 * (negated SVC_NOT_FOUND) when the job ran no plan's side. */
int hwdb_plan_val_plan_of(hwdb *db, int64_t job_id, char *plan_id, size_t size, svc_err *err);

#endif
