/* hwdb calibration versions: each fit of the cost model's efficiency
 * parameters for one accelerator is kept as a new numbered version; the
 * latest is what estimates use. Versions are never rewritten. */
#include <stdlib.h>
#include <string.h>

#include "hwdb/hwdb_int.h"

int hwdb_calib_add(hwdb *db, const char *hw, const char *params, const char *report, int *version,
                   svc_err *err) {
  sqlite3_stmt *st = NULL;
  int rc = 0, v = 0;
  pthread_mutex_lock(&db->lock);
  if ((rc = hwdb_exec(db, "BEGIN IMMEDIATE;", err))) goto cleanup;
  if (sqlite3_prepare_v2(db->conn, "SELECT 1 FROM hardware WHERE name = ?1", -1, &st, NULL) !=
      SQLITE_OK) {
    rc = hwdb_fail(db, err, "prepare");
    goto rollback;
  }
  sqlite3_bind_text(st, 1, hw, -1, SQLITE_STATIC);
  if (sqlite3_step(st) != SQLITE_ROW) {
    rc = svc_err_set(err, SVC_NOT_FOUND, "hardware", "unknown hardware '%s'", hw);
    goto rollback;
  }
  sqlite3_finalize(st);
  st = NULL;
  if (sqlite3_prepare_v2(db->conn,
                         "INSERT INTO calibration(hw, version, params, report) VALUES (?1, "
                         "(SELECT coalesce(max(version), 0) + 1 FROM calibration WHERE hw = ?1), "
                         "?2, ?3) RETURNING version",
                         -1, &st, NULL) != SQLITE_OK) {
    rc = hwdb_fail(db, err, "prepare");
    goto rollback;
  }
  sqlite3_bind_text(st, 1, hw, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 2, params, -1, SQLITE_STATIC);
  if (report)
    sqlite3_bind_text(st, 3, report, -1, SQLITE_STATIC);
  else
    sqlite3_bind_null(st, 3);
  if (sqlite3_step(st) != SQLITE_ROW) {
    rc = hwdb_fail(db, err, "store calibration");
    goto rollback;
  }
  v = sqlite3_column_int(st, 0);
  sqlite3_finalize(st);
  st = NULL;
  if ((rc = hwdb_exec(db, "COMMIT;", err))) goto rollback;
  atomic_fetch_add(&db->generation, 1);
  if (version) *version = v;
  goto cleanup;
rollback:
  sqlite3_finalize(st);
  st = NULL;
  hwdb_exec(db, "ROLLBACK;", NULL);
cleanup:
  pthread_mutex_unlock(&db->lock);
  return rc;
}

/* The newest version of one key's calibration: sql selects version, params,
 * report, created_at for ?1; field and what name a missing one. */
static int calib_latest(hwdb *db, const char *sql, const char *key, const char *field,
                        const char *what, hwdb_calib *out, svc_err *err) {
  sqlite3_stmt *st = NULL;
  int rc = 0, step;
  memset(out, 0, sizeof *out);
  sqlite3 *c = hwdb_reader(db);
  if (sqlite3_prepare_v2(c, sql, -1, &st, NULL) != SQLITE_OK) {
    rc = hwdb_fail_conn(c, err, "prepare");
    goto cleanup;
  }
  sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
  step = sqlite3_step(st);
  if (step == SQLITE_ROW) {
    svc_strlcpy(out->hw, key, sizeof out->hw);
    out->version = sqlite3_column_int(st, 0);
    out->params = hwdb_strdup_col(st, 1);
    out->report = hwdb_strdup_col(st, 2);
    out->created_at = sqlite3_column_int64(st, 3);
  } else if (step == SQLITE_DONE) {
    rc = svc_err_set(err, SVC_NOT_FOUND, field, "no calibration for %s'%s'", what, key);
  } else {
    rc = hwdb_fail_conn(c, err, *what ? "read arch calibration" : "read calibration");
  }
cleanup:
  sqlite3_finalize(st);
  hwdb_reader_done(db);
  return rc;
}

int hwdb_calib_latest(hwdb *db, const char *hw, hwdb_calib *out, svc_err *err) {
  return calib_latest(db,
                      "SELECT version, params, report, created_at FROM calibration "
                      "WHERE hw = ?1 ORDER BY version DESC LIMIT 1",
                      hw, "hardware", "", out, err);
}

void hwdb_calib_dispose(hwdb_calib *c) {
  if (!c) return;
  free(c->params);
  free(c->report);
  c->params = c->report = NULL;
}

int hwdb_arch_calib_add(hwdb *db, const char *arch, const char *params, const char *report,
                        int *version, svc_err *err) {
  sqlite3_stmt *st = NULL;
  int rc = 0;
  pthread_mutex_lock(&db->lock);
  if (sqlite3_prepare_v2(db->conn,
                         "INSERT INTO arch_calibration(arch, version, params, report) VALUES (?1, "
                         "(SELECT coalesce(max(version), 0) + 1 FROM arch_calibration WHERE arch = "
                         "?1), ?2, ?3) RETURNING version",
                         -1, &st, NULL) != SQLITE_OK) {
    rc = hwdb_fail(db, err, "prepare");
    goto cleanup;
  }
  sqlite3_bind_text(st, 1, arch, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 2, params, -1, SQLITE_STATIC);
  if (report)
    sqlite3_bind_text(st, 3, report, -1, SQLITE_STATIC);
  else
    sqlite3_bind_null(st, 3);
  /* One statement: its own implicit transaction. */
  if (sqlite3_step(st) != SQLITE_ROW) {
    rc = hwdb_fail(db, err, "store arch calibration");
    goto cleanup;
  }
  if (version) *version = sqlite3_column_int(st, 0);
  sqlite3_finalize(st);
  st = NULL;
  atomic_fetch_add(&db->generation, 1);
cleanup:
  sqlite3_finalize(st);
  pthread_mutex_unlock(&db->lock);
  return rc;
}

int hwdb_arch_calib_latest(hwdb *db, const char *arch, hwdb_calib *out, svc_err *err) {
  return calib_latest(db,
                      "SELECT version, params, report, created_at FROM arch_calibration "
                      "WHERE arch = ?1 ORDER BY version DESC LIMIT 1",
                      arch, "arch", "architecture ", out, err);
}
