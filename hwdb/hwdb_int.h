/* hwdb internals: the handle body and the statement helpers shared by the
 * hwdb files. */
#ifndef CDPLAN_HWDB_INT_H
#define CDPLAN_HWDB_INT_H

#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>

#include "hwdb/hwdb.h"

struct hwdb {
  sqlite3 *conn;
  pthread_mutex_t lock; /* one statement sequence at a time on conn */
  /* Reads of single rows and lists go through a connection of their own
   * (WAL: readers never wait for a writer), so that a write waiting on
   * another process's lock (up to the busy timeout) does not stall every
   * read and estimate behind the one mutex. A :memory: database has one
   * connection only: rconn is then conn and rlock is &lock. */
  sqlite3 *rconn;
  pthread_mutex_t rlock_own;
  pthread_mutex_t *rlock;
  atomic_uint_least64_t generation;
};

/* Map a SQLite failure to SVC_DB with its message; a busy or locked
 * database (another process holding the write lock past the busy
 * timeout) is SVC_DB_BUSY, a 503 the client may retry. */
int hwdb_fail(hwdb *db, svc_err *err, const char *what);
int hwdb_fail_conn(sqlite3 *c, svc_err *err, const char *what);
/* The read connection, locked; hwdb_reader_done unlocks it. Only
 * statements that write nothing may run on it. */
sqlite3 *hwdb_reader(hwdb *db);
void hwdb_reader_done(hwdb *db);
/* Run one statement sequence inside BEGIN IMMEDIATE ... COMMIT. */
int hwdb_exec(hwdb *db, const char *sql, svc_err *err);
char *hwdb_strdup_col(sqlite3_stmt *st, int col);

#endif
