/* hwdb plan validations: which runner jobs ran a stored plan's baseline and
 * planned recipes (POST /v1/plans/{id}/validations). Rows are written once;
 * the measurement lives in the job's result, so a result stored by any path
 * (an output file, a results POST, an ingest) is seen by the plan. */
#include <stdlib.h>
#include <string.h>

#include "hwdb/hwdb_int.h"

int hwdb_plan_val_add(hwdb *db, const char *plan_id, const char *side, int64_t job_id,
                      const char *info, svc_err *err) {
  sqlite3_stmt *st = NULL;
  int rc = 0;
  pthread_mutex_lock(&db->lock);
  if (sqlite3_prepare_v2(db->conn,
                         "INSERT INTO plan_validation(job_id, plan_id, side, info, created_at) "
                         "VALUES (?1, ?2, ?3, ?4, ?5)",
                         -1, &st, NULL) != SQLITE_OK) {
    rc = hwdb_fail(db, err, "prepare");
    goto cleanup;
  }
  sqlite3_bind_int64(st, 1, job_id);
  sqlite3_bind_text(st, 2, plan_id, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 3, side, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 4, info, -1, SQLITE_STATIC);
  sqlite3_bind_double(st, 5, svc_wall_now());
  if (sqlite3_step(st) != SQLITE_DONE) rc = hwdb_fail(db, err, "store plan validation");
cleanup:
  sqlite3_finalize(st);
  pthread_mutex_unlock(&db->lock);
  return rc;
}

int hwdb_plan_val_list(hwdb *db, const char *plan_id, hwdb_plan_val *out, size_t cap, size_t *n,
                       svc_err *err) {
  sqlite3_stmt *st = NULL;
  int rc = 0, step;
  *n = 0;
  sqlite3 *c = hwdb_reader(db);
  if (sqlite3_prepare_v2(c,
                         "SELECT job_id, side, info, created_at FROM plan_validation "
                         "WHERE plan_id = ?1 ORDER BY job_id DESC LIMIT ?2",
                         -1, &st, NULL) != SQLITE_OK) {
    rc = hwdb_fail_conn(c, err, "prepare");
    goto cleanup;
  }
  sqlite3_bind_text(st, 1, plan_id, -1, SQLITE_STATIC);
  sqlite3_bind_int64(st, 2, (sqlite3_int64)cap);
  while ((step = sqlite3_step(st)) == SQLITE_ROW) {
    hwdb_plan_val *v = &out[*n];
    const unsigned char *s = sqlite3_column_text(st, 1);
    memset(v, 0, sizeof *v);
    v->job_id = sqlite3_column_int64(st, 0);
    if (s) svc_strlcpy(v->side, (const char *)s, sizeof v->side);
    v->info = hwdb_strdup_col(st, 2);
    v->created_at = sqlite3_column_double(st, 3);
    (*n)++;
    if (!v->info) {
      rc = svc_err_set(err, SVC_NOMEM, "", NULL);
      goto cleanup;
    }
  }
  if (step != SQLITE_DONE) rc = hwdb_fail_conn(c, err, "list plan validations");
cleanup:
  sqlite3_finalize(st);
  hwdb_reader_done(db);
  if (rc) {
    for (size_t i = 0; i < *n; i++) hwdb_plan_val_dispose(&out[i]);
    *n = 0;
  }
  return rc;
}

void hwdb_plan_val_dispose(hwdb_plan_val *v) {
  if (!v) return;
  free(v->info);
  v->info = NULL;
}

int hwdb_plan_val_plan_of(hwdb *db, int64_t job_id, char *plan_id, size_t size, svc_err *err) {
  sqlite3_stmt *st = NULL;
  int rc = 0, step;
  sqlite3 *c = hwdb_reader(db);
  if (sqlite3_prepare_v2(c, "SELECT plan_id FROM plan_validation WHERE job_id = ?1 LIMIT 1", -1,
                         &st, NULL) != SQLITE_OK) {
    rc = hwdb_fail_conn(c, err, "prepare");
    goto cleanup;
  }
  sqlite3_bind_int64(st, 1, job_id);
  step = sqlite3_step(st);
  if (step == SQLITE_ROW && sqlite3_column_text(st, 0))
    svc_strlcpy(plan_id, (const char *)sqlite3_column_text(st, 0), size);
  else if (step == SQLITE_DONE)
    rc = svc_err_set(err, SVC_NOT_FOUND, "id", "job %lld ran no plan's side", (long long)job_id);
  else
    rc = hwdb_fail_conn(c, err, "find plan validation");
cleanup:
  sqlite3_finalize(st);
  hwdb_reader_done(db);
  return rc;
}
