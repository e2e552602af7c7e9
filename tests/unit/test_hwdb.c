/* hwdb against a real SQLite file: migrations, catalog CRUD, transactions
 * that leave the table as it was on failure, calibration versions. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "hwdb/hwdb.h"

static char path[64];

static int setup(void **state) {
  snprintf(path, sizeof path, "/tmp/cdplan-hwdb-XXXXXX");
  int fd = mkstemp(path);
  close(fd);
  unlink(path); /* hwdb creates it */
  hwdb *db = NULL;
  int created = 0;
  assert_int_equal(hwdb_open(&db, path, &created, NULL), 0);
  assert_int_equal(created, 1);
  *state = db;
  return 0;
}

static int teardown(void **state) {
  hwdb_free(*state);
  char p[96];
  unlink(path);
  snprintf(p, sizeof p, "%s-wal", path);
  unlink(p);
  snprintf(p, sizeof p, "%s-shm", path);
  unlink(p);
  return 0;
}

static void test_hwdb__reopen_keeps_rows_and_schema(void **state) {
  hwdb *db = *state;
  svc_err err;
  assert_int_equal(hwdb_hw_put(db, "a1", "amd", "{\"x\":1}", 0, NULL, &err), 0);
  hwdb *again = NULL;
  int created = 1;
  assert_int_equal(hwdb_open(&again, path, &created, &err), 0);
  assert_int_equal(created, 0);
  hwdb_hw row;
  assert_int_equal(hwdb_hw_get(again, "a1", &row, &err), 0);
  assert_string_equal(row.doc, "{\"x\":1}");
  assert_string_equal(row.vendor, "amd");
  hwdb_hw_dispose(&row);
  hwdb_free(again);
}

static void test_hwdb__insert_conflict_and_upsert(void **state) {
  hwdb *db = *state;
  svc_err err;
  int created = -1;
  assert_int_equal(hwdb_hw_put(db, "g", "nvidia", "{}", 0, &created, &err), 0);
  assert_int_equal(created, 1);
  assert_int_equal(hwdb_hw_put(db, "g", "nvidia", "{\"v\":2}", 0, NULL, &err), -SVC_CONFLICT);
  assert_string_equal(err.field, "name");
  assert_int_equal(hwdb_hw_put(db, "g", "nvidia", "{\"v\":3}", 1, &created, &err), 0);
  assert_int_equal(created, 0);
  hwdb_hw row;
  assert_int_equal(hwdb_hw_get(db, "g", &row, &err), 0);
  assert_string_equal(row.doc, "{\"v\":3}");
  hwdb_hw_dispose(&row);
}

static void test_hwdb__get_delete_unknown_is_not_found(void **state) {
  hwdb *db = *state;
  svc_err err;
  hwdb_hw row;
  assert_int_equal(hwdb_hw_get(db, "nope", &row, &err), -SVC_NOT_FOUND);
  assert_int_equal(hwdb_hw_delete(db, "nope", &err), -SVC_NOT_FOUND);
  assert_int_equal(hwdb_hw_put(db, "x", "amd", "{}", 0, NULL, &err), 0);
  assert_int_equal(hwdb_hw_delete(db, "x", &err), 0);
  assert_int_equal(hwdb_hw_get(db, "x", &row, &err), -SVC_NOT_FOUND);
}

static void test_hwdb__list_filters_by_vendor_in_name_order(void **state) {
  hwdb *db = *state;
  svc_err err;
  const char *names[] = {"zz", "aa", "mm"}, *vendors[] = {"amd", "amd", "nvidia"},
             *docs[] = {"{}", "{}", "{}"};
  assert_int_equal(hwdb_hw_put_many(db, 3, names, vendors, docs, &err), 0);
  hwdb_hw *list = NULL;
  size_t n = 0;
  assert_int_equal(hwdb_hw_list(db, "amd", &list, &n, &err), 0);
  assert_int_equal(n, 2);
  assert_string_equal(list[0].name, "aa");
  assert_string_equal(list[1].name, "zz");
  hwdb_hw_list_free(list, n);
  assert_int_equal(hwdb_hw_list(db, NULL, &list, &n, &err), 0);
  assert_int_equal(n, 3);
  hwdb_hw_list_free(list, n);
}

static void test_hwdb__failed_batch_leaves_table_unchanged(void **state) {
  hwdb *db = *state;
  svc_err err;
  assert_int_equal(hwdb_hw_put(db, "keep", "amd", "{\"old\":1}", 0, NULL, &err), 0);
  /* The second row collides in insert mode: the whole batch must roll back. */
  const char *names[] = {"new1", "keep"}, *vendors[] = {"amd", "amd"}, *docs[] = {"{}", "{}"};
  assert_int_equal(hwdb_hw_put_many_mode(db, 2, names, vendors, docs, 0, NULL, &err),
                   -SVC_CONFLICT);
  hwdb_hw row;
  assert_int_equal(hwdb_hw_get(db, "new1", &row, &err), -SVC_NOT_FOUND);
  assert_int_equal(hwdb_hw_get(db, "keep", &row, &err), 0);
  assert_string_equal(row.doc, "{\"old\":1}");
  hwdb_hw_dispose(&row);
}

static void test_hwdb__calibration_versions_count_up(void **state) {
  hwdb *db = *state;
  svc_err err;
  int v = 0;
  hwdb_calib c;
  assert_int_equal(hwdb_calib_add(db, "ghost", "{}", NULL, &v, &err), -SVC_NOT_FOUND);
  assert_int_equal(hwdb_hw_put(db, "h", "nvidia", "{}", 0, NULL, &err), 0);
  assert_int_equal(hwdb_calib_latest(db, "h", &c, &err), -SVC_NOT_FOUND);
  uint64_t g0 = hwdb_generation(db);
  assert_int_equal(hwdb_calib_add(db, "h", "{\"a\":1}", "{\"r\":1}", &v, &err), 0);
  assert_int_equal(v, 1);
  assert_int_equal(hwdb_calib_add(db, "h", "{\"a\":2}", NULL, &v, &err), 0);
  assert_int_equal(v, 2);
  assert_true(hwdb_generation(db) > g0);
  assert_int_equal(hwdb_calib_latest(db, "h", &c, &err), 0);
  assert_int_equal(c.version, 2);
  assert_string_equal(c.params, "{\"a\":2}");
  assert_null(c.report);
  hwdb_calib_dispose(&c);
}

static void test_hwdb__newer_schema_is_refused(void **state) {
  (void)state;
  char p[64] = "/tmp/cdplan-hwdb-new-XXXXXX";
  int fd = mkstemp(p);
  close(fd);
  hwdb *db = NULL;
  svc_err err;
  assert_int_equal(hwdb_open(&db, p, NULL, &err), 0);
  hwdb_free(db);
  /* Pretend a later cdplan wrote the file. */
  sqlite3 *raw = NULL;
  assert_int_equal(sqlite3_open(p, &raw), SQLITE_OK);
  assert_int_equal(sqlite3_exec(raw, "PRAGMA user_version=999", NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(raw);
  assert_int_equal(hwdb_open(&db, p, NULL, &err), -SVC_DB);
  assert_non_null(strstr(err.message, "newer"));
  unlink(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_hwdb__reopen_keeps_rows_and_schema, setup, teardown),
      cmocka_unit_test_setup_teardown(test_hwdb__insert_conflict_and_upsert, setup, teardown),
      cmocka_unit_test_setup_teardown(test_hwdb__get_delete_unknown_is_not_found, setup, teardown),
      cmocka_unit_test_setup_teardown(test_hwdb__list_filters_by_vendor_in_name_order, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_hwdb__failed_batch_leaves_table_unchanged, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_hwdb__calibration_versions_count_up, setup, teardown),
      cmocka_unit_test(test_hwdb__newer_schema_is_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
