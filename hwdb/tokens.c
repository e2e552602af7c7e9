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

static void fill(hwdb *db, hwdb_stmt *st, hwdb_token *t) {
  memset(t, 0, sizeof *t);
  t->id = hwdb_col_int64(db, st, 0);
  hwdb_copy_col(db, st, 1, t->name, sizeof t->name);
  hwdb_copy_col(db, st, 2, t->scopes, sizeof t->scopes);
  hwdb_copy_col(db, st, 3, t->hash, sizeof t->hash);
  t->created_at = hwdb_col_double(db, st, 4);
  t->revoked_at = hwdb_col_double(db, st, 5);
}

static int add_tx(hwdb *db, hwdb_conn *c, void *arg, svc_err *err) {
  hwdb_token *t = arg;
  hwdb_stmt *st = NULL;
  int rc;
  if ((rc = hwdb_prepare(db, c,
                         "INSERT INTO api_token(name, scopes, hash, created_at) "
                         "VALUES (?1, ?2, ?3, ?4) RETURNING id",
                         &st, err)))
    return rc;
  hwdb_bind_text(db, st, 1, t->name);
  hwdb_bind_text(db, st, 2, t->scopes);
  hwdb_bind_text(db, st, 3, t->hash);
  hwdb_bind_double(db, st, 4, t->created_at);
  rc = hwdb_step(db, st, "write token", err);
  if (rc == 1) {
    t->id = hwdb_col_int64(db, st, 0);
    rc = 0;
  } else if (rc == 0) {
    rc = svc_err_set(err, SVC_DB, "", "database: write token: no id returned");
  } else if (hwdb_violation(db, st) == HWDB_UNIQUE) {
    /* The hash is UNIQUE: a collision means a duplicate secret. */
    rc = svc_err_set(err, SVC_CONFLICT, "token", "this token already exists");
  }
  hwdb_finalize(db, st);
  return rc;
}

int hwdb_token_add(hwdb *db, hwdb_token *t, svc_err *err) {
  t->created_at = svc_wall_now();
  t->revoked_at = 0;
  return hwdb_tx(db, add_tx, t, err);
}

int hwdb_token_find(hwdb *db, const char *hash, hwdb_token *out, svc_err *err) {
  hwdb_conn *c = NULL;
  hwdb_stmt *st = NULL;
  int rc;
  memset(out, 0, sizeof *out);
  if ((rc = hwdb_acquire(db, 0, &c, err))) return rc;
  if ((rc = hwdb_prepare(db, c,
                         "SELECT " TOKEN_COLS " FROM api_token "
                         "WHERE hash = ?1 AND revoked_at IS NULL",
                         &st, err)))
    goto cleanup;
  hwdb_bind_text(db, st, 1, hash);
  rc = hwdb_step(db, st, "read token", err);
  if (rc == 1) {
    fill(db, st, out);
    rc = 0;
  } else if (rc == 0) {
    rc = svc_err_set(err, SVC_NOT_FOUND, "token", "no such token");
  }
cleanup:
  hwdb_finalize(db, st);
  hwdb_release(db, c);
  return rc;
}

int hwdb_token_list(hwdb *db, hwdb_token **out, size_t *n, svc_err *err) {
  hwdb_conn *c = NULL;
  hwdb_stmt *st = NULL;
  hwdb_token *list = NULL;
  size_t count = 0, cap = 0;
  int rc;
  *out = NULL;
  *n = 0;
  if ((rc = hwdb_acquire(db, 0, &c, err))) return rc;
  if ((rc = hwdb_prepare(db, c, "SELECT " TOKEN_COLS " FROM api_token ORDER BY id", &st, err)))
    goto cleanup;
  while ((rc = hwdb_step(db, st, "list tokens", err)) == 1) {
    if (count == cap) {
      cap = cap ? cap * 2 : 16;
      hwdb_token *nl = realloc(list, cap * sizeof *nl);
      if (!nl) {
        rc = svc_err_set(err, SVC_NOMEM, "", NULL);
        goto cleanup;
      }
      list = nl;
    }
    fill(db, st, &list[count++]);
  }
  if (rc) goto cleanup;
  *out = list;
  *n = count;
  list = NULL;
cleanup:
  hwdb_finalize(db, st);
  hwdb_release(db, c);
  free(list);
  return rc;
}

typedef struct {
  int64_t id;
  double now;
} revoke_args;

static int revoke_tx(hwdb *db, hwdb_conn *c, void *arg, svc_err *err) {
  revoke_args *a = arg;
  hwdb_stmt *st = NULL;
  int rc;
  /* Revoking twice keeps the first time: the row matches either way. */
  if ((rc = hwdb_prepare(db, c,
                         "UPDATE api_token SET revoked_at = coalesce(revoked_at, ?2) WHERE id = ?1",
                         &st, err)))
    return rc;
  hwdb_bind_int64(db, st, 1, a->id);
  hwdb_bind_double(db, st, 2, a->now);
  if ((rc = hwdb_step(db, st, "revoke token", err)) == 0 && hwdb_changes(db, st) == 0)
    rc = svc_err_set(err, SVC_NOT_FOUND, "id", "no token with id %lld", (long long)a->id);
  hwdb_finalize(db, st);
  return rc;
}

int hwdb_token_revoke(hwdb *db, int64_t id, svc_err *err) {
  revoke_args a = {.id = id, .now = svc_wall_now()};
  return hwdb_tx(db, revoke_tx, &a, err);
}

int hwdb_token_count_active(hwdb *db, int64_t *n, svc_err *err) {
  return hwdb_count(db, "SELECT count(*) FROM api_token WHERE revoked_at IS NULL", "count tokens",
                    n, err);
}
