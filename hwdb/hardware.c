/* hwdb hardware catalog: one row per accelerator, the descriptor kept as
 * the canonical JSON text api/ produced. Writes hold the handle's lock and
 * run in one transaction, so a failed write leaves the table as it was. */
#include <stdlib.h>
#include <string.h>

#include "hwdb/hwdb_int.h"

static int put_locked(hwdb *db, const char *name, const char *vendor, const char *doc, int mode,
                      int *created, svc_err *err) {
  sqlite3_stmt *st = NULL;
  int rc = 0, exists = 0;
  if (sqlite3_prepare_v2(db->conn, "SELECT 1 FROM hardware WHERE name = ?1", -1, &st, NULL) !=
      SQLITE_OK)
    return hwdb_fail(db, err, "prepare");
  sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
  exists = sqlite3_step(st) == SQLITE_ROW;
  sqlite3_finalize(st);
  st = NULL;
  if (exists && mode == 0)
    return svc_err_set(err, SVC_CONFLICT, "name", "hardware '%s' already exists", name);
  const char *sql = exists ? "UPDATE hardware SET vendor = ?2, doc = ?3, "
                             "updated_at = strftime('%s','now') WHERE name = ?1"
                           : "INSERT INTO hardware(name, vendor, doc) VALUES (?1, ?2, ?3)";
  if (sqlite3_prepare_v2(db->conn, sql, -1, &st, NULL) != SQLITE_OK)
    return hwdb_fail(db, err, "prepare");
  sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 2, vendor, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 3, doc, -1, SQLITE_STATIC);
  if (sqlite3_step(st) != SQLITE_DONE) rc = hwdb_fail(db, err, "write hardware");
  sqlite3_finalize(st);
  if (!rc && created) *created = !exists;
  return rc;
}

int hwdb_hw_put(hwdb *db, const char *name, const char *vendor, const char *doc, int mode,
                int *created, svc_err *err) {
  return hwdb_hw_put_many_mode(db, 1, &name, &vendor, &doc, mode, created, err);
}

int hwdb_hw_put_many_mode(hwdb *db, size_t n, const char *const *names, const char *const *vendors,
                          const char *const *docs, int mode, int *created, svc_err *err) {
  int rc = 0;
  pthread_mutex_lock(&db->lock);
  if ((rc = hwdb_exec(db, "BEGIN IMMEDIATE;", err))) goto cleanup;
  for (size_t i = 0; i < n && !rc; i++)
    rc = put_locked(db, names[i], vendors[i], docs[i], mode, created, err);
  if (rc) {
    hwdb_exec(db, "ROLLBACK;", NULL);
    goto cleanup;
  }
  if ((rc = hwdb_exec(db, "COMMIT;", err))) {
    hwdb_exec(db, "ROLLBACK;", NULL);
    goto cleanup;
  }
  atomic_fetch_add(&db->generation, 1);
cleanup:
  pthread_mutex_unlock(&db->lock);
  return rc;
}

int hwdb_hw_put_many(hwdb *db, size_t n, const char *const *names, const char *const *vendors,
                     const char *const *docs, svc_err *err) {
  return hwdb_hw_put_many_mode(db, n, names, vendors, docs, 1, NULL, err);
}

static void fill_row(sqlite3_stmt *st, hwdb_hw *out) {
  memset(out, 0, sizeof *out);
  svc_strlcpy(out->name, (const char *)sqlite3_column_text(st, 0), sizeof out->name);
  svc_strlcpy(out->vendor, (const char *)sqlite3_column_text(st, 1), sizeof out->vendor);
  out->doc = hwdb_strdup_col(st, 2);
  out->updated_at = sqlite3_column_int64(st, 3);
}

int hwdb_hw_get(hwdb *db, const char *name, hwdb_hw *out, svc_err *err) {
  sqlite3_stmt *st = NULL;
  int rc = 0, step;
  memset(out, 0, sizeof *out);
  sqlite3 *c = hwdb_reader(db);
  if (sqlite3_prepare_v2(c, "SELECT name, vendor, doc, updated_at FROM hardware WHERE name = ?1",
                         -1, &st, NULL) != SQLITE_OK) {
    rc = hwdb_fail_conn(c, err, "prepare");
    goto cleanup;
  }
  sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
  step = sqlite3_step(st);
  if (step == SQLITE_ROW) {
    fill_row(st, out);
    if (!out->doc) rc = svc_err_set(err, SVC_NOMEM, "", NULL);
  } else if (step == SQLITE_DONE) {
    rc = svc_err_set(err, SVC_NOT_FOUND, "name", "unknown hardware '%s'", name);
  } else {
    rc = hwdb_fail_conn(c, err, "read hardware");
  }
cleanup:
  sqlite3_finalize(st);
  hwdb_reader_done(db);
  return rc;
}

int hwdb_hw_delete(hwdb *db, const char *name, svc_err *err) {
  sqlite3_stmt *st = NULL;
  int rc = 0;
  pthread_mutex_lock(&db->lock);
  if (sqlite3_prepare_v2(db->conn, "DELETE FROM hardware WHERE name = ?1", -1, &st, NULL) !=
      SQLITE_OK) {
    rc = hwdb_fail(db, err, "prepare");
    goto cleanup;
  }
  sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
  if (sqlite3_step(st) != SQLITE_DONE) {
    rc = hwdb_fail(db, err, "delete hardware");
    goto cleanup;
  }
  if (sqlite3_changes(db->conn) == 0) {
    rc = svc_err_set(err, SVC_NOT_FOUND, "name", "unknown hardware '%s'", name);
    goto cleanup;
  }
  atomic_fetch_add(&db->generation, 1);
cleanup:
  sqlite3_finalize(st);
  pthread_mutex_unlock(&db->lock);
  return rc;
}

int hwdb_hw_list(hwdb *db, const char *vendor, hwdb_hw **out, size_t *n, svc_err *err) {
  sqlite3_stmt *st = NULL;
  hwdb_hw *list = NULL;
  size_t count = 0, cap = 0;
  int rc = 0, step;
  *out = NULL;
  *n = 0;
  sqlite3 *c = hwdb_reader(db);
  if (sqlite3_prepare_v2(c,
                         "SELECT name, vendor, doc, updated_at FROM hardware "
                         "WHERE ?1 IS NULL OR vendor = ?1 ORDER BY name",
                         -1, &st, NULL) != SQLITE_OK) {
    rc = hwdb_fail_conn(c, err, "prepare");
    goto cleanup;
  }
  if (vendor) sqlite3_bind_text(st, 1, vendor, -1, SQLITE_STATIC);
  while ((step = sqlite3_step(st)) == SQLITE_ROW) {
    if (count == cap) {
      cap = cap ? cap * 2 : 16;
      hwdb_hw *nl = realloc(list, cap * sizeof *nl);
      if (!nl) {
        rc = svc_err_set(err, SVC_NOMEM, "", NULL);
        goto cleanup;
      }
      list = nl;
    }
    fill_row(st, &list[count++]);
  }
  if (step != SQLITE_DONE) {
    rc = hwdb_fail_conn(c, err, "list hardware");
    goto cleanup;
  }
  *out = list;
  *n = count;
  list = NULL;
cleanup:
  sqlite3_finalize(st);
  hwdb_reader_done(db);
  hwdb_hw_list_free(list, count);
  return rc;
}

int hwdb_hw_count(hwdb *db, int64_t *n, svc_err *err) {
  sqlite3_stmt *st = NULL;
  int rc = 0;
  sqlite3 *c = hwdb_reader(db);
  if (sqlite3_prepare_v2(c, "SELECT count(*) FROM hardware", -1, &st, NULL) != SQLITE_OK ||
      sqlite3_step(st) != SQLITE_ROW)
    rc = hwdb_fail_conn(c, err, "count hardware");
  else
    *n = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  hwdb_reader_done(db);
  return rc;
}

void hwdb_hw_dispose(hwdb_hw *hw) {
  if (!hw) return;
  free(hw->doc);
  hw->doc = NULL;
}

void hwdb_hw_list_free(hwdb_hw *list, size_t n) {
  for (size_t i = 0; list && i < n; i++) hwdb_hw_dispose(&list[i]);
  free(list);
}
