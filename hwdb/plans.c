/* hwdb plans: every plan or compare answer the service gives is kept with
 * its request under a random id (GET /v1/plans/{id}). Rows are written once
 * and never changed; documents are opaque text here (api/plan.c owns
 * their JSON). */
#include <stdlib.h>
#include <string.h>

#include "hwdb/hwdb_int.h"

typedef struct {
  const char *id, *kind, *hw, *request, *result;
  double now;
} put_args;

static int put_tx(hwdb *db, hwdb_conn *c, void *arg, svc_err *err) {
  put_args *a = arg;
  hwdb_stmt *st = NULL;
  int rc;
  if ((rc = hwdb_prepare(db, c,
                         "INSERT INTO plan(id, kind, hw, request, result, created_at) "
                         "VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                         &st, err)))
    return rc;
  hwdb_bind_text(db, st, 1, a->id);
  hwdb_bind_text(db, st, 2, a->kind);
  hwdb_bind_text(db, st, 3, a->hw);
  hwdb_bind_text(db, st, 4, a->request);
  hwdb_bind_text(db, st, 5, a->result);
  hwdb_bind_double(db, st, 6, a->now);
  rc = hwdb_step(db, st, "store plan", err);
  if (rc < 0 && hwdb_violation(db, st) != HWDB_NO_VIOLATION)
    rc = svc_err_set(err, SVC_CONFLICT, "id", "plan '%s' exists", a->id);
  hwdb_finalize(db, st);
  /* no generation bump: that counter invalidates the hardware caches */
  return rc < 0 ? rc : 0;
}

int hwdb_plan_put(hwdb *db, const char *id, const char *kind, const char *hw, const char *request,
                  const char *result, svc_err *err) {
  put_args a = {.id = id,
                .kind = kind,
                .hw = hw,
                .request = request,
                .result = result,
                .now = svc_wall_now()};
  return hwdb_tx(db, put_tx, &a, err);
}

int hwdb_plan_get(hwdb *db, const char *id, hwdb_plan *out, svc_err *err) {
  hwdb_conn *c = NULL;
  hwdb_stmt *st = NULL;
  int rc;
  memset(out, 0, sizeof *out);
  if ((rc = hwdb_acquire(db, 0, &c, err))) return rc;
  if ((rc = hwdb_prepare(db, c,
                         "SELECT id, kind, hw, request, result, created_at FROM plan WHERE id = ?1",
                         &st, err)))
    goto cleanup;
  hwdb_bind_text(db, st, 1, id);
  rc = hwdb_step(db, st, "read plan", err);
  if (rc == 1) {
    rc = 0;
    hwdb_copy_col(db, st, 0, out->id, sizeof out->id);
    hwdb_copy_col(db, st, 1, out->kind, sizeof out->kind);
    hwdb_copy_col(db, st, 2, out->hw, sizeof out->hw);
    out->request = hwdb_strdup_col(db, st, 3);
    out->result = hwdb_strdup_col(db, st, 4);
    out->created_at = hwdb_col_double(db, st, 5);
    if (!out->request || !out->result) {
      hwdb_plan_dispose(out);
      rc = svc_err_set(err, SVC_NOMEM, "", NULL);
    }
  } else if (rc == 0) {
    rc = svc_err_set(err, SVC_NOT_FOUND, "id", "no plan '%s'", id);
  }
cleanup:
  hwdb_finalize(db, st);
  hwdb_release(db, c);
  return rc;
}

void hwdb_plan_dispose(hwdb_plan *p) {
  if (!p) return;
  free(p->request);
  free(p->result);
  p->request = p->result = NULL;
}

/* Newest first by insertion order (SQLite's rowid, PostgreSQL's seq: plans
 * are never updated or deleted, so it follows created_at without ties).
 * `after` is the id of the last plan of the previous page; *more says
 * whether older ones are left. Each row is read into out[] whole (request
 * left NULL: a list shows results only). */
#define LIST_SQL(order)                                                                            \
  "SELECT id, kind, hw, result, created_at FROM plan WHERE kind = ?1 AND "                         \
  "(?2 IS NULL OR " order " < (SELECT " order " FROM plan WHERE id = ?2)) "                        \
  "ORDER BY " order " DESC LIMIT ?3"
int hwdb_plan_list(hwdb *db, const char *kind, const char *after, size_t limit, hwdb_plan *out,
                   size_t *n, int *more, svc_err *err) {
  hwdb_conn *c = NULL;
  hwdb_stmt *st = NULL;
  int rc;
  *n = 0;
  *more = 0;
  if ((rc = hwdb_acquire(db, 0, &c, err))) return rc;
  if (after) {
    if ((rc = hwdb_prepare(db, c, "SELECT 1 FROM plan WHERE id = ?1 AND kind = ?2", &st, err)))
      goto cleanup;
    hwdb_bind_text(db, st, 1, after);
    hwdb_bind_text(db, st, 2, kind);
    rc = hwdb_step(db, st, "read plan", err);
    if (rc == 0) {
      rc = svc_err_set(err, SVC_BAD_FIELD, "after", "no %s '%s' to page after", kind, after);
      goto cleanup;
    }
    if (rc < 0) goto cleanup;
    hwdb_finalize(db, st);
    st = NULL;
  }
  if ((rc = hwdb_prepare(db, c, hwdb_pg(db) ? LIST_SQL("seq") : LIST_SQL("rowid"), &st, err)))
    goto cleanup;
  hwdb_bind_text(db, st, 1, kind);
  hwdb_bind_text(db, st, 2, after);
  hwdb_bind_int64(db, st, 3, (int64_t)limit + 1);
  while ((rc = hwdb_step(db, st, "list plans", err)) == 1) {
    if (*n == limit) {
      *more = 1;
      rc = 0;
      break;
    }
    hwdb_plan *p = &out[*n];
    memset(p, 0, sizeof *p);
    hwdb_copy_col(db, st, 0, p->id, sizeof p->id);
    hwdb_copy_col(db, st, 1, p->kind, sizeof p->kind);
    hwdb_copy_col(db, st, 2, p->hw, sizeof p->hw);
    p->result = hwdb_strdup_col(db, st, 3);
    p->created_at = hwdb_col_double(db, st, 4);
    (*n)++;
    if (!p->result) {
      rc = svc_err_set(err, SVC_NOMEM, "", NULL);
      goto cleanup;
    }
  }
cleanup:
  hwdb_finalize(db, st);
  hwdb_release(db, c);
  if (rc) {
    for (size_t i = 0; i < *n; i++) hwdb_plan_dispose(&out[i]);
    *n = 0;
  }
  return rc;
}
