/* hwdb: opening the database, migrations, and the transaction helper.
 *
 * Invariants: the schema version is PRAGMA user_version; migrations run in
 * order inside one transaction each, so a crash leaves either the old or the
 * new schema. The file is in WAL mode with a busy timeout so that a second
 * process (the CLI beside a running server) waits instead of failing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwdb/hwdb_int.h"

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

int hwdb_fail_conn(sqlite3 *c, svc_err *err, const char *what) {
  if (is_busy(c))
    return svc_err_set(err, SVC_DB_BUSY, "", "database busy (%s: %s); retry shortly", what,
                       sqlite3_errmsg(c));
  return svc_err_set(err, SVC_DB, "", "database: %s: %s", what,
                     c ? sqlite3_errmsg(c) : "no connection");
}

int hwdb_fail(hwdb *db, svc_err *err, const char *what) {
  return hwdb_fail_conn(db ? db->conn : NULL, err, what);
}

sqlite3 *hwdb_reader(hwdb *db) {
  pthread_mutex_lock(db->rlock);
  return db->rconn;
}

void hwdb_reader_done(hwdb *db) { pthread_mutex_unlock(db->rlock); }

/* The read connection beside conn (see hwdb_int.h); on any failure reads
 * share conn, which is slower under contention but never wrong. */
static void open_reader(hwdb *db, const char *path) {
  sqlite3 *r = NULL;
  db->rconn = db->conn;
  db->rlock = &db->lock;
  if (!strcmp(path, ":memory:") || !strncmp(path, "file:", 5) || !*path) return;
  if (sqlite3_open_v2(path, &r, SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX, NULL) != SQLITE_OK ||
      sqlite3_exec(r, "PRAGMA query_only=1;", NULL, NULL, NULL) != SQLITE_OK) {
    sqlite3_close_v2(r);
    return;
  }
  sqlite3_busy_timeout(r, 5000);
  db->rconn = r;
  db->rlock = &db->rlock_own;
}

int hwdb_exec(hwdb *db, const char *sql, svc_err *err) {
  char *msg = NULL;
  if (sqlite3_exec(db->conn, sql, NULL, NULL, &msg) != SQLITE_OK) {
    int rc = is_busy(db->conn)
                 ? svc_err_set(err, SVC_DB_BUSY, "", "database busy (%s); retry shortly",
                               msg ? msg : "locked")
                 : svc_err_set(err, SVC_DB, "", "database: %s", msg ? msg : "exec failed");
    sqlite3_free(msg);
    return rc;
  }
  return 0;
}

char *hwdb_strdup_col(sqlite3_stmt *st, int col) {
  const unsigned char *s = sqlite3_column_text(st, col);
  return s ? strdup((const char *)s) : NULL;
}

static int user_version(hwdb *db, int *v, svc_err *err) {
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(db->conn, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK)
    return hwdb_fail(db, err, "read schema version");
  *v = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
  sqlite3_finalize(st);
  return 0;
}

static int migrate(hwdb *db, int *created, svc_err *err) {
  int v = 0, rc = user_version(db, &v, err);
  const int target = (int)(sizeof migrations / sizeof migrations[0]);
  if (rc) return rc;
  *created = v == 0;
  if (v > target)
    return svc_err_set(err, SVC_DB, "db",
                       "database schema version %d is newer than this cdplan (%d)", v, target);
  for (; v < target; v++) {
    char pragma[64];
    snprintf(pragma, sizeof pragma, "PRAGMA user_version = %d;", v + 1);
    if ((rc = hwdb_exec(db, "BEGIN IMMEDIATE;", err))) return rc;
    if ((rc = hwdb_exec(db, migrations[v], err)) || (rc = hwdb_exec(db, pragma, err))) {
      hwdb_exec(db, "ROLLBACK;", NULL);
      return rc;
    }
    if ((rc = hwdb_exec(db, "COMMIT;", err))) return rc;
  }
  return 0;
}

int hwdb_open(hwdb **out, const char *path, int *created, svc_err *err) {
  hwdb *db = NULL;
  int rc = 0, fresh = 0;
  *out = NULL;
  db = calloc(1, sizeof *db);
  if (!db) return svc_err_set(err, SVC_NOMEM, "", NULL);
  pthread_mutex_init(&db->lock, NULL);
  pthread_mutex_init(&db->rlock_own, NULL);
  db->rlock = &db->lock;
  if (sqlite3_open_v2(path, &db->conn,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                      NULL) != SQLITE_OK) {
    rc = svc_err_set(err, SVC_DB, "db", "cannot open database %s: %s", path,
                     db->conn ? sqlite3_errmsg(db->conn) : "out of memory");
    goto cleanup;
  }
  sqlite3_busy_timeout(db->conn, 5000);
  /* WAL lets readers proceed beside one writer; synchronous=NORMAL in WAL
   * mode still never corrupts the file on a crash (SQLite docs, "WAL"). */
  if ((rc = hwdb_exec(db,
                      "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
                      "PRAGMA foreign_keys=ON;",
                      err)))
    goto cleanup;
  if ((rc = migrate(db, &fresh, err))) goto cleanup;
  open_reader(db, path);
  if (created) *created = fresh;
  *out = db;
  db = NULL;
cleanup:
  hwdb_free(db);
  return rc;
}

void hwdb_free(hwdb *db) {
  if (!db) return;
  if (db->rconn && db->rconn != db->conn) sqlite3_close_v2(db->rconn);
  if (db->conn) sqlite3_close_v2(db->conn);
  pthread_mutex_destroy(&db->lock);
  pthread_mutex_destroy(&db->rlock_own);
  free(db);
}

uint64_t hwdb_generation(hwdb *db) { return atomic_load(&db->generation); }
