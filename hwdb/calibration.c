/* hwdb calibration versions: each fit of the cost model's efficiency
 * parameters for one accelerator is kept as a new numbered version; the
 * latest is what estimates use. Versions are never rewritten. */
#include <stdlib.h>
#include <string.h>

#include "hwdb/hwdb_int.h"

typedef struct {
  const char *key, *params, *report;
  int need_hw; /* the key must be a catalog row (per hardware, not per arch) */
  int version;
} add_args;

static int add_tx(hwdb *db, hwdb_conn *c, void *arg, svc_err *err) {
  add_args *a = arg;
  hwdb_stmt *st = NULL;
  int rc;
  if (a->need_hw) {
    if ((rc = hwdb_prepare(db, c, "SELECT 1 FROM hardware WHERE name = ?1", &st, err))) return rc;
    hwdb_bind_text(db, st, 1, a->key);
    rc = hwdb_step(db, st, "read hardware", err);
    hwdb_finalize(db, st);
    st = NULL;
    if (rc < 0) return rc;
    if (rc == 0)
      return svc_err_set(err, SVC_NOT_FOUND, "hardware", "unknown hardware '%s'", a->key);
  }
  if ((rc = hwdb_prepare(
           db, c,
           a->need_hw ? "INSERT INTO calibration(hw, version, params, report) VALUES (?1, "
                        "(SELECT coalesce(max(version), 0) + 1 FROM calibration WHERE hw = ?1), "
                        "?2, ?3) RETURNING version"
                      : "INSERT INTO arch_calibration(arch, version, params, report) VALUES (?1, "
                        "(SELECT coalesce(max(version), 0) + 1 FROM arch_calibration WHERE arch = "
                        "?1), ?2, ?3) RETURNING version",
           &st, err)))
    return rc;
  hwdb_bind_text(db, st, 1, a->key);
  hwdb_bind_text(db, st, 2, a->params);
  hwdb_bind_text(db, st, 3, a->report);
  rc = hwdb_step(db, st, a->need_hw ? "store calibration" : "store arch calibration", err);
  if (rc == 1) {
    a->version = (int)hwdb_col_int64(db, st, 0);
    rc = 0;
  } else if (rc == 0) {
    rc = svc_err_set(err, SVC_DB, "", "database: store calibration: no version returned");
  }
  hwdb_finalize(db, st);
  return rc ? rc : hwdb_touch(db, c, err);
}

static int calib_add(hwdb *db, const char *key, int need_hw, const char *params, const char *report,
                     int *version, svc_err *err) {
  add_args a = {.key = key, .params = params, .report = report, .need_hw = need_hw};
  int rc = hwdb_tx(db, add_tx, &a, err);
  if (rc) return rc;
  atomic_fetch_add(&db->generation, 1);
  if (version) *version = a.version;
  return 0;
}

int hwdb_calib_add(hwdb *db, const char *hw, const char *params, const char *report, int *version,
                   svc_err *err) {
  return calib_add(db, hw, 1, params, report, version, err);
}

/* The newest version of one key's calibration: sql selects version, params,
 * report, created_at for ?1; field and what name a missing one. */
static int calib_latest(hwdb *db, const char *sql, const char *key, const char *field,
                        const char *what, hwdb_calib *out, svc_err *err) {
  hwdb_conn *c = NULL;
  hwdb_stmt *st = NULL;
  int rc;
  memset(out, 0, sizeof *out);
  if ((rc = hwdb_acquire(db, 0, &c, err))) return rc;
  if ((rc = hwdb_prepare(db, c, sql, &st, err))) goto cleanup;
  hwdb_bind_text(db, st, 1, key);
  rc = hwdb_step(db, st, *what ? "read arch calibration" : "read calibration", err);
  if (rc == 1) {
    svc_strlcpy(out->hw, key, sizeof out->hw);
    out->version = (int)hwdb_col_int64(db, st, 0);
    out->params = hwdb_strdup_col(db, st, 1);
    out->report = hwdb_strdup_col(db, st, 2);
    out->created_at = hwdb_col_int64(db, st, 3);
    rc = 0;
  } else if (rc == 0) {
    rc = svc_err_set(err, SVC_NOT_FOUND, field, "no calibration for %s'%s'", what, key);
  }
cleanup:
  hwdb_finalize(db, st);
  hwdb_release(db, c);
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
  return calib_add(db, arch, 0, params, report, version, err);
}

int hwdb_arch_calib_latest(hwdb *db, const char *arch, hwdb_calib *out, svc_err *err) {
  return calib_latest(db,
                      "SELECT version, params, report, created_at FROM arch_calibration "
                      "WHERE arch = ?1 ORDER BY version DESC LIMIT 1",
                      arch, "arch", "architecture ", out, err);
}
