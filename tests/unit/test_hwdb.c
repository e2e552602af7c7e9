/* hwdb against a real SQLite file (test_hwdb) or a fresh database of a
 * throw-away PostgreSQL cluster (test_hwdb_pg, tests/pg): migrations,
 * catalog CRUD, transactions that leave the table as it was on failure,
 * calibration versions, concurrent writers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <pthread.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "hwdb/hwdb.h"
#include "pg_testdb.h"
#include "tests/tmpdb.h"

static char path[256];

static int setup(void **state) {
  char file[64];
  tmpdb_name(file, sizeof file, "hwdb"); /* hwdb creates it */
  assert_int_equal(testdb_make(path, sizeof path, file), 0);
  hwdb *db = NULL;
  int created = 0;
  assert_int_equal(hwdb_open(&db, path, &created, NULL), 0);
  assert_int_equal(created, 1);
  *state = db;
  return 0;
}

static int teardown(void **state) {
  hwdb_free(*state);
  tmpdb_remove(path);
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
  char file[64] = "/tmp/cdplan-hwdb-new-XXXXXX", p[256];
  int fd = mkstemp(file);
  close(fd);
  assert_int_equal(testdb_make(p, sizeof p, file), 0);
  hwdb *db = NULL;
  svc_err err;
  assert_int_equal(hwdb_open(&db, p, NULL, &err), 0);
  hwdb_free(db);
  /* Pretend a later cdplan wrote the store. */
  if (testdb_is_pg()) {
    assert_int_equal(testdb_exec(p, "UPDATE schema_version SET version = 999"), 0);
  } else {
    sqlite3 *raw = NULL;
    assert_int_equal(sqlite3_open(p, &raw), SQLITE_OK);
    assert_int_equal(sqlite3_exec(raw, "PRAGMA user_version=999", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(raw);
  }
  assert_int_equal(hwdb_open(&db, p, NULL, &err), -SVC_DB);
  assert_non_null(strstr(err.message, "newer"));
  unlink(file);
}

/* Writers on two handles (two processes' worth of connections) bump one
 * calibration counter at once: every write lands, versions 1..N without a
 * gap or a repeat (PostgreSQL: serialization failures retried). */
typedef struct {
  hwdb *db;
  int fails;
} writer_arg;

#define WRITES_PER_THREAD 25

static void *writer(void *p) {
  writer_arg *a = p;
  for (int i = 0; i < WRITES_PER_THREAD; i++) {
    svc_err err;
    int v = 0;
    if (hwdb_calib_add(a->db, "race", "{}", NULL, &v, &err)) {
      fprintf(stderr, "calib_add: %s\n", err.message);
      a->fails++;
    }
  }
  return NULL;
}

static void test_hwdb__concurrent_writers_all_land(void **state) {
  hwdb *db = *state, *other = NULL;
  svc_err err;
  assert_int_equal(hwdb_hw_put(db, "race", "amd", "{}", 0, NULL, &err), 0);
  assert_int_equal(hwdb_open(&other, path, NULL, &err), 0);
  pthread_t t[4];
  writer_arg args[4] = {{db, 0}, {other, 0}, {db, 0}, {other, 0}};
  for (int i = 0; i < 4; i++) assert_int_equal(pthread_create(&t[i], NULL, writer, &args[i]), 0);
  for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
  for (int i = 0; i < 4; i++) assert_int_equal(args[i].fails, 0);
  hwdb_calib c;
  assert_int_equal(hwdb_calib_latest(other, "race", &c, &err), 0);
  assert_int_equal(c.version, 4 * WRITES_PER_THREAD);
  hwdb_calib_dispose(&c);
  hwdb_free(other);
}

/* A catalog write through one handle reaches the other handle's
 * generation (what invalidates a replica's descriptor cache). */
static void test_hwdb__other_handles_write_changes_generation(void **state) {
  hwdb *db = *state, *other = NULL;
  svc_err err;
  assert_int_equal(hwdb_open(&other, path, NULL, &err), 0);
  uint64_t g0 = hwdb_generation(db);
  assert_int_equal(hwdb_hw_put(other, "elsewhere", "amd", "{}", 0, NULL, &err), 0);
  if (testdb_is_pg()) {
    usleep(600 * 1000); /* past the generation's 0.5 s cache */
    assert_true(hwdb_generation(db) != g0);
  }
  hwdb_hw row;
  assert_int_equal(hwdb_hw_get(db, "elsewhere", &row, &err), 0);
  hwdb_hw_dispose(&row);
  hwdb_free(other);
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
      cmocka_unit_test_setup_teardown(test_hwdb__concurrent_writers_all_land, setup, teardown),
      cmocka_unit_test_setup_teardown(test_hwdb__other_handles_write_changes_generation, setup,
                                      teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
