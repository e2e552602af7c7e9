/* hwdb: choosing the backend, the statement helpers every table file uses,
 * and the transaction helper with its retries.
 *
 * A target that starts with postgres:// or postgresql:// is a PostgreSQL
 * database (hwdb/pg.c); anything else is a SQLite file (hwdb/sqlite.c).
 * Each backend applies its own numbered migrations on open.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hwdb/hwdb_int.h"

/* How often hwdb_tx runs a transaction that keeps failing to serialize. */
#define TX_ATTEMPTS 16

static int is_pg_uri(const char *t) {
  return t && (!strncmp(t, "postgres://", 11) || !strncmp(t, "postgresql://", 13));
}

int hwdb_open(hwdb **out, const char *path, int *created, svc_err *err) {
  hwdb *db = NULL;
  int rc = 0, fresh = 0;
  *out = NULL;
  db = calloc(1, sizeof *db);
  if (!db) return svc_err_set(err, SVC_NOMEM, "", NULL);
  db->ops = is_pg_uri(path) ? &hwdb_pg_ops : &hwdb_sqlite_ops;
  if ((rc = db->ops->open(db, path, &fresh, err))) goto cleanup;
  if (created) *created = fresh;
  *out = db;
  db = NULL;
cleanup:
  hwdb_free(db);
  return rc;
}

void hwdb_free(hwdb *db) {
  if (!db) return;
  if (db->impl) db->ops->close(db);
  free(db);
}

uint64_t hwdb_generation(hwdb *db) {
  /* Both parts only grow, so their sum changes whenever either does. */
  return atomic_load(&db->generation) + db->ops->shared_generation(db);
}

int hwdb_follow_jobs(hwdb *db, int *state, svc_err *err) { return db->ops->leader(db, state, err); }

const char *hwdb_filename(hwdb *db) { return db->ops->filename(db); }

int hwdb_acquire(hwdb *db, int write, hwdb_conn **out, svc_err *err) {
  *out = NULL;
  return db->ops->acquire(db, write, out, err);
}
void hwdb_release(hwdb *db, hwdb_conn *c) {
  if (c) db->ops->release(db, c);
}
int hwdb_prepare(hwdb *db, hwdb_conn *c, const char *sql, hwdb_stmt **out, svc_err *err) {
  *out = NULL;
  return db->ops->prepare(c, sql, out, err);
}
void hwdb_bind_text(hwdb *db, hwdb_stmt *st, int i, const char *s) { db->ops->bind_text(st, i, s); }
void hwdb_bind_int64(hwdb *db, hwdb_stmt *st, int i, int64_t v) { db->ops->bind_int64(st, i, v); }
void hwdb_bind_double(hwdb *db, hwdb_stmt *st, int i, double v) { db->ops->bind_double(st, i, v); }
int hwdb_step(hwdb *db, hwdb_stmt *st, const char *what, svc_err *err) {
  return db->ops->step(st, what, err);
}
const char *hwdb_col_text(hwdb *db, hwdb_stmt *st, int col) { return db->ops->col_text(st, col); }
int64_t hwdb_col_int64(hwdb *db, hwdb_stmt *st, int col) { return db->ops->col_int64(st, col); }
double hwdb_col_double(hwdb *db, hwdb_stmt *st, int col) { return db->ops->col_double(st, col); }
int64_t hwdb_changes(hwdb *db, hwdb_stmt *st) { return db->ops->changes(st); }
int hwdb_violation(hwdb *db, hwdb_stmt *st) { return db->ops->violation(st); }
void hwdb_finalize(hwdb *db, hwdb_stmt *st) {
  if (st) db->ops->finalize(st);
}

char *hwdb_strdup_col(hwdb *db, hwdb_stmt *st, int col) {
  const char *s = hwdb_col_text(db, st, col);
  return s ? strdup(s) : NULL;
}

void hwdb_copy_col(hwdb *db, hwdb_stmt *st, int col, char *dst, size_t size) {
  const char *s = hwdb_col_text(db, st, col);
  svc_strlcpy(dst, s ? s : "", size);
}

int hwdb_touch(hwdb *db, hwdb_conn *c, svc_err *err) { return db->ops->touch(c, err); }

/* A pause before the next attempt: 1, 2, 4, ... ms (up to 64) plus up to
 * as much again at random, so that two retrying replicas drift apart. */
static void backoff(int attempt) {
  long ms = 1L << (attempt < 6 ? attempt : 6);
  ms += rand() % (ms + 1);
  struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

int hwdb_tx(hwdb *db, hwdb_tx_fn fn, void *arg, svc_err *err) {
  hwdb_conn *c = NULL;
  int rc = hwdb_acquire(db, 1, &c, err);
  if (rc) return rc;
  for (int attempt = 0; attempt < TX_ATTEMPTS; attempt++) {
    if (attempt) backoff(attempt);
    if ((rc = db->ops->begin(c, err))) {
      if (db->ops->retryable(c)) continue;
      break;
    }
    if ((rc = fn(db, c, arg, err)) == 0 && (rc = db->ops->commit(c, err)) == 0) break;
    db->ops->rollback(c);
    if (!db->ops->retryable(c)) break;
  }
  hwdb_release(db, c);
  return rc;
}
