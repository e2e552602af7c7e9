/* hwdb internals: the handle body, the backend operations table and the
 * statement helpers shared by the hwdb files.
 *
 * Two backends sit behind one table of operations (hwdb_ops): SQLite
 * (hwdb/sqlite.c, the embedded default) and PostgreSQL through libpq
 * (hwdb/pg.c, for several service replicas on one database). The files
 * that own the tables (hardware.c, jobs.c, ...) speak only the statement
 * helpers below; where the two dialects differ they pick the text by
 * hwdb_pg(db). Nothing outside hwdb/ knows which backend runs.
 *
 * SQL is written with numbered parameters ?1, ?2, ... (the PostgreSQL
 * backend turns them into $1, $2, ...).
 */
#ifndef CDPLAN_HWDB_INT_H
#define CDPLAN_HWDB_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include "hwdb/hwdb.h"

typedef struct hwdb_conn hwdb_conn; /* one backend connection (backend-defined) */
typedef struct hwdb_stmt hwdb_stmt; /* one statement on it (backend-defined) */

/* What hwdb_violation tells of a failed step. */
enum { HWDB_NO_VIOLATION = 0, HWDB_UNIQUE = 1, HWDB_OTHER_CONSTRAINT = 2 };

typedef struct hwdb_ops {
  int is_pg;
  int (*open)(hwdb *db, const char *target, int *created, svc_err *err);
  void (*close)(hwdb *db);
  /* A connection held by the caller alone until release: write = 1 for
   * one that may write (SQLite: the writer connection under its mutex). */
  int (*acquire)(hwdb *db, int write, hwdb_conn **out, svc_err *err);
  void (*release)(hwdb *db, hwdb_conn *c);
  int (*prepare)(hwdb_conn *c, const char *sql, hwdb_stmt **out, svc_err *err);
  void (*bind_text)(hwdb_stmt *st, int i, const char *s); /* NULL binds NULL */
  void (*bind_int64)(hwdb_stmt *st, int i, int64_t v);
  void (*bind_double)(hwdb_stmt *st, int i, double v);
  /* 1 = a row, 0 = done, negative svc code (err filled, naming what). */
  int (*step)(hwdb_stmt *st, const char *what, svc_err *err);
  const char *(*col_text)(hwdb_stmt *st, int col); /* NULL for SQL NULL */
  int64_t (*col_int64)(hwdb_stmt *st, int col);
  double (*col_double)(hwdb_stmt *st, int col);
  int64_t (*changes)(hwdb_stmt *st); /* rows the last write step changed */
  int (*violation)(hwdb_stmt *st);   /* after a failed step */
  void (*finalize)(hwdb_stmt *st);
  /* Transactions on a write connection; retryable: the last failure was a
   * serialization failure or deadlock the whole transaction may retry. */
  int (*begin)(hwdb_conn *c, svc_err *err);
  int (*commit)(hwdb_conn *c, svc_err *err);
  void (*rollback)(hwdb_conn *c);
  int (*retryable)(hwdb_conn *c);
  /* A catalog or calibration write (inside its transaction): other
   * processes' hwdb_generation sees it. */
  int (*touch)(hwdb_conn *c, svc_err *err);
  uint64_t (*shared_generation)(hwdb *db); /* 0 where only this process writes */
  int (*leader)(hwdb *db, int *state, svc_err *err);
  const char *(*filename)(hwdb *db);
} hwdb_ops;

struct hwdb {
  const hwdb_ops *ops;
  void *impl; /* the backend's state */
  atomic_uint_least64_t generation;
};

extern const hwdb_ops hwdb_sqlite_ops;
extern const hwdb_ops hwdb_pg_ops;

/* Which dialect: 1 for PostgreSQL. Only hwdb/ files ask. */
static inline int hwdb_pg(const hwdb *db) { return db->ops->is_pg; }

/* Statement helpers: thin dispatch through db->ops (see hwdb.c). */
int hwdb_acquire(hwdb *db, int write, hwdb_conn **out, svc_err *err);
void hwdb_release(hwdb *db, hwdb_conn *c);
int hwdb_prepare(hwdb *db, hwdb_conn *c, const char *sql, hwdb_stmt **out, svc_err *err);
void hwdb_bind_text(hwdb *db, hwdb_stmt *st, int i, const char *s);
void hwdb_bind_int64(hwdb *db, hwdb_stmt *st, int i, int64_t v);
void hwdb_bind_double(hwdb *db, hwdb_stmt *st, int i, double v);
int hwdb_step(hwdb *db, hwdb_stmt *st, const char *what, svc_err *err);
const char *hwdb_col_text(hwdb *db, hwdb_stmt *st, int col);
int64_t hwdb_col_int64(hwdb *db, hwdb_stmt *st, int col);
double hwdb_col_double(hwdb *db, hwdb_stmt *st, int col);
int64_t hwdb_changes(hwdb *db, hwdb_stmt *st);
int hwdb_violation(hwdb *db, hwdb_stmt *st);
void hwdb_finalize(hwdb *db, hwdb_stmt *st); /* NULL-safe */
char *hwdb_strdup_col(hwdb *db, hwdb_stmt *st, int col);
void hwdb_copy_col(hwdb *db, hwdb_stmt *st, int col, char *dst, size_t size);

/* Run fn inside one write transaction on a write connection; commit when
 * it returns 0, roll back otherwise. A serialization failure or deadlock
 * (PostgreSQL SQLSTATE 40001 / 40P01) rolls back and runs fn again, a few
 * times with a growing pause, so fn must only write its outputs. */
typedef int (*hwdb_tx_fn)(hwdb *db, hwdb_conn *c, void *arg, svc_err *err);
int hwdb_tx(hwdb *db, hwdb_tx_fn fn, void *arg, svc_err *err);
/* One integer (a count) from sql on a read connection. */
int hwdb_count(hwdb *db, const char *sql, const char *what, int64_t *n, svc_err *err);
/* Inside a transaction: mark a catalog/calibration write (hwdb_generation). */
int hwdb_touch(hwdb *db, hwdb_conn *c, svc_err *err);

#endif
