/* hwdb API tokens: one row per token with its name, scopes and the hex
 * SHA-256 of the secret. The secret itself is never stored, so reading the
 * database does not give the right to call the service. Revoking keeps the
 * row (with revoked_at set) so that the list shows what existed; lookups
 * only see tokens not revoked. Scopes are opaque text to hwdb ("read,plan").
 */
#include <stdlib.h>
#include <string.h>

#include "hwdb/hwdb_int.h"

#define TOKEN_COLS "id, name, scopes, hash, created_at, revoked_at"

static void fill(sqlite3_stmt *st, hwdb_token *t) {
  memset(t, 0, sizeof *t);
  t->id = sqlite3_column_int64(st, 0);
  const unsigned char *s;
  if ((s = sqlite3_column_text(st, 1))) svc_strlcpy(t->name, (const char *)s, sizeof t->name);
  if ((s = sqlite3_column_text(st, 2))) svc_strlcpy(t->scopes, (const char *)s, sizeof t->scopes);
  if ((s = sqlite3_column_text(st, 3))) svc_strlcpy(t->hash, (const char *)s, sizeof t->hash);
  t->created_at = sqlite3_column_double(st, 4);
  t->revoked_at = sqlite3_column_double(st, 5);
}

int hwdb_token_add(hwdb *db, hwdb_token *t, svc_err *err) {
  sqlite3_stmt *st = NULL;
  int rc = 0;
  t->created_at = svc_wall_now();
  t->revoked_at = 0;
  pthread_mutex_lock(&db->lock);
  if (sqlite3_prepare_v2(db->conn,
                         "INSERT INTO api_token(name, scopes, hash, created_at) "
                         "VALUES (?1, ?2, ?3, ?4)",
                         -1, &st, NULL) != SQLITE_OK) {
    rc = hwdb_fail(db, err, "prepare");
    goto cleanup;
  }
  sqlite3_bind_text(st, 1, t->name, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 2, t->scopes, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 3, t->hash, -1, SQLITE_STATIC);
  sqlite3_bind_double(st, 4, t->created_at);
  if (sqlite3_step(st) != SQLITE_DONE) {
    /* The hash is UNIQUE: a collision means a duplicate secret. */
    rc = sqlite3_extended_errcode(db->conn) == SQLITE_CONSTRAINT_UNIQUE
             ? svc_err_set(err, SVC_CONFLICT, "token", "this token already exists")
             : hwdb_fail(db, err, "write token");
    goto cleanup;
  }
  t->id = sqlite3_last_insert_rowid(db->conn);
cleanup:
  sqlite3_finalize(st);
  pthread_mutex_unlock(&db->lock);
  return rc;
}

int hwdb_token_find(hwdb *db, const char *hash, hwdb_token *out, svc_err *err) {
  sqlite3_stmt *st = NULL;
  int rc = 0, step;
  memset(out, 0, sizeof *out);
  sqlite3 *c = hwdb_reader(db);
  if (sqlite3_prepare_v2(c,
                         "SELECT " TOKEN_COLS " FROM api_token "
                         "WHERE hash = ?1 AND revoked_at IS NULL",
                         -1, &st, NULL) != SQLITE_OK) {
    rc = hwdb_fail_conn(c, err, "prepare");
    goto cleanup;
  }
  sqlite3_bind_text(st, 1, hash, -1, SQLITE_STATIC);
  step = sqlite3_step(st);
  if (step == SQLITE_ROW)
    fill(st, out);
  else if (step == SQLITE_DONE)
    rc = svc_err_set(err, SVC_NOT_FOUND, "token", "no such token");
  else
    rc = hwdb_fail_conn(c, err, "read token");
cleanup:
  sqlite3_finalize(st);
  hwdb_reader_done(db);
  return rc;
}

int hwdb_token_list(hwdb *db, hwdb_token **out, size_t *n, svc_err *err) {
  sqlite3_stmt *st = NULL;
  hwdb_token *list = NULL;
  size_t count = 0, cap = 0;
  int rc = 0, step;
  *out = NULL;
  *n = 0;
  sqlite3 *c = hwdb_reader(db);
  if (sqlite3_prepare_v2(c, "SELECT " TOKEN_COLS " FROM api_token ORDER BY id", -1, &st, NULL) !=
      SQLITE_OK) {
    rc = hwdb_fail_conn(c, err, "prepare");
    goto cleanup;
  }
  while ((step = sqlite3_step(st)) == SQLITE_ROW) {
    if (count == cap) {
      cap = cap ? cap * 2 : 16;
      hwdb_token *nl = realloc(list, cap * sizeof *nl);
      if (!nl) {
        rc = svc_err_set(err, SVC_NOMEM, "", NULL);
        goto cleanup;
      }
      list = nl;
    }
    fill(st, &list[count++]);
  }
  if (step != SQLITE_DONE) {
    rc = hwdb_fail_conn(c, err, "list tokens");
    goto cleanup;
  }
  *out = list;
  *n = count;
  list = NULL;
cleanup:
  sqlite3_finalize(st);
  hwdb_reader_done(db);
  free(list);
  return rc;
}

int hwdb_token_revoke(hwdb *db, int64_t id, svc_err *err) {
  sqlite3_stmt *st = NULL;
  int rc = 0;
  pthread_mutex_lock(&db->lock);
  /* Revoking twice keeps the first time: the row matches either way. */
  if (sqlite3_prepare_v2(db->conn,
                         "UPDATE api_token SET revoked_at = coalesce(revoked_at, ?2) WHERE id = ?1",
                         -1, &st, NULL) != SQLITE_OK) {
    rc = hwdb_fail(db, err, "prepare");
    goto cleanup;
  }
  sqlite3_bind_int64(st, 1, id);
  sqlite3_bind_double(st, 2, svc_wall_now());
  if (sqlite3_step(st) != SQLITE_DONE) {
    rc = hwdb_fail(db, err, "revoke token");
    goto cleanup;
  }
  if (sqlite3_changes(db->conn) == 0)
    rc = svc_err_set(err, SVC_NOT_FOUND, "id", "no token with id %lld", (long long)id);
cleanup:
  sqlite3_finalize(st);
  pthread_mutex_unlock(&db->lock);
  return rc;
}

int hwdb_token_count_active(hwdb *db, int64_t *n, svc_err *err) {
  sqlite3_stmt *st = NULL;
  int rc = 0;
  sqlite3 *c = hwdb_reader(db);
  if (sqlite3_prepare_v2(c, "SELECT count(*) FROM api_token WHERE revoked_at IS NULL", -1, &st,
                         NULL) != SQLITE_OK ||
      sqlite3_step(st) != SQLITE_ROW)
    rc = hwdb_fail_conn(c, err, "count tokens");
  else
    *n = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  hwdb_reader_done(db);
  return rc;
}
