/* hwdb plans: every plan or compare answer the service gives is kept with
 * its request under a random id (GET /v1/plans/{id}). Rows are written once
 * and never changed; documents are opaque text here (api/plan.c owns
 * their JSON). */
#include <stdlib.h>
#include <string.h>

#include "hwdb/hwdb_int.h"

int hwdb_plan_put(hwdb *db, const char *id, const char *kind, const char *hw, const char *request,
                  const char *result, svc_err *err) {
  sqlite3_stmt *st = NULL;
  int rc = 0, step;
  pthread_mutex_lock(&db->lock);
  if (sqlite3_prepare_v2(db->conn,
                         "INSERT INTO plan(id, kind, hw, request, result, created_at) "
                         "VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                         -1, &st, NULL) != SQLITE_OK) {
    rc = hwdb_fail(db, err, "prepare");
    goto cleanup;
  }
  sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 2, kind, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 3, hw, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 4, request, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 5, result, -1, SQLITE_STATIC);
  sqlite3_bind_double(st, 6, svc_wall_now());
  step = sqlite3_step(st);
  if (step == SQLITE_CONSTRAINT)
    rc = svc_err_set(err, SVC_CONFLICT, "id", "plan '%s' exists", id);
  else if (step != SQLITE_DONE)
    rc = hwdb_fail(db, err, "store plan");
  /* no generation bump: that counter invalidates the hardware caches */
cleanup:
  sqlite3_finalize(st);
  pthread_mutex_unlock(&db->lock);
  return rc;
}

int hwdb_plan_get(hwdb *db, const char *id, hwdb_plan *out, svc_err *err) {
  sqlite3_stmt *st = NULL;
  int rc = 0, step;
  memset(out, 0, sizeof *out);
  sqlite3 *c = hwdb_reader(db);
  if (sqlite3_prepare_v2(c,
                         "SELECT id, kind, hw, request, result, created_at FROM plan WHERE id = ?1",
                         -1, &st, NULL) != SQLITE_OK) {
    rc = hwdb_fail_conn(c, err, "prepare");
    goto cleanup;
  }
  sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
  step = sqlite3_step(st);
  if (step == SQLITE_ROW) {
    const unsigned char *s;
    if ((s = sqlite3_column_text(st, 0))) svc_strlcpy(out->id, (const char *)s, sizeof out->id);
    if ((s = sqlite3_column_text(st, 1))) svc_strlcpy(out->kind, (const char *)s, sizeof out->kind);
    if ((s = sqlite3_column_text(st, 2))) svc_strlcpy(out->hw, (const char *)s, sizeof out->hw);
    out->request = hwdb_strdup_col(st, 3);
    out->result = hwdb_strdup_col(st, 4);
    out->created_at = sqlite3_column_double(st, 5);
    if (!out->request || !out->result) {
      hwdb_plan_dispose(out);
      rc = svc_err_set(err, SVC_NOMEM, "", NULL);
    }
  } else if (step == SQLITE_DONE) {
    rc = svc_err_set(err, SVC_NOT_FOUND, "id", "no plan '%s'", id);
  } else {
    rc = hwdb_fail_conn(c, err, "read plan");
  }
cleanup:
  sqlite3_finalize(st);
  hwdb_reader_done(db);
  return rc;
}

void hwdb_plan_dispose(hwdb_plan *p) {
  if (!p) return;
  free(p->request);
  free(p->result);
  p->request = p->result = NULL;
}

/* Newest first by insertion order (rowid: plans are never updated or
 * deleted, so it follows created_at without ties). `after` is the id of
 * the last plan of the previous page; *more says whether older ones are
 * left. Each row is read into out[] whole (request left NULL: a list
 * shows results only). */
int hwdb_plan_list(hwdb *db, const char *kind, const char *after, size_t limit, hwdb_plan *out,
                   size_t *n, int *more, svc_err *err) {
  sqlite3_stmt *st = NULL;
  int rc = 0, step;
  *n = 0;
  *more = 0;
  sqlite3 *c = hwdb_reader(db);
  if (after) {
    if (sqlite3_prepare_v2(c, "SELECT 1 FROM plan WHERE id = ?1 AND kind = ?2", -1, &st, NULL) !=
        SQLITE_OK) {
      rc = hwdb_fail_conn(c, err, "prepare");
      goto cleanup;
    }
    sqlite3_bind_text(st, 1, after, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, kind, -1, SQLITE_STATIC);
    step = sqlite3_step(st);
    if (step == SQLITE_DONE) {
      rc = svc_err_set(err, SVC_BAD_FIELD, "after", "no %s '%s' to page after", kind, after);
      goto cleanup;
    }
    if (step != SQLITE_ROW) {
      rc = hwdb_fail_conn(c, err, "read plan");
      goto cleanup;
    }
    sqlite3_finalize(st);
    st = NULL;
  }
  if (sqlite3_prepare_v2(c,
                         "SELECT id, kind, hw, result, created_at FROM plan WHERE kind = ?1 AND "
                         "(?2 IS NULL OR rowid < (SELECT rowid FROM plan WHERE id = ?2)) "
                         "ORDER BY rowid DESC LIMIT ?3",
                         -1, &st, NULL) != SQLITE_OK) {
    rc = hwdb_fail_conn(c, err, "prepare");
    goto cleanup;
  }
  sqlite3_bind_text(st, 1, kind, -1, SQLITE_STATIC);
  if (after)
    sqlite3_bind_text(st, 2, after, -1, SQLITE_STATIC);
  else
    sqlite3_bind_null(st, 2);
  sqlite3_bind_int64(st, 3, (sqlite3_int64)limit + 1);
  while ((step = sqlite3_step(st)) == SQLITE_ROW) {
    if (*n == limit) {
      *more = 1;
      break;
    }
    hwdb_plan *p = &out[*n];
    const unsigned char *s;
    memset(p, 0, sizeof *p);
    if ((s = sqlite3_column_text(st, 0))) svc_strlcpy(p->id, (const char *)s, sizeof p->id);
    if ((s = sqlite3_column_text(st, 1))) svc_strlcpy(p->kind, (const char *)s, sizeof p->kind);
    if ((s = sqlite3_column_text(st, 2))) svc_strlcpy(p->hw, (const char *)s, sizeof p->hw);
    p->result = hwdb_strdup_col(st, 3);
    p->created_at = sqlite3_column_double(st, 4);
    (*n)++;
    if (!p->result) {
      rc = svc_err_set(err, SVC_NOMEM, "", NULL);
      goto cleanup;
    }
  }
  if (step != SQLITE_ROW && step != SQLITE_DONE) rc = hwdb_fail_conn(c, err, "list plans");
cleanup:
  sqlite3_finalize(st);
  hwdb_reader_done(db);
  if (rc) {
    for (size_t i = 0; i < *n; i++) hwdb_plan_dispose(&out[i]);
    *n = 0;
  }
  return rc;
}
