/* The validation job store (hwdb/jobs.c) on a real SQLite file, plus the
 * small pure parts of validate/: SHA-256 against the FIPS vectors, the
 * error statistics, token checks. */
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
#include "validate/validate.h"

static char path[64];

static int setup(void **state) {
  snprintf(path, sizeof path, "/tmp/cdplan-valstore-XXXXXX");
  int fd = mkstemp(path);
  close(fd);
  unlink(path);
  hwdb *db = NULL;
  assert_int_equal(hwdb_open(&db, path, NULL, NULL), 0);
  *state = db;
  return 0;
}

static int teardown(void **state) {
  char p[96];
  hwdb_free(*state);
  unlink(path);
  snprintf(p, sizeof p, "%s-wal", path);
  unlink(p);
  snprintf(p, sizeof p, "%s-shm", path);
  unlink(p);
  return 0;
}

static int64_t add(hwdb *db, const char *kind) {
  hwdb_job j = {0};
  svc_strlcpy(j.kind, kind, sizeof j.kind);
  svc_strlcpy(j.hw, "h200", sizeof j.hw);
  svc_strlcpy(j.backend, "local", sizeof j.backend);
  svc_sha256_hex("tok", 3, j.token_hash);
  j.params = "{\"n\":5}";
  j.prediction = "{\"cases\":[]}";
  j.timeout_s = 60;
  assert_int_equal(hwdb_job_add(db, &j, NULL), 0);
  assert_true(j.id > 0);
  assert_string_equal(j.state, "queued");
  return j.id;
}

static void test_val_store__add_get_roundtrip(void **state) {
  hwdb *db = *state;
  hwdb_job j;
  svc_err err;
  int64_t id = add(db, "cpu_selftest");
  assert_int_equal(hwdb_job_get(db, id, &j, &err), 0);
  assert_string_equal(j.kind, "cpu_selftest");
  assert_string_equal(j.state, "queued");
  assert_string_equal(j.params, "{\"n\":5}");
  assert_string_equal(j.prediction, "{\"cases\":[]}");
  assert_null(j.result);
  assert_int_equal(j.timeout_s, 60);
  assert_true(j.created_at > 1.7e9);
  hwdb_job_dispose(&j);
  assert_int_equal(hwdb_job_get(db, id + 100, &j, &err), -SVC_NOT_FOUND);
}

static void test_val_store__transition_is_compare_and_set(void **state) {
  hwdb *db = *state;
  int changed = -1;
  int64_t id = add(db, "step");
  assert_int_equal(hwdb_job_transition(db, id, "queued", "running", "go", NULL, &changed, NULL), 0);
  assert_int_equal(changed, 1);
  /* Two finishers: only the first one moves the job. */
  assert_int_equal(
      hwdb_job_transition(db, id, "queued,running", "done", "ok", "{\"r\":1}", &changed, NULL), 0);
  assert_int_equal(changed, 1);
  assert_int_equal(
      hwdb_job_transition(db, id, "queued,running", "failed", "late", NULL, &changed, NULL), 0);
  assert_int_equal(changed, 0);
  hwdb_job j;
  assert_int_equal(hwdb_job_get(db, id, &j, NULL), 0);
  assert_string_equal(j.state, "done");
  assert_string_equal(j.result, "{\"r\":1}");
  assert_string_equal(j.note, "ok");
  assert_true(j.started_at > 0 && j.finished_at >= j.started_at);
  hwdb_job_dispose(&j);
  /* "run" must not match "running": the from list matches whole names. */
  int64_t id2 = add(db, "step");
  assert_int_equal(hwdb_job_transition(db, id2, "queue", "done", NULL, NULL, &changed, NULL), 0);
  assert_int_equal(changed, 0);
}

static void test_val_store__history_in_order(void **state) {
  hwdb *db = *state;
  hwdb_job_event *ev = NULL;
  size_t n = 0;
  int64_t id = add(db, "gemm_sweep");
  hwdb_job_transition(db, id, "queued", "running", "started", NULL, NULL, NULL);
  hwdb_job_transition(db, id, "running", "failed", "boom", NULL, NULL, NULL);
  assert_int_equal(hwdb_job_history(db, id, &ev, &n, NULL), 0);
  assert_int_equal(n, 3);
  assert_string_equal(ev[0].state, "queued");
  assert_string_equal(ev[1].state, "running");
  assert_string_equal(ev[2].state, "failed");
  assert_string_equal(ev[2].note, "boom");
  assert_true(ev[0].at <= ev[1].at && ev[1].at <= ev[2].at);
  hwdb_job_history_free(ev, n);
}

static void test_val_store__handles_and_list_survive_reopen(void **state) {
  hwdb *db = *state;
  int64_t a = add(db, "cpu_selftest"), b = add(db, "cpu_selftest");
  assert_int_equal(hwdb_job_set_handles(db, a, 4242, 0, 0, "/tmp/x y", NULL), 0);
  assert_int_equal(hwdb_job_set_handles(db, a, 0, 77, 1234, NULL, NULL), 0);
  hwdb_job_transition(db, b, "queued", "cancelled", "stop", NULL, NULL, NULL);
  hwdb *again = NULL;
  assert_int_equal(hwdb_open(&again, path, NULL, NULL), 0);
  hwdb_job *list = NULL;
  size_t n = 0;
  assert_int_equal(hwdb_job_list(again, 1, 100, &list, &n, NULL), 0);
  assert_int_equal(n, 1);
  assert_int_equal(list[0].id, a);
  assert_int_equal(list[0].slurm_id, 4242);
  assert_int_equal(list[0].pid, 77);
  assert_int_equal(list[0].pid_start, 1234);
  assert_string_equal(list[0].workdir, "/tmp/x y");
  hwdb_job_list_free(list, n);
  assert_int_equal(hwdb_job_list(again, 0, 100, &list, &n, NULL), 0);
  assert_int_equal(n, 2);
  assert_int_equal(list[0].id, b); /* newest first */
  hwdb_job_list_free(list, n);
  assert_true(strstr(hwdb_filename(again), "cdplan-valstore-") != NULL);
  hwdb_free(again);
}

static void test_val_store__token_hash_checked(void **state) {
  hwdb *db = *state;
  svc_err err;
  int64_t id = add(db, "cpu_selftest"); /* token "tok" */
  assert_int_equal(val_token_check(db, id, "tok", &err), 0);
  assert_int_equal(val_token_check(db, id, "tox", &err), -SVC_FORBIDDEN);
  assert_int_equal(val_token_check(db, id, "tok ", &err), -SVC_FORBIDDEN);
  assert_int_equal(val_token_check(db, id, "", &err), -SVC_UNAUTHORIZED);
  assert_int_equal(val_token_check(db, id, NULL, &err), -SVC_UNAUTHORIZED);
}

/* A queued local job without a runner pid: while its submitter may still be
 * spawning (a server's timer polls during a request), a poll leaves it
 * alone; once that grace is over, the poll fails it. The race this guards
 * against failed a browser test under ASan. */
static void test_val_store__queued_local_job_gets_a_grace(void **state) {
  hwdb *db = *state;
  val_cfg cfg;
  hwdb_job j;
  svc_err err;
  int64_t id = add(db, "cpu_selftest");
  assert_int_equal(val_cfg_init(&cfg, path, &err), 0);
  assert_int_equal(val_poll(db, &cfg, id, &err), 0);
  assert_int_equal(hwdb_job_get(db, id, &j, &err), 0);
  assert_string_equal(j.state, "queued");
  hwdb_job_dispose(&j);
  /* an hour old: its submitter is gone */
  sqlite3 *raw = NULL;
  assert_int_equal(sqlite3_open(path, &raw), SQLITE_OK);
  sqlite3_busy_timeout(raw, 5000);
  char sql[128];
  snprintf(sql, sizeof sql, "UPDATE val_job SET created_at = created_at - 3600 WHERE id = %lld",
           (long long)id);
  assert_int_equal(sqlite3_exec(raw, sql, NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(raw);
  assert_int_equal(val_poll(db, &cfg, id, &err), 0);
  assert_int_equal(hwdb_job_get(db, id, &j, &err), 0);
  assert_string_equal(j.state, "failed");
  assert_non_null(strstr(j.note, "never started"));
  hwdb_job_dispose(&j);
}

static void test_val_sha256__fips_vectors(void **state) {
  char h[65];
  (void)state;
  svc_sha256_hex("abc", 3, h);
  assert_string_equal(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  svc_sha256_hex("", 0, h);
  assert_string_equal(h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  svc_sha256_hex(two, strlen(two), h);
  assert_string_equal(h, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  char *mill = malloc(1000000);
  memset(mill, 'a', 1000000);
  svc_sha256_hex(mill, 1000000, h);
  assert_string_equal(h, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  free(mill);
}

static void test_val_stats__median_p90_max(void **state) {
  double rel[] = {0.1, -0.2, 0.05, 0.4, -0.01, 0.3, 0.0, 0.2, -0.15, 0.25};
  val_stats s;
  (void)state;
  val_stats_compute(rel, 10, &s);
  assert_int_equal(s.n, 10);
  /* |e| sorted: 0 .01 .05 .1 .15 .2 .2 .25 .3 .4 */
  assert_true(s.median > 0.1749 && s.median < 0.1751);
  assert_true(s.p90 > 0.309 && s.p90 < 0.311);
  assert_true(s.max == 0.4);
  assert_true(s.mean_signed > 0.0939 && s.mean_signed < 0.0941);
  val_stats_compute(rel, 0, &s);
  assert_int_equal(s.n, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_val_store__add_get_roundtrip, setup, teardown),
      cmocka_unit_test_setup_teardown(test_val_store__transition_is_compare_and_set, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_val_store__history_in_order, setup, teardown),
      cmocka_unit_test_setup_teardown(test_val_store__handles_and_list_survive_reopen, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_val_store__token_hash_checked, setup, teardown),
      cmocka_unit_test_setup_teardown(test_val_store__queued_local_job_gets_a_grace, setup,
                                      teardown),
      cmocka_unit_test(test_val_sha256__fips_vectors),
      cmocka_unit_test(test_val_stats__median_p90_max),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
