/* pg_testdb.c: see pg_testdb.h. Speaks libpq directly: the tests check the
 * store from outside, as the SQLite tests open the file with sqlite3. */
#include "pg_testdb.h"

#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int socket_dir(char *out, size_t size) {
  const char *state = getenv("CDPLAN_TEST_PG_FILE");
  FILE *fp = state && *state ? fopen(state, "r") : NULL;
  if (!fp) {
    fprintf(stderr, "testdb: no PostgreSQL cluster (CDPLAN_TEST_PG_FILE=%s): did pg_up.sh run?\n",
            state ? state : "(unset)");
    return -1;
  }
  int ok = fgets(out, (int)size, fp) != NULL;
  fclose(fp);
  out[strcspn(out, "\n")] = '\0';
  return ok && *out ? 0 : -1;
}

int testdb_is_pg(void) {
  const char *s = getenv("CDPLAN_TEST_PG_FILE");
  return s && *s;
}

int testdb_exec(const char *uri, const char *sql) {
  PGconn *c = PQconnectdb(uri);
  int rc = -1;
  if (PQstatus(c) == CONNECTION_OK) {
    PGresult *r = PQexec(c, sql);
    ExecStatusType s = PQresultStatus(r);
    rc = s == PGRES_COMMAND_OK || s == PGRES_TUPLES_OK ? 0 : -1;
    if (rc) fprintf(stderr, "testdb: %s: %s", sql, PQresultErrorMessage(r));
    PQclear(r);
  } else {
    fprintf(stderr, "testdb: connect %s: %s", uri, PQerrorMessage(c));
  }
  PQfinish(c);
  return rc;
}

long long testdb_count(const char *uri, const char *sql) {
  PGconn *c = PQconnectdb(uri);
  long long n = -1;
  if (PQstatus(c) == CONNECTION_OK) {
    PGresult *r = PQexec(c, sql);
    if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) > 0)
      n = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    else
      fprintf(stderr, "testdb: %s: %s", sql, PQresultErrorMessage(r));
    PQclear(r);
  }
  PQfinish(c);
  return n;
}

/* The databases this process made, dropped at exit so that the cluster
 * stays small (each is a copy of template1, some MB) for pg_down.sh. */
#define MAX_MADE 64
static char made[MAX_MADE][64], made_admin[400];
static int nmade;

static void drop_made(void) {
  char sql[128];
  for (int i = 0; i < nmade; i++) {
    snprintf(sql, sizeof sql, "DROP DATABASE IF EXISTS %.63s WITH (FORCE)", made[i]);
    testdb_exec(made_admin, sql);
  }
}

int testdb_make(char *out, size_t size, const char *sqlite_path) {
  static int counter;
  char dir[256], admin[400], sql[128], name[64];
  if (!testdb_is_pg()) {
    if (strlen(sqlite_path) >= size) return -1;
    strcpy(out, sqlite_path);
    return 0;
  }
  if (socket_dir(dir, sizeof dir)) return -1;
  snprintf(name, sizeof name, "cdplan_t%ld_%d", (long)getpid(), ++counter);
  snprintf(admin, sizeof admin, "postgresql:///postgres?host=%s&user=postgres", dir);
  snprintf(sql, sizeof sql, "CREATE DATABASE %s", name);
  if (testdb_exec(admin, sql)) return -1;
  if (nmade == 0) {
    snprintf(made_admin, sizeof made_admin, "%.399s", admin);
    atexit(drop_made);
  }
  if (nmade < MAX_MADE) snprintf(made[nmade++], sizeof made[0], "%.63s", name);
  if ((size_t)snprintf(out, size, "postgresql:///%s?host=%s&user=postgres", name, dir) >= size)
    return -1;
  return 0;
}
