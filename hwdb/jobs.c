/* hwdb validation jobs: the job rows and their state history.
 *
 * Invariants: a job's state only moves through hwdb_job_transition, a
 * compare-and-set on the current state inside one transaction that also
 * appends the history row, so the history is exactly the sequence of
 * states the row went through and a final state is never left twice.
 * Texts (params, prediction, result) are opaque here: validate/ and api/
 * give them meaning.
 */
#include <stdlib.h>
#include <string.h>

#include "hwdb/hwdb_int.h"

#define NOW_SQL "((julianday('now') - 2440587.5) * 86400.0)"
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
 * (migration 5 in hwdb.c), so that SQLite can use it. The queries name
 * their partial index (INDEXED BY): without ANALYZE statistics SQLite
 * prefers val_job_state, which walks every active job. */
#define DEADLINE_SQL                                                                               \
  "(CASE backend WHEN 'local' THEN started_at WHEN 'bundle' THEN created_at END + timeout_s)"

static void copy_col(sqlite3_stmt *st, int col, char *dst, size_t size) {
  const unsigned char *s = sqlite3_column_text(st, col);
  svc_strlcpy(dst, s ? (const char *)s : "", size);
}

static int read_row(sqlite3_stmt *st, hwdb_job *j) {
  memset(j, 0, sizeof *j);
  j->id = sqlite3_column_int64(st, 0);
  copy_col(st, 1, j->kind, sizeof j->kind);
  copy_col(st, 2, j->hw, sizeof j->hw);
  copy_col(st, 3, j->backend, sizeof j->backend);
  copy_col(st, 4, j->state, sizeof j->state);
  copy_col(st, 5, j->token_hash, sizeof j->token_hash);
  j->params = hwdb_strdup_col(st, 6);
  j->prediction = hwdb_strdup_col(st, 7);
  j->result = hwdb_strdup_col(st, 8);
  j->note = hwdb_strdup_col(st, 9);
  j->workdir = hwdb_strdup_col(st, 10);
  j->slurm_id = sqlite3_column_int64(st, 11);
  j->pid = sqlite3_column_int64(st, 12);
  j->pid_start = sqlite3_column_int64(st, 13);
  j->timeout_s = sqlite3_column_int64(st, 14);
  j->gpus = sqlite3_column_int64(st, 15);
  j->created_at = sqlite3_column_double(st, 16);
  j->started_at = sqlite3_column_double(st, 17);
  j->finished_at = sqlite3_column_double(st, 18);
  j->updated_at = sqlite3_column_double(st, 19);
  /* strdup failures leave NULL where the column held text. */
  if (!j->params && sqlite3_column_type(st, 6) != SQLITE_NULL) return -1;
  return 0;
}

static void bind_opt(sqlite3_stmt *st, int i, const char *s) {
  if (s)
    sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
  else
    sqlite3_bind_null(st, i);
}

/* One history row; the caller holds the lock and a transaction. */
static int add_event(hwdb *db, int64_t id, const char *state, const char *note, svc_err *err) {
  sqlite3_stmt *st = NULL;
  int rc = 0;
  if (sqlite3_prepare_v2(db->conn,
                         "INSERT INTO val_job_history(job_id, state, at, note) "
                         "VALUES (?1, ?2, " NOW_SQL ", ?3)",
                         -1, &st, NULL) != SQLITE_OK)
    return hwdb_fail(db, err, "prepare");
  sqlite3_bind_int64(st, 1, id);
  sqlite3_bind_text(st, 2, state, -1, SQLITE_STATIC);
  bind_opt(st, 3, note);
  if (sqlite3_step(st) != SQLITE_DONE) rc = hwdb_fail(db, err, "write job history");
  sqlite3_finalize(st);
  return rc;
}

int hwdb_job_add(hwdb *db, hwdb_job *job, svc_err *err) {
  sqlite3_stmt *st = NULL;
  int rc = 0;
  pthread_mutex_lock(&db->lock);
  if ((rc = hwdb_exec(db, "BEGIN IMMEDIATE;", err))) goto cleanup;
  if (sqlite3_prepare_v2(db->conn,
                         "INSERT INTO val_job(kind, hw, backend, params, prediction, state, "
                         "token_hash, timeout_s, gpus, created_at, updated_at) VALUES (?1, ?2, ?3, "
                         "?4, ?5, 'queued', ?6, ?7, ?8, " NOW_SQL ", " NOW_SQL
                         ") RETURNING id, created_at",
                         -1, &st, NULL) != SQLITE_OK) {
    rc = hwdb_fail(db, err, "prepare");
    goto rollback;
  }
  sqlite3_bind_text(st, 1, job->kind, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 2, job->hw, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 3, job->backend, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 4, job->params ? job->params : "{}", -1, SQLITE_STATIC);
  bind_opt(st, 5, job->prediction);
  sqlite3_bind_text(st, 6, job->token_hash, -1, SQLITE_STATIC);
  sqlite3_bind_int64(st, 7, job->timeout_s);
  sqlite3_bind_int64(st, 8, job->gpus);
  if (sqlite3_step(st) != SQLITE_ROW) {
    rc = hwdb_fail(db, err, "store job");
    goto rollback;
  }
  job->id = sqlite3_column_int64(st, 0);
  job->created_at = sqlite3_column_double(st, 1);
  svc_strlcpy(job->state, "queued", sizeof job->state);
  sqlite3_finalize(st);
  st = NULL;
  if ((rc = add_event(db, job->id, "queued", "submitted", err))) goto rollback;
  if ((rc = hwdb_exec(db, "COMMIT;", err))) goto rollback;
  goto cleanup;
rollback:
  sqlite3_finalize(st);
  hwdb_exec(db, "ROLLBACK;", NULL);
cleanup:
  pthread_mutex_unlock(&db->lock);
  return rc;
}

int hwdb_job_get(hwdb *db, int64_t id, hwdb_job *out, svc_err *err) {
  sqlite3_stmt *st = NULL;
  int rc = 0, step;
  memset(out, 0, sizeof *out);
  sqlite3 *c = hwdb_reader(db);
  if (sqlite3_prepare_v2(c, "SELECT " JOB_COLS " FROM val_job WHERE id = ?1", -1, &st, NULL) !=
      SQLITE_OK) {
    rc = hwdb_fail_conn(c, err, "prepare");
    goto cleanup;
  }
  sqlite3_bind_int64(st, 1, id);
  step = sqlite3_step(st);
  if (step == SQLITE_ROW) {
    if (read_row(st, out)) {
      hwdb_job_dispose(out);
      rc = svc_err_set(err, SVC_NOMEM, "", NULL);
    }
  } else if (step == SQLITE_DONE) {
    rc = svc_err_set(err, SVC_NOT_FOUND, "id", "no validation job %lld", (long long)id);
  } else {
    rc = hwdb_fail_conn(c, err, "read job");
  }
cleanup:
  sqlite3_finalize(st);
  hwdb_reader_done(db);
  return rc;
}

int hwdb_job_list(hwdb *db, int active_only, int limit, hwdb_job **out, size_t *n, svc_err *err) {
  return hwdb_job_list_flags(db, active_only, limit, 0, out, n, err);
}

int hwdb_job_list_flags(hwdb *db, int active_only, int limit, unsigned flags, hwdb_job **out,
                        size_t *n, svc_err *err) {
  sqlite3_stmt *st = NULL;
  hwdb_job *list = NULL;
  size_t cnt = 0, cap = 0;
  int rc = 0, step;
  *out = NULL;
  *n = 0;
  sqlite3 *c = hwdb_reader(db);
  if (sqlite3_prepare_v2(c,
                         (flags & HWDB_JOB_NO_RESULT)
                             ? "SELECT " JOB_COLS_NO_RESULT " FROM val_job WHERE ?1 = 0 OR "
                               "state IN ('queued', 'running') ORDER BY id DESC LIMIT ?2"
                             : "SELECT " JOB_COLS " FROM val_job WHERE ?1 = 0 OR state IN "
                               "('queued', 'running') ORDER BY id DESC LIMIT ?2",
                         -1, &st, NULL) != SQLITE_OK) {
    rc = hwdb_fail_conn(c, err, "prepare");
    goto cleanup;
  }
  sqlite3_bind_int(st, 1, active_only != 0);
  sqlite3_bind_int(st, 2, limit > 0 ? limit : -1);
  while ((step = sqlite3_step(st)) == SQLITE_ROW) {
    if (cnt == cap) {
      cap = cap ? cap * 2 : 16;
      hwdb_job *grown = realloc(list, cap * sizeof *grown);
      if (!grown) {
        rc = svc_err_set(err, SVC_NOMEM, "", NULL);
        goto cleanup;
      }
      list = grown;
    }
    if (read_row(st, &list[cnt++])) {
      rc = svc_err_set(err, SVC_NOMEM, "", NULL);
      goto cleanup;
    }
  }
  if (step != SQLITE_DONE) {
    rc = hwdb_fail_conn(c, err, "list jobs");
    goto cleanup;
  }
  *out = list;
  *n = cnt;
  list = NULL;
cleanup:
  sqlite3_finalize(st);
  hwdb_reader_done(db);
  hwdb_job_list_free(list, cnt);
  return rc;
}

int hwdb_job_transition(hwdb *db, int64_t id, const char *from, const char *to, const char *note,
                        const char *result, int *changed, svc_err *err) {
  sqlite3_stmt *st = NULL;
  int rc = 0, moved = 0;
  if (changed) *changed = 0;
  pthread_mutex_lock(&db->lock);
  if ((rc = hwdb_exec(db, "BEGIN IMMEDIATE;", err))) goto cleanup;
  /* instr(',' || from || ',', ',' || state || ',') matches whole names. */
  if (sqlite3_prepare_v2(db->conn,
                         "UPDATE val_job SET state = ?2, note = ?3, result = coalesce(?4, result), "
                         "updated_at = " NOW_SQL ", "
                         "started_at = CASE WHEN ?2 = 'running' THEN coalesce(started_at, " NOW_SQL
                         ") ELSE started_at END, "
                         "finished_at = CASE WHEN ?2 IN ('done','failed','cancelled') THEN " NOW_SQL
                         " ELSE finished_at END "
                         "WHERE id = ?1 AND instr(',' || ?5 || ',', ',' || state || ',') > 0",
                         -1, &st, NULL) != SQLITE_OK) {
    rc = hwdb_fail(db, err, "prepare");
    goto rollback;
  }
  sqlite3_bind_int64(st, 1, id);
  sqlite3_bind_text(st, 2, to, -1, SQLITE_STATIC);
  bind_opt(st, 3, note);
  bind_opt(st, 4, result);
  sqlite3_bind_text(st, 5, from, -1, SQLITE_STATIC);
  if (sqlite3_step(st) != SQLITE_DONE) {
    rc = hwdb_fail(db, err, "update job");
    goto rollback;
  }
  moved = sqlite3_changes(db->conn) > 0;
  sqlite3_finalize(st);
  st = NULL;
  if (moved && (rc = add_event(db, id, to, note, err))) goto rollback;
  if ((rc = hwdb_exec(db, "COMMIT;", err))) goto rollback;
  if (changed) *changed = moved;
  goto cleanup;
rollback:
  sqlite3_finalize(st);
  hwdb_exec(db, "ROLLBACK;", NULL);
cleanup:
  pthread_mutex_unlock(&db->lock);
  return rc;
}

int hwdb_job_set_handles(hwdb *db, int64_t id, int64_t slurm_id, int64_t pid, int64_t pid_start,
                         const char *workdir, svc_err *err) {
  sqlite3_stmt *st = NULL;
  int rc = 0;
  pthread_mutex_lock(&db->lock);
  if (sqlite3_prepare_v2(db->conn,
                         "UPDATE val_job SET slurm_id = CASE WHEN ?2 THEN ?2 ELSE slurm_id END, "
                         "pid = CASE WHEN ?3 THEN ?3 ELSE pid END, "
                         "pid_start = CASE WHEN ?4 THEN ?4 ELSE pid_start END, "
                         "workdir = coalesce(?5, workdir), updated_at = " NOW_SQL " WHERE id = ?1",
                         -1, &st, NULL) != SQLITE_OK) {
    rc = hwdb_fail(db, err, "prepare");
    goto cleanup;
  }
  sqlite3_bind_int64(st, 1, id);
  sqlite3_bind_int64(st, 2, slurm_id);
  sqlite3_bind_int64(st, 3, pid);
  sqlite3_bind_int64(st, 4, pid_start);
  bind_opt(st, 5, workdir);
  if (sqlite3_step(st) != SQLITE_DONE)
    rc = hwdb_fail(db, err, "update job handles");
  else if (sqlite3_changes(db->conn) == 0)
    rc = svc_err_set(err, SVC_NOT_FOUND, "id", "no validation job %lld", (long long)id);
cleanup:
  sqlite3_finalize(st);
  pthread_mutex_unlock(&db->lock);
  return rc;
}

int hwdb_job_history(hwdb *db, int64_t id, hwdb_job_event **out, size_t *n, svc_err *err) {
  sqlite3_stmt *st = NULL;
  hwdb_job_event *ev = NULL;
  size_t cnt = 0, cap = 0;
  int rc = 0, step;
  *out = NULL;
  *n = 0;
  sqlite3 *c = hwdb_reader(db);
  if (sqlite3_prepare_v2(c,
                         "SELECT state, at, note FROM val_job_history WHERE job_id = ?1 "
                         "ORDER BY seq",
                         -1, &st, NULL) != SQLITE_OK) {
    rc = hwdb_fail_conn(c, err, "prepare");
    goto cleanup;
  }
  sqlite3_bind_int64(st, 1, id);
  while ((step = sqlite3_step(st)) == SQLITE_ROW) {
    if (cnt == cap) {
      cap = cap ? cap * 2 : 8;
      hwdb_job_event *grown = realloc(ev, cap * sizeof *grown);
      if (!grown) {
        rc = svc_err_set(err, SVC_NOMEM, "", NULL);
        goto cleanup;
      }
      ev = grown;
    }
    copy_col(st, 0, ev[cnt].state, sizeof ev[cnt].state);
    ev[cnt].at = sqlite3_column_double(st, 1);
    ev[cnt].note = hwdb_strdup_col(st, 2);
    cnt++;
  }
  if (step != SQLITE_DONE) {
    rc = hwdb_fail_conn(c, err, "read job history");
    goto cleanup;
  }
  *out = ev;
  *n = cnt;
  ev = NULL;
cleanup:
  sqlite3_finalize(st);
  hwdb_reader_done(db);
  hwdb_job_history_free(ev, cnt);
  return rc;
}

/* Run st (bound by the caller, the lock held) and collect its first column
 * as ids, at most cap. */
static int collect_ids(hwdb *db, sqlite3_stmt *st, int64_t *ids, size_t cap, size_t *n,
                       svc_err *err) {
  int step;
  while ((step = sqlite3_step(st)) == SQLITE_ROW)
    if (*n < cap) ids[(*n)++] = sqlite3_column_int64(st, 0);
  return step == SQLITE_DONE ? 0 : hwdb_fail(db, err, "select jobs");
}

int hwdb_job_expired(hwdb *db, double now, int64_t *ids, size_t cap, size_t *n, svc_err *err) {
  sqlite3_stmt *st = NULL;
  int rc = 0;
  *n = 0;
  if (cap == 0) return 0;
  pthread_mutex_lock(&db->lock);
  if (sqlite3_prepare_v2(db->conn,
                         "SELECT id FROM val_job INDEXED BY val_job_deadline WHERE " ACTIVE_SQL
                         " AND " DEADLINE_SQL " <= ?1 ORDER BY " DEADLINE_SQL " LIMIT ?2",
                         -1, &st, NULL) != SQLITE_OK) {
    rc = hwdb_fail(db, err, "prepare");
    goto cleanup;
  }
  sqlite3_bind_double(st, 1, now);
  sqlite3_bind_int64(st, 2, (int64_t)cap);
  rc = collect_ids(db, st, ids, cap, n, err);
cleanup:
  sqlite3_finalize(st);
  pthread_mutex_unlock(&db->lock);
  return rc;
}

int hwdb_job_pick_poll(hwdb *db, int64_t *ids, size_t cap, size_t *n, svc_err *err) {
  sqlite3_stmt *st = NULL;
  int rc = 0;
  *n = 0;
  if (cap == 0) return 0;
  pthread_mutex_lock(&db->lock);
  /* One statement picks and stamps, so two tickers (the server's timer and
   * a list request) take different jobs rather than the same ones. */
  if (sqlite3_prepare_v2(
          db->conn,
          "UPDATE val_job SET checked_at = " NOW_SQL
          " WHERE id IN (SELECT id FROM val_job INDEXED BY val_job_poll WHERE " ACTIVE_SQL
          " AND backend <> 'bundle' ORDER BY checked_at, id LIMIT ?1) RETURNING id",
          -1, &st, NULL) != SQLITE_OK) {
    rc = hwdb_fail(db, err, "prepare");
    goto cleanup;
  }
  sqlite3_bind_int64(st, 1, (int64_t)cap);
  rc = collect_ids(db, st, ids, cap, n, err);
cleanup:
  sqlite3_finalize(st);
  pthread_mutex_unlock(&db->lock);
  return rc;
}

int hwdb_job_claim_slot(hwdb *db, const char *backend, int64_t max_started, int64_t *id,
                        svc_err *err) {
  sqlite3_stmt *st = NULL;
  int rc = 0, step;
  *id = 0;
  pthread_mutex_lock(&db->lock);
  /* One UPDATE is atomic across threads and processes (SQLite's write lock):
   * the count and the claim cannot be split by another claimer. Both look
   * only at active non-bundle rows (val_job_poll), however many bundle jobs
   * wait. */
  if (sqlite3_prepare_v2(
          db->conn,
          "UPDATE val_job SET pid = -1, updated_at = " NOW_SQL
          " WHERE id = (SELECT id FROM val_job INDEXED BY val_job_poll WHERE " ACTIVE_SQL
          " AND backend <> 'bundle' AND state = 'queued' AND backend = ?1 AND "
          "pid = 0 AND workdir IS NOT NULL ORDER BY id LIMIT 1) AND (SELECT "
          "count(*) FROM val_job INDEXED BY val_job_poll WHERE " ACTIVE_SQL
          " AND backend <> 'bundle' AND backend = ?1 AND pid <> 0) < ?2 RETURNING id",
          -1, &st, NULL) != SQLITE_OK) {
    rc = hwdb_fail(db, err, "prepare");
    goto cleanup;
  }
  sqlite3_bind_text(st, 1, backend, -1, SQLITE_STATIC);
  sqlite3_bind_int64(st, 2, max_started);
  step = sqlite3_step(st);
  if (step == SQLITE_ROW) {
    *id = sqlite3_column_int64(st, 0);
    step = sqlite3_step(st);
  }
  if (step != SQLITE_DONE) rc = hwdb_fail(db, err, "claim a job slot");
cleanup:
  sqlite3_finalize(st);
  pthread_mutex_unlock(&db->lock);
  return rc;
}

int hwdb_job_count_active(hwdb *db, int64_t *n, svc_err *err) {
  sqlite3_stmt *st = NULL;
  int rc = 0;
  *n = 0;
  sqlite3 *c = hwdb_reader(db);
  if (sqlite3_prepare_v2(c, "SELECT count(*) FROM val_job WHERE " ACTIVE_SQL, -1, &st, NULL) !=
      SQLITE_OK) {
    rc = hwdb_fail_conn(c, err, "prepare");
    goto cleanup;
  }
  if (sqlite3_step(st) == SQLITE_ROW)
    *n = sqlite3_column_int64(st, 0);
  else
    rc = hwdb_fail_conn(c, err, "count jobs");
cleanup:
  sqlite3_finalize(st);
  hwdb_reader_done(db);
  return rc;
}

int hwdb_job_count_states(hwdb *db, const char *const *states, int64_t *counts, size_t n,
                          svc_err *err) {
  sqlite3_stmt *st = NULL;
  int rc = 0, step;
  for (size_t i = 0; i < n; i++) counts[i] = 0;
  sqlite3 *c = hwdb_reader(db);
  if (sqlite3_prepare_v2(c, "SELECT state, count(*) FROM val_job GROUP BY state", -1, &st, NULL) !=
      SQLITE_OK) {
    rc = hwdb_fail_conn(c, err, "prepare");
    goto cleanup;
  }
  while ((step = sqlite3_step(st)) == SQLITE_ROW) {
    const char *state = (const char *)sqlite3_column_text(st, 0);
    for (size_t i = 0; i < n && state; i++)
      if (!strcmp(state, states[i])) counts[i] = sqlite3_column_int64(st, 1);
  }
  if (step != SQLITE_DONE) rc = hwdb_fail_conn(c, err, "count jobs by state");
cleanup:
  sqlite3_finalize(st);
  hwdb_reader_done(db);
  return rc;
}

const char *hwdb_filename(hwdb *db) {
  const char *f = sqlite3_db_filename(db->conn, "main");
  return f ? f : "";
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
