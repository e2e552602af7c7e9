/* The validation job store (hwdb/jobs.c) on a real SQLite file (or, as
 * test_val_store_pg, a PostgreSQL database: tests/pg), plus the
 * small pure parts of validate/: SHA-256 against the FIPS vectors, the
 * error statistics, token checks; and the reconcile tick's bounds over
 * thousands of jobs (validate/job.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "hwdb/hwdb.h"
#include "validate/validate_int.h" /* val_proc_start */
#include "pg_testdb.h"
#include "tests/tmpdb.h"

/* path: a file name (the SQLite store, and where job folders go); store:
 * what hwdb opens (path, or a PostgreSQL database under test_val_store_pg). */
static char path[64], store[256];

static int setup(void **state) {
  tmpdb_name(path, sizeof path, "valstore");
  assert_int_equal(testdb_make(store, sizeof store, path), 0);
  hwdb *db = NULL;
  assert_int_equal(hwdb_open(&db, store, NULL, NULL), 0);
  *state = db;
  return 0;
}

static int teardown(void **state) {
  hwdb_free(*state);
  tmpdb_remove(path);
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
  assert_int_equal(hwdb_open(&again, store, NULL, NULL), 0);
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
  if (!testdb_is_pg()) assert_true(strstr(hwdb_filename(again), "cdplan-valstore-") != NULL);
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

static void raw_exec(const char *sql) {
  if (testdb_is_pg()) {
    assert_int_equal(testdb_exec(store, sql), 0);
    return;
  }
  sqlite3 *raw = NULL;
  assert_int_equal(sqlite3_open(path, &raw), SQLITE_OK);
  sqlite3_busy_timeout(raw, 5000);
  char *msg = NULL;
  if (sqlite3_exec(raw, sql, NULL, NULL, &msg) != SQLITE_OK) fail_msg("%s: %s", sql, msg);
  sqlite3_close(raw);
}

static int64_t raw_count(const char *sql) {
  if (testdb_is_pg()) return testdb_count(store, sql);
  sqlite3 *raw = NULL;
  sqlite3_stmt *st = NULL;
  int64_t n = -1;
  assert_int_equal(sqlite3_open(path, &raw), SQLITE_OK);
  assert_int_equal(sqlite3_prepare_v2(raw, sql, -1, &st, NULL), SQLITE_OK);
  if (sqlite3_step(st) == SQLITE_ROW) n = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(raw);
  return n;
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
  char sql[128];
  snprintf(sql, sizeof sql, "UPDATE val_job SET created_at = created_at - 3600 WHERE id = %lld",
           (long long)id);
  raw_exec(sql);
  assert_int_equal(val_poll(db, &cfg, id, &err), 0);
  assert_int_equal(hwdb_job_get(db, id, &j, &err), 0);
  assert_string_equal(j.state, "failed");
  assert_non_null(strstr(j.note, "never started"));
  hwdb_job_dispose(&j);
}

/* The list reads no result text (a sweep's is megabytes); a get does. */
static void test_val_store__list_leaves_results_unread(void **state) {
  hwdb *db = *state;
  size_t big = 1u << 20, n = 0;
  char *result = malloc(big + 16);
  int64_t id = add(db, "gemm_sweep");
  memcpy(result, "{\"log\":\"", 8);
  memset(result + 8, 'x', big);
  memcpy(result + 8 + big, "\"}", 3);
  assert_int_equal(hwdb_job_transition(db, id, "queued", "done", "ok", result, NULL, NULL), 0);
  hwdb_job *list = NULL;
  assert_int_equal(hwdb_job_list_flags(db, 0, 10, HWDB_JOB_NO_RESULT, &list, &n, NULL), 0);
  assert_int_equal(n, 1);
  assert_null(list[0].result);
  assert_string_equal(list[0].params, "{\"n\":5}"); /* the rest is read */
  assert_string_equal(list[0].prediction, "{\"cases\":[]}");
  assert_string_equal(list[0].state, "done");
  assert_string_equal(list[0].note, "ok");
  hwdb_job_list_free(list, n);
  hwdb_job j;
  assert_int_equal(hwdb_job_get(db, id, &j, NULL), 0);
  assert_non_null(j.result);
  assert_int_equal(strlen(j.result), big + 10);
  hwdb_job_dispose(&j);
  assert_int_equal(hwdb_job_list(db, 0, 10, &list, &n, NULL), 0); /* the old call still reads it */
  assert_non_null(list[0].result);
  hwdb_job_list_free(list, n);
  free(result);
}

/* n active jobs of backend in one statement (hwdb_job_add is one
 * transaction each); created_at now + age_s. */
static void add_many(const char *backend, int n, double age_s, int64_t timeout_s) {
  char sql[1024];
  if (testdb_is_pg()) {
    snprintf(sql, sizeof sql,
             "INSERT INTO val_job(kind, hw, backend, params, state, token_hash, timeout_s, "
             "created_at, updated_at) SELECT 'cpu_selftest', 'h200', '%s', '{}', 'queued', 'x', "
             "%lld, extract(epoch from now())::float8 + %f, extract(epoch from now())::float8 "
             "FROM generate_series(1, %d)",
             backend, (long long)timeout_s, age_s, n);
    raw_exec(sql);
    return;
  }
  snprintf(
      sql, sizeof sql,
      "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < %d) "
      "INSERT INTO val_job(kind, hw, backend, params, state, token_hash, timeout_s, "
      "created_at, updated_at) SELECT 'cpu_selftest', 'h200', '%s', '{}', 'queued', 'x', %lld, "
      "(julianday('now') - 2440587.5) * 86400.0 + %f, "
      "(julianday('now') - 2440587.5) * 86400.0 FROM c",
      n, backend, (long long)timeout_s, age_s);
  raw_exec(sql);
}

/* One tick pass over 10,050 queued bundle jobs, 100 Slurm jobs and one
 * local job: it touches at most VAL_TICK_MAX jobs, never polls a bundle
 * job, reaches every polled job in turn (the local one finishes), and
 * expires the oldest bundle job although 10,050 newer ones are active
 * (the old tick only looked at the newest 10,000). */
static void test_val_reconcile__bounded_fair_and_expires_old_jobs(void **state) {
  hwdb *db = *state;
  val_cfg cfg;
  val_tick t;
  svc_err err;
  char dir[96], file[128], sql[160];
  add_many("bundle", 1, -7200, 3600); /* id 1: due an hour ago */
  add_many("bundle", 10050, 0, 3600);
  add_many("slurm", 100, 0, 3600); /* no Slurm id yet: within the start grace */
  /* The local job: a child that already exited, its result on disk. */
  int64_t id = add(db, "cpu_selftest");
  snprintf(dir, sizeof dir, "%s.job", path);
  assert_int_equal(mkdir(dir, 0700), 0);
  snprintf(file, sizeof file, "%s/result.json", dir);
  FILE *f = fopen(file, "w");
  fputs("{\"ok\":true}", f);
  fclose(f);
  pid_t pid = fork();
  if (pid == 0) _exit(0);
  assert_true(pid > 0);
  assert_int_equal(hwdb_job_set_handles(db, id, 0, pid, val_proc_start(pid, NULL), dir, NULL), 0);
  assert_int_equal(hwdb_job_transition(db, id, "queued", "running", "started", NULL, NULL, NULL),
                   0);
  assert_int_equal(val_cfg_init(&cfg, path, &err), 0);
  double t0 = svc_now();
  assert_int_equal(val_reconcile_pass(db, &cfg, &t, &err), 0);
  assert_int_equal(t.expired, 1);
  assert_true(t.expired + t.polled <= VAL_TICK_MAX);
  assert_int_equal(t.polled, VAL_TICK_MAX - 1);
  hwdb_job j;
  assert_int_equal(hwdb_job_get(db, 1, &j, NULL), 0);
  assert_string_equal(j.state, "failed");
  assert_non_null(strstr(j.note, "timed out after 3600 s"));
  hwdb_job_dispose(&j);
  /* The next pass takes the jobs not yet checked, the local one among them. */
  assert_int_equal(val_reconcile_pass(db, &cfg, &t, &err), 0);
  assert_int_equal(t.expired, 0);
  assert_int_equal(t.polled, VAL_TICK_MAX);
  assert_int_equal(hwdb_job_get(db, id, &j, NULL), 0);
  assert_string_equal(j.state, "done");
  hwdb_job_dispose(&j);
  assert_int_equal(raw_count("SELECT count(*) FROM val_job WHERE backend = 'slurm' AND "
                             "checked_at = 0"),
                   0);
  assert_int_equal(raw_count("SELECT count(*) FROM val_job WHERE backend = 'bundle' AND "
                             "checked_at > 0"),
                   0);
  assert_int_equal(t.active, 10050 + 100);
  snprintf(sql, sizeof sql, "rm -rf '%s'", dir);
  assert_int_equal(system(sql), 0);
  /* Generous: the old tick read 10,000 full rows per pass and polled each. */
  assert_true(svc_now() - t0 < 5);
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
      cmocka_unit_test_setup_teardown(test_val_store__list_leaves_results_unread, setup, teardown),
      cmocka_unit_test_setup_teardown(test_val_reconcile__bounded_fair_and_expires_old_jobs, setup,
                                      teardown),
      cmocka_unit_test(test_val_sha256__fips_vectors),
      cmocka_unit_test(test_val_stats__median_p90_max),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
