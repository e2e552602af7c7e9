/* hwdb plan validations: which runner jobs ran a stored plan's baseline and
 * planned recipes (POST /v1/plans/{id}/validations). Rows are written once;
 * the measurement lives in the job's result, so a result stored by any path
 * (an output file, a results POST, an ingest) is seen by the plan. */
#include <stdlib.h>
#include <string.h>

#include "hwdb/hwdb_int.h"

typedef struct {
  const char *plan_id, *side, *info;
  int64_t job_id;
  double now;
} add_args;

static int add_tx(hwdb *db, hwdb_conn *c, void *arg, svc_err *err) {
  add_args *a = arg;
  hwdb_stmt *st = NULL;
  int rc;
  if ((rc = hwdb_prepare(db, c,
                         "INSERT INTO plan_validation(job_id, plan_id, side, info, created_at) "
                         "VALUES (?1, ?2, ?3, ?4, ?5)",
                         &st, err)))
    return rc;
  hwdb_bind_int64(db, st, 1, a->job_id);
  hwdb_bind_text(db, st, 2, a->plan_id);
  hwdb_bind_text(db, st, 3, a->side);
  hwdb_bind_text(db, st, 4, a->info);
  hwdb_bind_double(db, st, 5, a->now);
  rc = hwdb_step(db, st, "store plan validation", err);
  hwdb_finalize(db, st);
  return rc < 0 ? rc : 0;
}

int hwdb_plan_val_add(hwdb *db, const char *plan_id, const char *side, int64_t job_id,
                      const char *info, svc_err *err) {
  add_args a = {
      .plan_id = plan_id, .side = side, .info = info, .job_id = job_id, .now = svc_wall_now()};
  return hwdb_tx(db, add_tx, &a, err);
}

int hwdb_plan_val_list(hwdb *db, const char *plan_id, hwdb_plan_val *out, size_t cap, size_t *n,
                       svc_err *err) {
  hwdb_conn *c = NULL;
  hwdb_stmt *st = NULL;
  int rc;
  *n = 0;
  if ((rc = hwdb_acquire(db, 0, &c, err))) return rc;
  if ((rc = hwdb_prepare(db, c,
                         "SELECT job_id, side, info, created_at FROM plan_validation "
                         "WHERE plan_id = ?1 ORDER BY job_id DESC LIMIT ?2",
                         &st, err)))
    goto cleanup;
  hwdb_bind_text(db, st, 1, plan_id);
  hwdb_bind_int64(db, st, 2, (int64_t)cap);
  while ((rc = hwdb_step(db, st, "list plan validations", err)) == 1) {
    hwdb_plan_val *v = &out[*n];
    memset(v, 0, sizeof *v);
    v->job_id = hwdb_col_int64(db, st, 0);
    hwdb_copy_col(db, st, 1, v->side, sizeof v->side);
    v->info = hwdb_strdup_col(db, st, 2);
    v->created_at = hwdb_col_double(db, st, 3);
    (*n)++;
    if (!v->info) {
      rc = svc_err_set(err, SVC_NOMEM, "", NULL);
      goto cleanup;
    }
  }
cleanup:
  hwdb_finalize(db, st);
  hwdb_release(db, c);
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
  hwdb_conn *c = NULL;
  hwdb_stmt *st = NULL;
  int rc;
  if ((rc = hwdb_acquire(db, 0, &c, err))) return rc;
  if ((rc = hwdb_prepare(db, c, "SELECT plan_id FROM plan_validation WHERE job_id = ?1 LIMIT 1",
                         &st, err)))
    goto cleanup;
  hwdb_bind_int64(db, st, 1, job_id);
  rc = hwdb_step(db, st, "find plan validation", err);
  if (rc == 1) {
    hwdb_copy_col(db, st, 0, plan_id, size);
    rc = 0;
  } else if (rc == 0) {
    rc = svc_err_set(err, SVC_NOT_FOUND, "id", "job %lld ran no plan's side", (long long)job_id);
  }
cleanup:
  hwdb_finalize(db, st);
  hwdb_release(db, c);
  return rc;
}
