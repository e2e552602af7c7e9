/* hwdb's PostgreSQL backend (libpq): one database that several service
 * replicas share.
 *
 * Connections: a small pool (POOL_MAX, opened as needed); a statement
 * sequence holds one connection alone from hwdb_acquire to hwdb_release,
 * so each worker thread gets a connection of its own while it works.
 * Writes run as SERIALIZABLE transactions: PostgreSQL then behaves as if
 * they ran one after another (what SQLite's single writer gives), and a
 * conflict shows as SQLSTATE 40001 (or 40P01, a deadlock), which hwdb_tx
 * answers by running the transaction again. Reads run alone in autocommit.
 *
 * Schema: numbered migrations (pg_schema.c) with the version in the table
 * schema_version, applied under an advisory lock so that replicas starting
 * together migrate once. A broken connection is reset when next taken;
 * its failure is a 503 (SVC_DB_BUSY) the client may retry.
 *
 * Job following: the replica that holds the session-level advisory lock
 * LEADER_KEY on a connection of its own follows validation jobs; the lock
 * ends with that session, so when the leader dies another replica's next
 * try takes it.
 *
 * Parameters are sent as text with their types (text, int8, float8);
 * the ?N of the shared SQL become $N.
 */
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hwdb/hwdb_int.h"
#include "hwdb/pg_int.h"

#define POOL_MAX 8
#define MAX_PARAMS 16
/* Advisory lock keys: "cdp" then 1 (leader) and 2 (migrations). */
#define LEADER_KEY "6513920001"
#define MIGRATE_KEY "6513920002"
/* How long another replica's catalog write may stay unseen by this one's
 * descriptor cache (hwdb_generation). */
#define GEN_TTL_S 0.5

/* PostgreSQL type oids (pg_type.dat): text, int8, float8. */
#define OID_TEXT 25
#define OID_INT8 20
#define OID_FLOAT8 701

struct hwdb_conn {
  PGconn *c;
  int in_use;
  int retry; /* the last failure was 40001 / 40P01 */
};

struct hwdb_stmt {
  hwdb_conn *conn;
  char *sql;
  int nparams;
  const char *vals[MAX_PARAMS];
  Oid types[MAX_PARAMS];
  char num[MAX_PARAMS][32];
  PGresult *res;
  int row, nrows;
  int64_t changes;
  char sqlstate[6];
};

typedef struct {
  char *uri;
  pthread_mutex_t lock;
  pthread_cond_t freed;
  hwdb_conn pool[POOL_MAX];
  int opened;
  /* the leader lock's own connection */
  pthread_mutex_t llock;
  PGconn *lc;
  int held;
  /* the shared catalog generation, read at most every GEN_TTL_S */
  pthread_mutex_t glock;
  uint64_t gen;
  double gen_at;
} pg_db;

#define PG(db) ((pg_db *)(db)->impl)

static void quiet(void *arg, const char *msg) {}

static PGconn *connect_to(const char *uri) {
  PGconn *c = PQconnectdb(uri);
  if (c) PQsetNoticeProcessor(c, quiet, NULL);
  return c;
}

/* PostgreSQL's message without its trailing newline. */
static const char *msg_of(PGconn *c, PGresult *r, char *buf, size_t size) {
  const char *m = r ? PQresultErrorMessage(r) : "";
  if (!m || !*m) m = c ? PQerrorMessage(c) : "no connection";
  svc_strlcpy(buf, m && *m ? m : "unknown error", size);
  size_t n = strlen(buf);
  while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' ')) buf[--n] = '\0';
  return buf;
}

/* A failure of one command: serialization failures and deadlocks mark the
 * connection retryable and, like a lost connection, are a 503. */
static int fail(hwdb_conn *hc, PGresult *r, const char *what, svc_err *err) {
  char m[200];
  const char *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
  hc->retry = state && (!strcmp(state, "40001") || !strcmp(state, "40P01"));
  msg_of(hc->c, r, m, sizeof m);
  if (hc->retry || PQstatus(hc->c) != CONNECTION_OK)
    return svc_err_set(err, SVC_DB_BUSY, "", "database busy (%s: %s); retry shortly", what, m);
  return svc_err_set(err, SVC_DB, "", "database: %s: %s", what, m);
}

/* Run sql (no parameters) on c; 0 or a failure as above. */
static int command(hwdb_conn *hc, const char *sql, const char *what, svc_err *err) {
  PGresult *r = PQexec(hc->c, sql);
  ExecStatusType s = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
  int rc = s == PGRES_COMMAND_OK || s == PGRES_TUPLES_OK ? 0 : fail(hc, r, what, err);
  if (!rc) hc->retry = 0;
  PQclear(r);
  return rc;
}

static int migrate(hwdb_conn *hc, int *created, svc_err *err) {
  PGresult *r = NULL;
  int rc, v = 0;
  const int target = (int)hwdb_pg_nmigrations;
  if ((rc = command(hc,
                    "BEGIN; SELECT pg_advisory_xact_lock(" MIGRATE_KEY ");"
                    "CREATE TABLE IF NOT EXISTS schema_version (version integer NOT NULL);",
                    "lock schema", err)))
    goto rollback;
  r = PQexec(hc->c, "SELECT version FROM schema_version");
  if (PQresultStatus(r) != PGRES_TUPLES_OK) {
    rc = fail(hc, r, "read schema version", err);
    goto rollback;
  }
  if (PQntuples(r) > 0) v = atoi(PQgetvalue(r, 0, 0));
  PQclear(r);
  r = NULL;
  *created = v == 0;
  if (v > target) {
    rc = svc_err_set(err, SVC_DB, "db", "database schema version %d is newer than this cdplan (%d)",
                     v, target);
    goto rollback;
  }
  for (; v < target; v++)
    if ((rc = command(hc, hwdb_pg_migrations[v], "migrate", err))) goto rollback;
  char set[96];
  snprintf(set, sizeof set,
           "DELETE FROM schema_version; INSERT INTO schema_version VALUES (%d); COMMIT;", target);
  if ((rc = command(hc, set, "write schema version", err))) goto rollback;
  return 0;
rollback:
  PQclear(r);
  command(hc, "ROLLBACK", "rollback", NULL);
  return rc;
}

static void pg_close(hwdb *db) {
  pg_db *p = PG(db);
  for (int i = 0; i < POOL_MAX; i++)
    if (p->pool[i].c) PQfinish(p->pool[i].c);
  if (p->lc) PQfinish(p->lc);
  pthread_mutex_destroy(&p->lock);
  pthread_cond_destroy(&p->freed);
  pthread_mutex_destroy(&p->llock);
  pthread_mutex_destroy(&p->glock);
  free(p->uri);
  free(p);
  db->impl = NULL;
}

/* The URI without its password, for messages. */
static void safe_uri(const char *uri, char *out, size_t size) {
  const char *at = strchr(uri, '@'), *scheme = strstr(uri, "://");
  if (at && scheme && at > scheme)
    snprintf(out, size, "%.*s***%s", (int)(scheme + 3 - uri), uri, at);
  else
    svc_strlcpy(out, uri, size);
}

static int pg_open(hwdb *db, const char *uri, int *created, svc_err *err) {
  pg_db *p = calloc(1, sizeof *p);
  if (!p) return svc_err_set(err, SVC_NOMEM, "", NULL);
  pthread_mutex_init(&p->lock, NULL);
  pthread_cond_init(&p->freed, NULL);
  pthread_mutex_init(&p->llock, NULL);
  pthread_mutex_init(&p->glock, NULL);
  db->impl = p;
  if (!(p->uri = strdup(uri))) return svc_err_set(err, SVC_NOMEM, "", NULL);
  hwdb_conn *hc = &p->pool[0];
  hc->c = connect_to(uri);
  if (!hc->c || PQstatus(hc->c) != CONNECTION_OK) {
    char m[200], shown[160];
    safe_uri(uri, shown, sizeof shown);
    return svc_err_set(err, SVC_DB, "db", "cannot open database %s: %s", shown,
                       msg_of(hc->c, NULL, m, sizeof m));
  }
  p->opened = 1;
  return migrate(hc, created, err);
}

static int pg_acquire(hwdb *db, int write, hwdb_conn **out, svc_err *err) {
  pg_db *p = PG(db);
  hwdb_conn *hc = NULL;
  pthread_mutex_lock(&p->lock);
  for (;;) {
    for (int i = 0; i < POOL_MAX && !hc; i++)
      if (!p->pool[i].in_use && (p->pool[i].c || p->opened < POOL_MAX)) hc = &p->pool[i];
    if (hc) break;
    pthread_cond_wait(&p->freed, &p->lock);
  }
  hc->in_use = 1;
  if (!hc->c) p->opened++;
  pthread_mutex_unlock(&p->lock);
  /* Connecting and resetting happen outside the pool's lock. */
  if (!hc->c)
    hc->c = connect_to(p->uri);
  else if (PQstatus(hc->c) != CONNECTION_OK)
    PQreset(hc->c);
  hc->retry = 0;
  if (hc->c && PQstatus(hc->c) == CONNECTION_OK) {
    *out = hc;
    return 0;
  }
  char m[200];
  int rc = svc_err_set(err, SVC_DB_BUSY, "", "database unreachable (%s); retry shortly",
                       msg_of(hc->c, NULL, m, sizeof m));
  pthread_mutex_lock(&p->lock);
  if (hc->c) PQfinish(hc->c);
  hc->c = NULL;
  hc->in_use = 0;
  p->opened--;
  pthread_cond_signal(&p->freed);
  pthread_mutex_unlock(&p->lock);
  return rc;
}

static void pg_release(hwdb *db, hwdb_conn *hc) {
  pg_db *p = PG(db);
  /* A sequence that failed half-way leaves no transaction open. */
  if (PQtransactionStatus(hc->c) != PQTRANS_IDLE) command(hc, "ROLLBACK", "rollback", NULL);
  pthread_mutex_lock(&p->lock);
  hc->in_use = 0;
  pthread_cond_signal(&p->freed);
  pthread_mutex_unlock(&p->lock);
}

/* ?N -> $N outside quoted text. */
static char *translate(const char *sql) {
  size_t n = strlen(sql);
  char *out = malloc(n + 1), *o = out;
  char quote = 0;
  if (!out) return NULL;
  for (const char *s = sql; *s; s++) {
    if (quote) {
      if (*s == quote) quote = 0;
    } else if (*s == '\'' || *s == '"') {
      quote = *s;
    } else if (*s == '?') {
      *o++ = '$';
      continue;
    }
    *o++ = *s;
  }
  *o = '\0';
  return out;
}

static int pg_prepare(hwdb_conn *hc, const char *sql, hwdb_stmt **out, svc_err *err) {
  hwdb_stmt *st = calloc(1, sizeof *st);
  if (!st || !(st->sql = translate(sql))) {
    free(st);
    return svc_err_set(err, SVC_NOMEM, "", NULL);
  }
  st->conn = hc;
  *out = st;
  return 0;
}

static void set_param(hwdb_stmt *st, int i, const char *v, Oid type) {
  if (i < 1 || i > MAX_PARAMS) return; /* our SQL has fewer: a bug shows as a failed step */
  st->vals[i - 1] = v;
  st->types[i - 1] = type;
  if (i > st->nparams) st->nparams = i;
}

static void pg_bind_text(hwdb_stmt *st, int i, const char *s) { set_param(st, i, s, OID_TEXT); }

static void pg_bind_int64(hwdb_stmt *st, int i, int64_t v) {
  if (i < 1 || i > MAX_PARAMS) return;
  snprintf(st->num[i - 1], sizeof st->num[0], "%lld", (long long)v);
  set_param(st, i, st->num[i - 1], OID_INT8);
}

static void pg_bind_double(hwdb_stmt *st, int i, double v) {
  if (i < 1 || i > MAX_PARAMS) return;
  snprintf(st->num[i - 1], sizeof st->num[0], "%.17g", v); /* round-trips */
  set_param(st, i, st->num[i - 1], OID_FLOAT8);
}

static int pg_step(hwdb_stmt *st, const char *what, svc_err *err) {
  if (!st->res) {
    st->res = PQexecParams(st->conn->c, st->sql, st->nparams, st->types, st->vals, NULL, NULL, 0);
    ExecStatusType s = st->res ? PQresultStatus(st->res) : PGRES_FATAL_ERROR;
    if (s != PGRES_TUPLES_OK && s != PGRES_COMMAND_OK) {
      const char *state = st->res ? PQresultErrorField(st->res, PG_DIAG_SQLSTATE) : NULL;
      svc_strlcpy(st->sqlstate, state ? state : "", sizeof st->sqlstate);
      int rc = fail(st->conn, st->res, what, err);
      st->nrows = -1;
      return rc;
    }
    st->nrows = s == PGRES_TUPLES_OK ? PQntuples(st->res) : 0;
    st->changes = strtoll(PQcmdTuples(st->res), NULL, 10);
    st->row = -1;
  }
  if (st->nrows < 0) return svc_err_set(err, SVC_DB, "", "database: %s: failed before", what);
  return ++st->row < st->nrows ? 1 : 0;
}

static const char *pg_col_text(hwdb_stmt *st, int col) {
  if (st->row < 0 || st->row >= st->nrows || PQgetisnull(st->res, st->row, col)) return NULL;
  return PQgetvalue(st->res, st->row, col);
}

static int64_t pg_col_int64(hwdb_stmt *st, int col) {
  const char *s = pg_col_text(st, col);
  return s ? strtoll(s, NULL, 10) : 0;
}

static double pg_col_double(hwdb_stmt *st, int col) {
  const char *s = pg_col_text(st, col);
  return s ? strtod(s, NULL) : 0;
}

static int64_t pg_changes(hwdb_stmt *st) { return st->changes; }

/* SQLSTATE class 23: integrity constraint violations; 23505 unique. */
static int pg_violation(hwdb_stmt *st) {
  if (!strcmp(st->sqlstate, "23505")) return HWDB_UNIQUE;
  return !strncmp(st->sqlstate, "23", 2) ? HWDB_OTHER_CONSTRAINT : HWDB_NO_VIOLATION;
}

static void pg_finalize(hwdb_stmt *st) {
  PQclear(st->res);
  free(st->sql);
  free(st);
}

static int pg_begin(hwdb_conn *hc, svc_err *err) {
  return command(hc, "BEGIN ISOLATION LEVEL SERIALIZABLE", "begin", err);
}
static int pg_commit(hwdb_conn *hc, svc_err *err) { return command(hc, "COMMIT", "commit", err); }
static void pg_rollback(hwdb_conn *hc) {
  int retry = hc->retry; /* what failed decides, not the rollback */
  if (PQtransactionStatus(hc->c) != PQTRANS_IDLE) command(hc, "ROLLBACK", "rollback", NULL);
  hc->retry = retry;
}
static int pg_retryable(hwdb_conn *hc) { return hc->retry; }

/* In the write's own transaction: readers see the new generation only once
 * the write is committed, so a cache reloaded after seeing it is fresh. */
static int pg_touch(hwdb_conn *hc, svc_err *err) {
  return command(hc, "UPDATE catalog_generation SET n = n + 1", "bump catalog generation", err);
}

static double mono_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t pg_shared_generation(hwdb *db) {
  pg_db *p = PG(db);
  hwdb_conn *hc = NULL;
  double now = mono_now();
  pthread_mutex_lock(&p->glock);
  if (p->gen_at && now - p->gen_at < GEN_TTL_S) {
    uint64_t g = p->gen;
    pthread_mutex_unlock(&p->glock);
    return g;
  }
  pthread_mutex_unlock(&p->glock);
  /* On failure the old value stays: the next successful read catches up. */
  if (pg_acquire(db, 0, &hc, NULL) == 0) {
    PGresult *r = PQexec(hc->c, "SELECT n FROM catalog_generation");
    if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1) {
      pthread_mutex_lock(&p->glock);
      p->gen = strtoull(PQgetvalue(r, 0, 0), NULL, 10);
      p->gen_at = now;
      pthread_mutex_unlock(&p->glock);
    }
    PQclear(r);
    pg_release(db, hc);
  }
  pthread_mutex_lock(&p->glock);
  uint64_t g = p->gen;
  pthread_mutex_unlock(&p->glock);
  return g;
}

/* One query on the leader connection that returns one value: its text
 * (copied into out) or -1 when the connection failed. */
static int leader_query(PGconn *c, const char *sql, char *out, size_t size) {
  PGresult *r = PQexec(c, sql);
  int ok = PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1;
  if (ok) svc_strlcpy(out, PQgetvalue(r, 0, 0), size);
  PQclear(r);
  return ok ? 0 : -1;
}

static int pg_leader(hwdb *db, int *state, svc_err *err) {
  pg_db *p = PG(db);
  char v[16];
  int rc = 0;
  pthread_mutex_lock(&p->llock);
  if (p->lc && PQstatus(p->lc) != CONNECTION_OK) {
    PQfinish(p->lc); /* its session, and any lock it held, are gone */
    p->lc = NULL;
    p->held = 0;
  }
  if (!p->lc) {
    p->lc = connect_to(p->uri);
    if (!p->lc || PQstatus(p->lc) != CONNECTION_OK) {
      char m[200];
      rc = svc_err_set(err, SVC_DB_BUSY, "", "database unreachable (%s)",
                       msg_of(p->lc, NULL, m, sizeof m));
      PQfinish(p->lc);
      p->lc = NULL;
      goto cleanup;
    }
  }
  /* Held: the session must still be alive (SELECT 1); free: try to take it. */
  if (leader_query(p->lc, p->held ? "SELECT 1" : "SELECT pg_try_advisory_lock(" LEADER_KEY ")", v,
                   sizeof v)) {
    char m[200];
    rc = svc_err_set(err, SVC_DB_BUSY, "", "leader lock: %s", msg_of(p->lc, NULL, m, sizeof m));
    PQfinish(p->lc);
    p->lc = NULL;
    p->held = 0;
    goto cleanup;
  }
  if (!p->held) p->held = !strcmp(v, "t");
cleanup:
  *state = p->held ? HWDB_FOLLOW_ELECTED : HWDB_FOLLOW_OTHER;
  pthread_mutex_unlock(&p->llock);
  return rc;
}

static const char *pg_filename(hwdb *db) { return ""; }

const hwdb_ops hwdb_pg_ops = {
    .is_pg = 1,
    .open = pg_open,
    .close = pg_close,
    .acquire = pg_acquire,
    .release = pg_release,
    .prepare = pg_prepare,
    .bind_text = pg_bind_text,
    .bind_int64 = pg_bind_int64,
    .bind_double = pg_bind_double,
    .step = pg_step,
    .col_text = pg_col_text,
    .col_int64 = pg_col_int64,
    .col_double = pg_col_double,
    .changes = pg_changes,
    .violation = pg_violation,
    .finalize = pg_finalize,
    .begin = pg_begin,
    .commit = pg_commit,
    .rollback = pg_rollback,
    .retryable = pg_retryable,
    .touch = pg_touch,
    .shared_generation = pg_shared_generation,
    .leader = pg_leader,
    .filename = pg_filename,
};
