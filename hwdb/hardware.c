/* hwdb hardware catalog: one row per accelerator, the descriptor kept as
 * the canonical JSON text api/ produced. Writes run in one transaction, so
 * a failed write leaves the table as it was. */
#include <stdlib.h>
#include <string.h>

#include "hwdb/hwdb_int.h"

typedef struct {
  size_t n;
  const char *const *names, *const *vendors, *const *docs;
  int mode, created;
} put_args;

static int put_one(hwdb *db, hwdb_conn *c, const char *name, const char *vendor, const char *doc,
                   int mode, int *created, svc_err *err) {
  hwdb_stmt *st = NULL;
  int rc, exists = 0;
  if ((rc = hwdb_prepare(db, c, "SELECT 1 FROM hardware WHERE name = ?1", &st, err))) return rc;
  hwdb_bind_text(db, st, 1, name);
  rc = hwdb_step(db, st, "read hardware", err);
  hwdb_finalize(db, st);
  st = NULL;
  if (rc < 0) return rc;
  exists = rc == 1;
  if (exists && mode == 0)
    return svc_err_set(err, SVC_CONFLICT, "name", "hardware '%s' already exists", name);
  const char *sql = !exists       ? "INSERT INTO hardware(name, vendor, doc) VALUES (?1, ?2, ?3)"
                    : hwdb_pg(db) ? "UPDATE hardware SET vendor = ?2, doc = ?3, "
                                    "updated_at = extract(epoch from now())::bigint WHERE name = ?1"
                                  : "UPDATE hardware SET vendor = ?2, doc = ?3, "
                                    "updated_at = strftime('%s','now') WHERE name = ?1";
  if ((rc = hwdb_prepare(db, c, sql, &st, err))) return rc;
  hwdb_bind_text(db, st, 1, name);
  hwdb_bind_text(db, st, 2, vendor);
  hwdb_bind_text(db, st, 3, doc);
  rc = hwdb_step(db, st, "write hardware", err);
  hwdb_finalize(db, st);
  if (rc < 0) return rc;
  if (created) *created = !exists;
  return 0;
}

static int put_tx(hwdb *db, hwdb_conn *c, void *arg, svc_err *err) {
  put_args *a = arg;
  int rc = 0;
  for (size_t i = 0; i < a->n && !rc; i++)
    rc = put_one(db, c, a->names[i], a->vendors[i], a->docs[i], a->mode, &a->created, err);
  return rc ? rc : hwdb_touch(db, c, err);
}

int hwdb_hw_put(hwdb *db, const char *name, const char *vendor, const char *doc, int mode,
                int *created, svc_err *err) {
  return hwdb_hw_put_many_mode(db, 1, &name, &vendor, &doc, mode, created, err);
}

int hwdb_hw_put_many_mode(hwdb *db, size_t n, const char *const *names, const char *const *vendors,
                          const char *const *docs, int mode, int *created, svc_err *err) {
  put_args a = {.n = n, .names = names, .vendors = vendors, .docs = docs, .mode = mode};
  int rc = hwdb_tx(db, put_tx, &a, err);
  if (rc) return rc;
  atomic_fetch_add(&db->generation, 1);
  if (created && n) *created = a.created;
  return 0;
}

int hwdb_hw_put_many(hwdb *db, size_t n, const char *const *names, const char *const *vendors,
                     const char *const *docs, svc_err *err) {
  return hwdb_hw_put_many_mode(db, n, names, vendors, docs, 1, NULL, err);
}

static void fill_row(hwdb *db, hwdb_stmt *st, hwdb_hw *out) {
  memset(out, 0, sizeof *out);
  hwdb_copy_col(db, st, 0, out->name, sizeof out->name);
  hwdb_copy_col(db, st, 1, out->vendor, sizeof out->vendor);
  out->doc = hwdb_strdup_col(db, st, 2);
  out->updated_at = hwdb_col_int64(db, st, 3);
}

int hwdb_hw_get(hwdb *db, const char *name, hwdb_hw *out, svc_err *err) {
  hwdb_conn *c = NULL;
  hwdb_stmt *st = NULL;
  int rc;
  memset(out, 0, sizeof *out);
  if ((rc = hwdb_acquire(db, 0, &c, err))) return rc;
  if ((rc = hwdb_prepare(
           db, c, "SELECT name, vendor, doc, updated_at FROM hardware WHERE name = ?1", &st, err)))
    goto cleanup;
  hwdb_bind_text(db, st, 1, name);
  rc = hwdb_step(db, st, "read hardware", err);
  if (rc == 1) {
    fill_row(db, st, out);
    rc = out->doc ? 0 : svc_err_set(err, SVC_NOMEM, "", NULL);
  } else if (rc == 0) {
    rc = svc_err_set(err, SVC_NOT_FOUND, "name", "unknown hardware '%s'", name);
  }
cleanup:
  hwdb_finalize(db, st);
  hwdb_release(db, c);
  return rc;
}

static int delete_tx(hwdb *db, hwdb_conn *c, void *arg, svc_err *err) {
  const char *name = arg;
  hwdb_stmt *st = NULL;
  int rc;
  if ((rc = hwdb_prepare(db, c, "DELETE FROM hardware WHERE name = ?1", &st, err))) return rc;
  hwdb_bind_text(db, st, 1, name);
  if ((rc = hwdb_step(db, st, "delete hardware", err)) >= 0)
    rc = hwdb_changes(db, st) == 0
             ? svc_err_set(err, SVC_NOT_FOUND, "name", "unknown hardware '%s'", name)
             : hwdb_touch(db, c, err);
  hwdb_finalize(db, st);
  return rc;
}

int hwdb_hw_delete(hwdb *db, const char *name, svc_err *err) {
  int rc = hwdb_tx(db, delete_tx, (void *)name, err);
  if (!rc) atomic_fetch_add(&db->generation, 1);
  return rc;
}

int hwdb_hw_list(hwdb *db, const char *vendor, hwdb_hw **out, size_t *n, svc_err *err) {
  hwdb_conn *c = NULL;
  hwdb_stmt *st = NULL;
  hwdb_hw *list = NULL;
  size_t count = 0, cap = 0;
  int rc;
  *out = NULL;
  *n = 0;
  if ((rc = hwdb_acquire(db, 0, &c, err))) return rc;
  if ((rc = hwdb_prepare(db, c,
                         "SELECT name, vendor, doc, updated_at FROM hardware "
                         "WHERE ?1 IS NULL OR vendor = ?1 ORDER BY name",
                         &st, err)))
    goto cleanup;
  hwdb_bind_text(db, st, 1, vendor);
  while ((rc = hwdb_step(db, st, "list hardware", err)) == 1) {
    if (count == cap) {
      cap = cap ? cap * 2 : 16;
      hwdb_hw *nl = realloc(list, cap * sizeof *nl);
      if (!nl) {
        rc = svc_err_set(err, SVC_NOMEM, "", NULL);
        goto cleanup;
      }
      list = nl;
    }
    fill_row(db, st, &list[count++]);
  }
  if (rc) goto cleanup;
  *out = list;
  *n = count;
  list = NULL;
cleanup:
  hwdb_finalize(db, st);
  hwdb_release(db, c);
  hwdb_hw_list_free(list, count);
  return rc;
}

/* One count(*) (or other single integer) read on a read connection. */
int hwdb_count(hwdb *db, const char *sql, const char *what, int64_t *n, svc_err *err) {
  hwdb_conn *c = NULL;
  hwdb_stmt *st = NULL;
  int rc;
  if ((rc = hwdb_acquire(db, 0, &c, err))) return rc;
  if (!(rc = hwdb_prepare(db, c, sql, &st, err))) {
    rc = hwdb_step(db, st, what, err);
    if (rc == 1) {
      *n = hwdb_col_int64(db, st, 0);
      rc = 0;
    } else if (rc == 0) {
      rc = svc_err_set(err, SVC_DB, "", "database: %s: no row", what);
    }
  }
  hwdb_finalize(db, st);
  hwdb_release(db, c);
  return rc;
}

int hwdb_hw_count(hwdb *db, int64_t *n, svc_err *err) {
  return hwdb_count(db, "SELECT count(*) FROM hardware", "count hardware", n, err);
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
