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
  atomic_uint_least64_t generation;
};

/* Map a SQLite failure to SVC_DB with its message. */
int hwdb_fail(hwdb *db, svc_err *err, const char *what);
/* Run one statement sequence inside BEGIN IMMEDIATE ... COMMIT. */
int hwdb_exec(hwdb *db, const char *sql, svc_err *err);
char *hwdb_strdup_col(sqlite3_stmt *st, int col);

#endif
