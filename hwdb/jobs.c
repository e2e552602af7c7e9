/* hwdb validation jobs: the job rows and their state history.
 *
 * Invariants: a job's state only moves through hwdb_job_transition, a
 * compare-and-set on the current state inside one transaction that also
 * appends the history row, so the history is exactly the sequence of
 * states the row went through and a final state is never left twice.
 * Texts (params, prediction, result) are opaque here: validate/ and api/
 * give them meaning.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hwdb/hwdb_int.h"

/* Unix seconds with a fraction: the same value within one statement. */
#define NOW_SQ "((julianday('now') - 2440587.5) * 86400.0)"
#define NOW_PG "extract(epoch from statement_timestamp())::float8"
/* The columns read_row reads; JOB_COLS_NO_RESULT reads NULL for the result
 * (a sweep's is megabytes, and lists never print it). */
#define JOB_COLS_WITH(result)                                                                      \
  "id, kind, hw, backend, state, token_hash, params, prediction, " result ", note, workdir, "      \
  "slurm_id, pid, pid_start, timeout_s, gpus, created_at, coalesce(started_at, 0), "               \
  "coalesce(finished_at, 0), updated_at"
#define JOB_COLS JOB_COLS_WITH("result")
#define JOB_COLS_NO_RESULT JOB_COLS_WITH("NULL")
#define ACTIVE_SQL "state IN ('queued', 'running')"
/* A job's deadline; the same expression as the index val_job_deadline
 * (migration 5 in sqlite.c, 1 in pg.c), so that the database can use it.
 * The SQLite queries name their partial index (INDEXED BY): without
 * ANALYZE statistics SQLite prefers val_job_state, which walks every
 * active job. */
#define DEADLINE_SQL                                                                               \
  "(CASE backend WHEN 'local' THEN started_at WHEN 'bundle' THEN created_at END + timeout_s)"
#define SQ_PG(db, sq, pg) (hwdb_pg(db) ? (pg) : (sq))

static int read_row(hwdb *db, hwdb_stmt *st, hwdb_job *j) {
  memset(j, 0, sizeof *j);
  j->id = hwdb_col_int64(db, st, 0);
  hwdb_copy_col(db, st, 1, j->kind, sizeof j->kind);
  hwdb_copy_col(db, st, 2, j->hw, sizeof j->hw);
  hwdb_copy_col(db, st, 3, j->backend, sizeof j->backend);
  hwdb_copy_col(db, st, 4, j->state, sizeof j->state);
  hwdb_copy_col(db, st, 5, j->token_hash, sizeof j->token_hash);
  j->params = hwdb_strdup_col(db, st, 6);
  j->prediction = hwdb_strdup_col(db, st, 7);
  j->result = hwdb_strdup_col(db, st, 8);
  j->note = hwdb_strdup_col(db, st, 9);
  j->workdir = hwdb_strdup_col(db, st, 10);
  j->slurm_id = hwdb_col_int64(db, st, 11);
  j->pid = hwdb_col_int64(db, st, 12);
  j->pid_start = hwdb_col_int64(db, st, 13);
  j->timeout_s = hwdb_col_int64(db, st, 14);
  j->gpus = hwdb_col_int64(db, st, 15);
  j->created_at = hwdb_col_double(db, st, 16);
  j->started_at = hwdb_col_double(db, st, 17);
  j->finished_at = hwdb_col_double(db, st, 18);
  j->updated_at = hwdb_col_double(db, st, 19);
  /* strdup failures leave NULL where the column held text. */
  if (!j->params && hwdb_col_text(db, st, 6)) return -1;
  return 0;
}

/* Run one prepared write (bound by bind) to its end inside the caller's
 * transaction; *changed (may be NULL) gets the rows it changed. */
static int run(hwdb *db, hwdb_stmt *st, const char *what, int64_t *changed, svc_err *err) {
  int rc;
  while ((rc = hwdb_step(db, st, what, err)) == 1) {
  }
  if (!rc && changed) *changed = hwdb_changes(db, st);
  return rc;
}

/* One history row, inside the caller's transaction. */
#define ADD_EVENT_SQL(now)                                                                         \
  "INSERT INTO val_job_history(job_id, state, at, note) VALUES (?1, ?2, " now ", ?3)"
static int add_event(hwdb *db, hwdb_conn *c, int64_t id, const char *state, const char *note,
                     svc_err *err) {
  hwdb_stmt *st = NULL;
  int rc;
  if ((rc = hwdb_prepare(db, c, SQ_PG(db, ADD_EVENT_SQL(NOW_SQ), ADD_EVENT_SQL(NOW_PG)), &st, err)))
    return rc;
  hwdb_bind_int64(db, st, 1, id);
  hwdb_bind_text(db, st, 2, state);
  hwdb_bind_text(db, st, 3, note);
  rc = run(db, st, "write job history", NULL, err);
  hwdb_finalize(db, st);
  return rc;
}

#define JOB_ADD_SQL(now)                                                                           \
  "INSERT INTO val_job(kind, hw, backend, params, prediction, state, token_hash, timeout_s, "      \
  "gpus, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, 'queued', ?6, ?7, ?8, " now ", " now  \
  ") RETURNING id, created_at"
static int add_tx(hwdb *db, hwdb_conn *c, void *arg, svc_err *err) {
  hwdb_job *job = arg;
  hwdb_stmt *st = NULL;
  int rc;
  if ((rc = hwdb_prepare(db, c, SQ_PG(db, JOB_ADD_SQL(NOW_SQ), JOB_ADD_SQL(NOW_PG)), &st, err)))
    return rc;
  hwdb_bind_text(db, st, 1, job->kind);
  hwdb_bind_text(db, st, 2, job->hw);
  hwdb_bind_text(db, st, 3, job->backend);
  hwdb_bind_text(db, st, 4, job->params ? job->params : "{}");
  hwdb_bind_text(db, st, 5, job->prediction);
  hwdb_bind_text(db, st, 6, job->token_hash);
  hwdb_bind_int64(db, st, 7, job->timeout_s);
  hwdb_bind_int64(db, st, 8, job->gpus);
  rc = hwdb_step(db, st, "store job", err);
  if (rc == 1) {
    job->id = hwdb_col_int64(db, st, 0);
    job->created_at = hwdb_col_double(db, st, 1);
    rc = 0;
  } else if (rc == 0) {
    rc = svc_err_set(err, SVC_DB, "", "database: store job: no id returned");
  }
  hwdb_finalize(db, st);
  return rc ? rc : add_event(db, c, job->id, "queued", "submitted", err);
}

int hwdb_job_add(hwdb *db, hwdb_job *job, svc_err *err) {
  int rc = hwdb_tx(db, add_tx, job, err);
  if (!rc) svc_strlcpy(job->state, "queued", sizeof job->state);
  return rc;
}

int hwdb_job_get(hwdb *db, int64_t id, hwdb_job *out, svc_err *err) {
  hwdb_conn *c = NULL;
  hwdb_stmt *st = NULL;
  int rc;
  memset(out, 0, sizeof *out);
  if ((rc = hwdb_acquire(db, 0, &c, err))) return rc;
  if ((rc = hwdb_prepare(db, c, "SELECT " JOB_COLS " FROM val_job WHERE id = ?1", &st, err)))
    goto cleanup;
  hwdb_bind_int64(db, st, 1, id);
  rc = hwdb_step(db, st, "read job", err);
  if (rc == 1) {
    rc = 0;
    if (read_row(db, st, out)) {
      hwdb_job_dispose(out);
      rc = svc_err_set(err, SVC_NOMEM, "", NULL);
    }
  } else if (rc == 0) {
    rc = svc_err_set(err, SVC_NOT_FOUND, "id", "no validation job %lld", (long long)id);
  }
cleanup:
  hwdb_finalize(db, st);
  hwdb_release(db, c);
  return rc;
}

int hwdb_job_list(hwdb *db, int active_only, int limit, hwdb_job **out, size_t *n, svc_err *err) {
  return hwdb_job_list_flags(db, active_only, limit, 0, out, n, err);
}

int hwdb_job_list_flags(hwdb *db, int active_only, int limit, unsigned flags, hwdb_job **out,
                        size_t *n, svc_err *err) {
  hwdb_conn *c = NULL;
  hwdb_stmt *st = NULL;
  hwdb_job *list = NULL;
  size_t cnt = 0, cap = 0;
  int rc;
  *out = NULL;
  *n = 0;
  if ((rc = hwdb_acquire(db, 0, &c, err))) return rc;
  if ((rc = hwdb_prepare(db, c,
                         (flags & HWDB_JOB_NO_RESULT)
                             ? "SELECT " JOB_COLS_NO_RESULT " FROM val_job WHERE ?1 = 0 OR "
                               "state IN ('queued', 'running') ORDER BY id DESC LIMIT ?2"
                             : "SELECT " JOB_COLS " FROM val_job WHERE ?1 = 0 OR state IN "
                               "('queued', 'running') ORDER BY id DESC LIMIT ?2",
                         &st, err)))
    goto cleanup;
  hwdb_bind_int64(db, st, 1, active_only != 0);
  /* No limit: SQLite reads LIMIT -1 so, PostgreSQL refuses a negative one. */
  hwdb_bind_int64(db, st, 2, limit > 0 ? limit : hwdb_pg(db) ? INT64_MAX : -1);
  while ((rc = hwdb_step(db, st, "list jobs", err)) == 1) {
    if (cnt == cap) {
      cap = cap ? cap * 2 : 16;
      hwdb_job *grown = realloc(list, cap * sizeof *grown);
      if (!grown) {
        rc = svc_err_set(err, SVC_NOMEM, "", NULL);
        goto cleanup;
      }
      list = grown;
    }
    if (read_row(db, st, &list[cnt++])) {
      rc = svc_err_set(err, SVC_NOMEM, "", NULL);
      goto cleanup;
    }
  }
  if (rc) goto cleanup;
  *out = list;
  *n = cnt;
  list = NULL;
cleanup:
  hwdb_finalize(db, st);
  hwdb_release(db, c);
  hwdb_job_list_free(list, cnt);
  return rc;
}

typedef struct {
  int64_t id;
  const char *from, *to, *note, *result;
  int moved;
} transition_args;

/* instr/strpos(',' || from || ',', ',' || state || ',') matches whole names. */
#define TRANSITION_SQL(now, find)                                                                  \
  "UPDATE val_job SET state = ?2, note = ?3, result = coalesce(?4, result), updated_at = " now     \
  ", started_at = CASE WHEN ?2 = 'running' THEN coalesce(started_at, " now                         \
  ") ELSE started_at END, finished_at = CASE WHEN ?2 IN ('done','failed','cancelled') THEN " now   \
  " ELSE finished_at END WHERE id = ?1 AND " find "(',' || ?5 || ',', ',' || state || ',') > 0"
static int transition_tx(hwdb *db, hwdb_conn *c, void *arg, svc_err *err) {
  transition_args *a = arg;
  hwdb_stmt *st = NULL;
  int64_t changed = 0;
  int rc;
  if ((rc = hwdb_prepare(
           db, c, SQ_PG(db, TRANSITION_SQL(NOW_SQ, "instr"), TRANSITION_SQL(NOW_PG, "strpos")), &st,
           err)))
    return rc;
  hwdb_bind_int64(db, st, 1, a->id);
  hwdb_bind_text(db, st, 2, a->to);
  hwdb_bind_text(db, st, 3, a->note);
  hwdb_bind_text(db, st, 4, a->result);
  hwdb_bind_text(db, st, 5, a->from);
  rc = run(db, st, "update job", &changed, err);
  hwdb_finalize(db, st);
  a->moved = changed > 0;
  if (!rc && a->moved) rc = add_event(db, c, a->id, a->to, a->note, err);
  return rc;
}

int hwdb_job_transition(hwdb *db, int64_t id, const char *from, const char *to, const char *note,
                        const char *result, int *changed, svc_err *err) {
  transition_args a = {.id = id, .from = from, .to = to, .note = note, .result = result};
  if (changed) *changed = 0;
  int rc = hwdb_tx(db, transition_tx, &a, err);
  if (!rc && changed) *changed = a.moved;
  return rc;
}

typedef struct {
  int64_t id, slurm_id, pid, pid_start;
  const char *workdir;
} handles_args;

#define HANDLES_SQL(now)                                                                           \
  "UPDATE val_job SET slurm_id = CASE WHEN ?2 <> 0 THEN ?2 ELSE slurm_id END, "                    \
  "pid = CASE WHEN ?3 <> 0 THEN ?3 ELSE pid END, "                                                 \
  "pid_start = CASE WHEN ?4 <> 0 THEN ?4 ELSE pid_start END, "                                     \
  "workdir = coalesce(?5, workdir), updated_at = " now " WHERE id = ?1"
static int handles_tx(hwdb *db, hwdb_conn *c, void *arg, svc_err *err) {
  handles_args *a = arg;
  hwdb_stmt *st = NULL;
  int64_t changed = 0;
  int rc;
  if ((rc = hwdb_prepare(db, c, SQ_PG(db, HANDLES_SQL(NOW_SQ), HANDLES_SQL(NOW_PG)), &st, err)))
    return rc;
  hwdb_bind_int64(db, st, 1, a->id);
  hwdb_bind_int64(db, st, 2, a->slurm_id);
  hwdb_bind_int64(db, st, 3, a->pid);
  hwdb_bind_int64(db, st, 4, a->pid_start);
  hwdb_bind_text(db, st, 5, a->workdir);
  rc = run(db, st, "update job handles", &changed, err);
  hwdb_finalize(db, st);
  if (!rc && changed == 0)
    rc = svc_err_set(err, SVC_NOT_FOUND, "id", "no validation job %lld", (long long)a->id);
  return rc;
}

int hwdb_job_set_handles(hwdb *db, int64_t id, int64_t slurm_id, int64_t pid, int64_t pid_start,
                         const char *workdir, svc_err *err) {
  handles_args a = {
      .id = id, .slurm_id = slurm_id, .pid = pid, .pid_start = pid_start, .workdir = workdir};
  return hwdb_tx(db, handles_tx, &a, err);
}

int hwdb_job_history(hwdb *db, int64_t id, hwdb_job_event **out, size_t *n, svc_err *err) {
  hwdb_conn *c = NULL;
  hwdb_stmt *st = NULL;
  hwdb_job_event *ev = NULL;
  size_t cnt = 0, cap = 0;
  int rc;
  *out = NULL;
  *n = 0;
  if ((rc = hwdb_acquire(db, 0, &c, err))) return rc;
  if ((rc = hwdb_prepare(db, c,
                         "SELECT state, at, note FROM val_job_history WHERE job_id = ?1 "
                         "ORDER BY seq",
                         &st, err)))
    goto cleanup;
  hwdb_bind_int64(db, st, 1, id);
  while ((rc = hwdb_step(db, st, "read job history", err)) == 1) {
    if (cnt == cap) {
      cap = cap ? cap * 2 : 8;
      hwdb_job_event *grown = realloc(ev, cap * sizeof *grown);
      if (!grown) {
        rc = svc_err_set(err, SVC_NOMEM, "", NULL);
        goto cleanup;
      }
      ev = grown;
    }
    hwdb_copy_col(db, st, 0, ev[cnt].state, sizeof ev[cnt].state);
    ev[cnt].at = hwdb_col_double(db, st, 1);
    ev[cnt].note = hwdb_strdup_col(db, st, 2);
    cnt++;
  }
  if (rc) goto cleanup;
  *out = ev;
  *n = cnt;
  ev = NULL;
cleanup:
  hwdb_finalize(db, st);
  hwdb_release(db, c);
  hwdb_job_history_free(ev, cnt);
  return rc;
}

/* The reconcile tick's id queries: one statement, its first column as
 * ids (at most cap), run in a write transaction (pick_poll and claim
 * write; expired reads what they compete for). */
typedef struct {
  const char *sql, *what, *text;
  int64_t num;
  int has_real;
  double real;
  int64_t *ids;
  size_t cap, n;
} ids_args;

static int ids_tx(hwdb *db, hwdb_conn *c, void *arg, svc_err *err) {
  ids_args *a = arg;
  hwdb_stmt *st = NULL;
  int rc, i = 1;
  a->n = 0;
  if ((rc = hwdb_prepare(db, c, a->sql, &st, err))) return rc;
  if (a->text) hwdb_bind_text(db, st, i++, a->text);
  if (a->has_real) hwdb_bind_double(db, st, i++, a->real);
  hwdb_bind_int64(db, st, i, a->num);
  while ((rc = hwdb_step(db, st, a->what, err)) == 1)
    if (a->n < a->cap) a->ids[a->n++] = hwdb_col_int64(db, st, 0);
  hwdb_finalize(db, st);
  return rc;
}

/* Run a's query in a write transaction: *n ids into a->ids. */
static int run_ids(hwdb *db, ids_args *a, size_t *n, svc_err *err) {
  *n = 0;
  if (a->cap == 0) return 0;
  int rc = hwdb_tx(db, ids_tx, a, err);
  if (!rc) *n = a->n;
  return rc;
}

#define EXPIRED_SQL(indexed)                                                                       \
  "SELECT id FROM val_job " indexed " WHERE " ACTIVE_SQL " AND " DEADLINE_SQL                      \
  " <= ?1 ORDER BY " DEADLINE_SQL " LIMIT ?2"
int hwdb_job_expired(hwdb *db, double now, int64_t *ids, size_t cap, size_t *n, svc_err *err) {
  ids_args a = {.sql = SQ_PG(db, EXPIRED_SQL("INDEXED BY val_job_deadline"), EXPIRED_SQL("")),
                .what = "select jobs",
                .has_real = 1,
                .real = now,
                .num = (int64_t)cap,
                .ids = ids,
                .cap = cap};
  return run_ids(db, &a, n, err);
}

/* One statement picks and stamps, so two tickers (the server's timer and
 * a list request) take different jobs rather than the same ones. */
#define PICK_SQL(now, indexed)                                                                     \
  "UPDATE val_job SET checked_at = " now " WHERE id IN (SELECT id FROM val_job " indexed           \
  " WHERE " ACTIVE_SQL " AND backend <> 'bundle' ORDER BY checked_at, id LIMIT ?1) RETURNING id"
int hwdb_job_pick_poll(hwdb *db, int64_t *ids, size_t cap, size_t *n, svc_err *err) {
  ids_args a = {.sql = SQ_PG(db, PICK_SQL(NOW_SQ, "INDEXED BY val_job_poll"), PICK_SQL(NOW_PG, "")),
                .what = "select jobs",
                .num = (int64_t)cap,
                .ids = ids,
                .cap = cap};
  return run_ids(db, &a, n, err);
}

/* One UPDATE is atomic across threads and processes (SQLite's write lock,
 * PostgreSQL's serializable transaction): the count and the claim cannot
 * be split by another claimer. Both look only at active non-bundle rows
 * (val_job_poll), however many bundle jobs wait. */
#define CLAIM_SQL(now, indexed)                                                                    \
  "UPDATE val_job SET pid = -1, updated_at = " now " WHERE id = (SELECT id FROM val_job " indexed  \
  " WHERE " ACTIVE_SQL " AND backend <> 'bundle' AND state = 'queued' AND backend = ?1 AND "       \
  "pid = 0 AND workdir IS NOT NULL ORDER BY id LIMIT 1) AND (SELECT count(*) FROM "                \
  "val_job " indexed " WHERE " ACTIVE_SQL                                                          \
  " AND backend <> 'bundle' AND backend = ?1 AND pid <> 0) < ?2 RETURNING id"
int hwdb_job_claim_slot(hwdb *db, const char *backend, int64_t max_started, int64_t *id,
                        svc_err *err) {
  int64_t got = 0;
  ids_args a = {.sql =
                    SQ_PG(db, CLAIM_SQL(NOW_SQ, "INDEXED BY val_job_poll"), CLAIM_SQL(NOW_PG, "")),
                .what = "claim a job slot",
                .text = backend,
                .num = max_started,
                .ids = &got,
                .cap = 1};
  size_t n = 0;
  *id = 0;
  int rc = run_ids(db, &a, &n, err);
  if (!rc && n) *id = got;
  return rc;
}

int hwdb_job_count_active(hwdb *db, int64_t *n, svc_err *err) {
  *n = 0;
  return hwdb_count(db, "SELECT count(*) FROM val_job WHERE " ACTIVE_SQL, "count jobs", n, err);
}

int hwdb_job_count_states(hwdb *db, const char *const *states, int64_t *counts, size_t n,
                          svc_err *err) {
  hwdb_conn *c = NULL;
  hwdb_stmt *st = NULL;
  int rc;
  for (size_t i = 0; i < n; i++) counts[i] = 0;
  if ((rc = hwdb_acquire(db, 0, &c, err))) return rc;
  if ((rc = hwdb_prepare(db, c, "SELECT state, count(*) FROM val_job GROUP BY state", &st, err)))
    goto cleanup;
  while ((rc = hwdb_step(db, st, "count jobs by state", err)) == 1) {
    const char *state = hwdb_col_text(db, st, 0);
    for (size_t i = 0; i < n && state; i++)
      if (!strcmp(state, states[i])) counts[i] = hwdb_col_int64(db, st, 1);
  }
cleanup:
  hwdb_finalize(db, st);
  hwdb_release(db, c);
  return rc;
}

void hwdb_job_dispose(hwdb_job *job) {
  if (!job) return;
  free(job->params);
  free(job->prediction);
  free(job->result);
  free(job->note);
  free(job->workdir);
  job->params = job->prediction = job->result = job->note = job->workdir = NULL;
}

void hwdb_job_list_free(hwdb_job *list, size_t n) {
  for (size_t i = 0; list && i < n; i++) hwdb_job_dispose(&list[i]);
  free(list);
}

void hwdb_job_history_free(hwdb_job_event *ev, size_t n) {
  for (size_t i = 0; ev && i < n; i++) free(ev[i].note);
  free(ev);
}
