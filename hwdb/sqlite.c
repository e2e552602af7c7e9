/* hwdb's SQLite backend: the embedded default, one database file.
 *
 * Invariants: the schema version is PRAGMA user_version; migrations run in
 * order inside one transaction each, so a crash leaves either the old or the
 * new schema. The file is in WAL mode with a busy timeout so that a second
 * process (the CLI beside a running server) waits instead of failing.
 * Writes go through one connection under a mutex; reads of single rows and
 * lists through a connection of their own (WAL: readers never wait for a
 * writer), so that a write waiting on another process's lock (up to the
 * busy timeout) does not stall every read and estimate behind the one
 * mutex. A :memory: database has one connection only.
 *
 * A hwdb_stmt here is the sqlite3_stmt itself; its connection is
 * sqlite3_db_handle(st).
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwdb/hwdb_int.h"

typedef struct {
  sqlite3 *c;
  pthread_mutex_t *lock;
} sq_conn;

typedef struct {
  sq_conn w, r; /* r.c == w.c and r.lock == w.lock for :memory: */
  pthread_mutex_t wlock, rlock;
} sq_db;

#define SQ(db) ((sq_db *)(db)->impl)
#define ST(st) ((sqlite3_stmt *)(st))
#define CONN(c) (((sq_conn *)(c))->c)

/* Numbered migrations: index i moves user_version from i to i+1. Never edit
 * a shipped entry; append a new one. */
static const char *const migrations[] = {
    /* 1: hardware catalog and calibration versions */
    "CREATE TABLE hardware ("
    "  name TEXT PRIMARY KEY,"
    "  vendor TEXT NOT NULL,"
    "  doc TEXT NOT NULL,"
    "  created_at INTEGER NOT NULL DEFAULT (strftime('%s','now')),"
    "  updated_at INTEGER NOT NULL DEFAULT (strftime('%s','now')));"
    "CREATE INDEX hardware_vendor ON hardware(vendor);"
    "CREATE TABLE calibration ("
    "  hw TEXT NOT NULL,"
    "  version INTEGER NOT NULL,"
    "  params TEXT NOT NULL,"
    "  report TEXT,"
    "  created_at INTEGER NOT NULL DEFAULT (strftime('%s','now')),"
    "  PRIMARY KEY (hw, version));",
    /* 2: validation jobs (hwdb/jobs.c): one row per job with its backend
     * handles and result, and the history of its state changes. Times are
     * unix seconds as REAL so that timeouts and the history keep sub-second
     * order. */
    "CREATE TABLE val_job ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  kind TEXT NOT NULL,"
    "  hw TEXT NOT NULL,"
    "  backend TEXT NOT NULL,"
    "  params TEXT NOT NULL,"
    "  prediction TEXT,"
    "  state TEXT NOT NULL,"
    "  token_hash TEXT NOT NULL,"
    "  result TEXT,"
    "  note TEXT,"
    "  slurm_id INTEGER NOT NULL DEFAULT 0,"
    "  pid INTEGER NOT NULL DEFAULT 0,"
    "  pid_start INTEGER NOT NULL DEFAULT 0,"
    "  workdir TEXT,"
    "  timeout_s INTEGER NOT NULL,"
    "  gpus INTEGER NOT NULL DEFAULT 0,"
    "  created_at REAL NOT NULL,"
    "  started_at REAL,"
    "  finished_at REAL,"
    "  updated_at REAL NOT NULL);"
    "CREATE INDEX val_job_state ON val_job(state);"
    "CREATE TABLE val_job_history ("
    "  seq INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  job_id INTEGER NOT NULL REFERENCES val_job(id) ON DELETE CASCADE,"
    "  state TEXT NOT NULL,"
    "  at REAL NOT NULL,"
    "  note TEXT);"
    "CREATE INDEX val_job_history_job ON val_job_history(job_id, seq);",
    /* 3: API tokens (hwdb/tokens.c): the SHA-256 of each secret, never the
     * secret; revoked rows are kept with revoked_at set. */
    "CREATE TABLE api_token ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  name TEXT NOT NULL,"
    "  scopes TEXT NOT NULL,"
    "  hash TEXT NOT NULL UNIQUE,"
    "  created_at REAL NOT NULL,"
    "  revoked_at REAL);",
    /* 4: plans (hwdb/plans.c): each plan or compare answer with its request,
     * keyed by a random id; documents are opaque JSON text. */
    "CREATE TABLE plan ("
    "  id TEXT PRIMARY KEY,"
    "  kind TEXT NOT NULL,"
    "  hw TEXT NOT NULL,"
    "  request TEXT NOT NULL,"
    "  result TEXT NOT NULL,"
    "  created_at REAL NOT NULL);",
    /* 5: validation ticks (hwdb/jobs.c): when the tick last polled a job, so
     * that it takes the least recently checked first, and two partial
     * indexes over active jobs only: the polling order (bundle jobs are
     * never polled) and the deadline (local: from the start, bundle: from
     * submission; Slurm enforces its own --time). The deadline expression
     * is written out again in jobs.c (DEADLINE_SQL) and must stay equal. */
    "ALTER TABLE val_job ADD COLUMN checked_at REAL NOT NULL DEFAULT 0;"
    "CREATE INDEX val_job_poll ON val_job(checked_at, id)"
    "  WHERE state IN ('queued', 'running') AND backend <> 'bundle';"
    "CREATE INDEX val_job_deadline ON val_job((CASE backend WHEN 'local' THEN started_at"
    "  WHEN 'bundle' THEN created_at END + timeout_s))"
    "  WHERE state IN ('queued', 'running');",
    /* 6: per-architecture calibration versions (hwdb/calibration.c), fitted
     * to published measurements and keyed by the descriptors' "arch"; an
     * accelerator without a calibration of its own uses its arch's latest. */
    "CREATE TABLE arch_calibration ("
    "  arch TEXT NOT NULL,"
    "  version INTEGER NOT NULL,"
    "  params TEXT NOT NULL,"
    "  report TEXT,"
    "  created_at INTEGER NOT NULL DEFAULT (strftime('%s','now')),"
    "  PRIMARY KEY (arch, version));",
    /* 7: plan validations (hwdb/plan_validations.c): the runner jobs that
     * ran a stored plan's baseline and planned recipes, each with what the
     * plan predicted for it (opaque JSON); the measurement is the job's
     * result. */
    "CREATE TABLE plan_validation ("
    "  job_id INTEGER PRIMARY KEY REFERENCES val_job(id) ON DELETE CASCADE,"
    "  plan_id TEXT NOT NULL REFERENCES plan(id),"
    "  side TEXT NOT NULL,"
    "  info TEXT NOT NULL,"
    "  created_at REAL NOT NULL);"
    "CREATE INDEX plan_validation_plan ON plan_validation(plan_id, job_id);",
};

static int is_busy(sqlite3 *c) {
  int e = c ? sqlite3_errcode(c) & 0xff : 0;
  return e == SQLITE_BUSY || e == SQLITE_LOCKED;
}

/* A SQLite failure is SVC_DB with its message; a busy or locked database
 * (another process holding the write lock past the busy timeout) is
 * SVC_DB_BUSY, a 503 the client may retry. */
static int fail_conn(sqlite3 *c, svc_err *err, const char *what) {
  if (is_busy(c))
    return svc_err_set(err, SVC_DB_BUSY, "", "database busy (%s: %s); retry shortly", what,
                       sqlite3_errmsg(c));
  return svc_err_set(err, SVC_DB, "", "database: %s: %s", what,
                     c ? sqlite3_errmsg(c) : "no connection");
}

static int exec(sqlite3 *c, const char *sql, svc_err *err) {
  char *msg = NULL;
  if (sqlite3_exec(c, sql, NULL, NULL, &msg) != SQLITE_OK) {
    int rc = is_busy(c) ? svc_err_set(err, SVC_DB_BUSY, "", "database busy (%s); retry shortly",
                                      msg ? msg : "locked")
                        : svc_err_set(err, SVC_DB, "", "database: %s", msg ? msg : "exec failed");
    sqlite3_free(msg);
    return rc;
  }
  return 0;
}

/* The read connection beside the writer; on any failure reads share the
 * writer, which is slower under contention but never wrong. */
static void open_reader(sq_db *q, const char *path) {
  sqlite3 *r = NULL;
  if (!strcmp(path, ":memory:") || !strncmp(path, "file:", 5) || !*path) return;
  if (sqlite3_open_v2(path, &r, SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX, NULL) != SQLITE_OK ||
      sqlite3_exec(r, "PRAGMA query_only=1;", NULL, NULL, NULL) != SQLITE_OK) {
    sqlite3_close_v2(r);
    return;
  }
  sqlite3_busy_timeout(r, 5000);
  q->r.c = r;
  q->r.lock = &q->rlock;
}

static int user_version(sqlite3 *c, int *v, svc_err *err) {
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(c, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK)
    return fail_conn(c, err, "read schema version");
  *v = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
  sqlite3_finalize(st);
  return 0;
}

static int migrate(sqlite3 *c, int *created, svc_err *err) {
  int v = 0, rc = user_version(c, &v, err);
  const int target = (int)(sizeof migrations / sizeof migrations[0]);
  if (rc) return rc;
  *created = v == 0;
  if (v > target)
    return svc_err_set(err, SVC_DB, "db",
                       "database schema version %d is newer than this cdplan (%d)", v, target);
  for (; v < target; v++) {
    char pragma[64];
    snprintf(pragma, sizeof pragma, "PRAGMA user_version = %d;", v + 1);
    if ((rc = exec(c, "BEGIN IMMEDIATE;", err))) return rc;
    if ((rc = exec(c, migrations[v], err)) || (rc = exec(c, pragma, err))) {
      exec(c, "ROLLBACK;", NULL);
      return rc;
    }
    if ((rc = exec(c, "COMMIT;", err))) return rc;
  }
  return 0;
}

static void sq_close(hwdb *db) {
  sq_db *q = SQ(db);
  if (q->r.c && q->r.c != q->w.c) sqlite3_close_v2(q->r.c);
  if (q->w.c) sqlite3_close_v2(q->w.c);
  pthread_mutex_destroy(&q->wlock);
  pthread_mutex_destroy(&q->rlock);
  free(q);
  db->impl = NULL;
}

static int sq_open(hwdb *db, const char *path, int *created, svc_err *err) {
  sq_db *q = calloc(1, sizeof *q);
  if (!q) return svc_err_set(err, SVC_NOMEM, "", NULL);
  pthread_mutex_init(&q->wlock, NULL);
  pthread_mutex_init(&q->rlock, NULL);
  q->w.lock = q->r.lock = &q->wlock;
  db->impl = q;
  if (sqlite3_open_v2(path, &q->w.c,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                      NULL) != SQLITE_OK)
    return svc_err_set(err, SVC_DB, "db", "cannot open database %s: %s", path,
                       q->w.c ? sqlite3_errmsg(q->w.c) : "out of memory");
  q->r.c = q->w.c;
  sqlite3_busy_timeout(q->w.c, 5000);
  /* WAL lets readers proceed beside one writer; synchronous=NORMAL in WAL
   * mode still never corrupts the file on a crash (SQLite docs, "WAL"). */
  int rc = exec(q->w.c,
                "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
                "PRAGMA foreign_keys=ON;",
                err);
  if (!rc) rc = migrate(q->w.c, created, err);
  if (!rc) open_reader(q, path);
  return rc;
}

static int sq_acquire(hwdb *db, int write, hwdb_conn **out, svc_err *err) {
  sq_conn *c = write ? &SQ(db)->w : &SQ(db)->r;
  pthread_mutex_lock(c->lock);
  *out = (hwdb_conn *)c;
  return 0;
}

static void sq_release(hwdb *db, hwdb_conn *c) { pthread_mutex_unlock(((sq_conn *)c)->lock); }

static int sq_prepare(hwdb_conn *c, const char *sql, hwdb_stmt **out, svc_err *err) {
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(CONN(c), sql, -1, &st, NULL) != SQLITE_OK)
    return fail_conn(CONN(c), err, "prepare");
  *out = (hwdb_stmt *)st;
  return 0;
}

static void sq_bind_text(hwdb_stmt *st, int i, const char *s) {
  if (s)
    sqlite3_bind_text(ST(st), i, s, -1, SQLITE_STATIC);
  else
    sqlite3_bind_null(ST(st), i);
}
static void sq_bind_int64(hwdb_stmt *st, int i, int64_t v) { sqlite3_bind_int64(ST(st), i, v); }
static void sq_bind_double(hwdb_stmt *st, int i, double v) { sqlite3_bind_double(ST(st), i, v); }

static int sq_step(hwdb_stmt *st, const char *what, svc_err *err) {
  int s = sqlite3_step(ST(st));
  if (s == SQLITE_ROW) return 1;
  if (s == SQLITE_DONE) return 0;
  return fail_conn(sqlite3_db_handle(ST(st)), err, what);
}

static const char *sq_col_text(hwdb_stmt *st, int col) {
  return (const char *)sqlite3_column_text(ST(st), col);
}
static int64_t sq_col_int64(hwdb_stmt *st, int col) { return sqlite3_column_int64(ST(st), col); }
static double sq_col_double(hwdb_stmt *st, int col) { return sqlite3_column_double(ST(st), col); }
static int64_t sq_changes(hwdb_stmt *st) { return sqlite3_changes(sqlite3_db_handle(ST(st))); }

static int sq_violation(hwdb_stmt *st) {
  int e = sqlite3_extended_errcode(sqlite3_db_handle(ST(st)));
  if (e == SQLITE_CONSTRAINT_UNIQUE || e == SQLITE_CONSTRAINT_PRIMARYKEY) return HWDB_UNIQUE;
  return (e & 0xff) == SQLITE_CONSTRAINT ? HWDB_OTHER_CONSTRAINT : HWDB_NO_VIOLATION;
}

static void sq_finalize(hwdb_stmt *st) { sqlite3_finalize(ST(st)); }

static int sq_begin(hwdb_conn *c, svc_err *err) { return exec(CONN(c), "BEGIN IMMEDIATE;", err); }
static int sq_commit(hwdb_conn *c, svc_err *err) { return exec(CONN(c), "COMMIT;", err); }
static void sq_rollback(hwdb_conn *c) {
  if (!sqlite3_get_autocommit(CONN(c))) exec(CONN(c), "ROLLBACK;", NULL);
}
/* One writer at a time (the file lock): nothing to retry; a lock held past
 * the busy timeout is a 503 the client retries. */
static int sq_retryable(hwdb_conn *c) { return 0; }
static int sq_touch(hwdb_conn *c, svc_err *err) { return 0; }
static uint64_t sq_shared_generation(hwdb *db) { return 0; }

/* One process owns the file's jobs: it always follows them. */
static int sq_leader(hwdb *db, int *state, svc_err *err) {
  *state = HWDB_FOLLOW_SOLE;
  return 0;
}

static const char *sq_filename(hwdb *db) {
  const char *f = sqlite3_db_filename(SQ(db)->w.c, "main");
  return f ? f : "";
}

const hwdb_ops hwdb_sqlite_ops = {
    .is_pg = 0,
    .open = sq_open,
    .close = sq_close,
    .acquire = sq_acquire,
    .release = sq_release,
    .prepare = sq_prepare,
    .bind_text = sq_bind_text,
    .bind_int64 = sq_bind_int64,
    .bind_double = sq_bind_double,
    .step = sq_step,
    .col_text = sq_col_text,
    .col_int64 = sq_col_int64,
    .col_double = sq_col_double,
    .changes = sq_changes,
    .violation = sq_violation,
    .finalize = sq_finalize,
    .begin = sq_begin,
    .commit = sq_commit,
    .rollback = sq_rollback,
    .retryable = sq_retryable,
    .touch = sq_touch,
    .shared_generation = sq_shared_generation,
    .leader = sq_leader,
    .filename = sq_filename,
};
