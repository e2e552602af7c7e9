/* Crash safety of the real binary: `cdplan serve` on a temp database takes
 * a stream of POST /v1/hardware writes from two client threads and is
 * killed with SIGKILL mid-stream; restarted on the same file it must come
 * up, the file must pass PRAGMA integrity_check, and every write it had
 * acknowledged (201) must be there. Three rounds, each killed at a
 * different moment. A last round stops it with SIGTERM instead: exit
 * status 0, acknowledged writes kept, and the WAL checkpointed and removed
 * (the database was closed cleanly).
 *
 * The binary comes from CDPLAN_BIN; the file is read with the SQLite C
 * API directly, not through cdplan, so that the check does not trust the
 * code under test.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "http_fixture.h"
#include "serve_proc.h"

#define MAX_WRITES SERVE_PROC_MAX_WRITES
#define WRITERS 2

typedef struct {
  char dir[64], db[96];
  pid_t pid;
  int port;
  serve_writes w; /* the stream */
} crash_state;

/* Start `cdplan serve` on port 0; the port comes from its one stdout line. */
static int start_server(crash_state *st) {
  char errpath[128];
  snprintf(errpath, sizeof errpath, "%s/serve.err", st->dir);
  return serve_proc_start(CDPLAN_BIN, st->db, errpath, 10000, &st->pid, &st->port);
}

static void *writer(void *p) {
  crash_state *st = p;
  while (!st->w.stop && serve_writes_post(&st->w, st->port) >= 0) {
  }
  return NULL;
}

/* Run the stream for ms milliseconds, then deliver sig; returns the
 * server's wait status. */
static int stream_then_signal(crash_state *st, int ms, int sig) {
  pthread_t th[WRITERS];
  st->w.stop = 0;
  for (int i = 0; i < WRITERS; i++) pthread_create(&th[i], NULL, writer, st);
  usleep((useconds_t)ms * 1000);
  kill(st->pid, sig);
  int status = serve_proc_wait(st->pid);
  st->w.stop = 1;
  for (int i = 0; i < WRITERS; i++) pthread_join(th[i], NULL);
  return status;
}

/* integrity_check is "ok" and every acknowledged name is stored. */
static void check_file(crash_state *st) {
  sqlite3 *db = NULL;
  sqlite3_stmt *q = NULL;
  assert_int_equal(sqlite3_open_v2(st->db, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
  assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &q, NULL), SQLITE_OK);
  assert_int_equal(sqlite3_step(q), SQLITE_ROW);
  assert_string_equal((const char *)sqlite3_column_text(q, 0), "ok");
  sqlite3_finalize(q);
  unsigned char *seen = calloc(MAX_WRITES, 1);
  assert_non_null(seen);
  assert_int_equal(
      sqlite3_prepare_v2(db, "SELECT name FROM hardware WHERE name LIKE 'crash-%'", -1, &q, NULL),
      SQLITE_OK);
  while (sqlite3_step(q) == SQLITE_ROW)
    serve_writes_seen(seen, (const char *)sqlite3_column_text(q, 0));
  sqlite3_finalize(q);
  sqlite3_close(db);
  int lost = serve_writes_lost(&st->w, seen);
  free(seen);
  assert_int_equal(lost, 0);
}

/* Restart on the same file and check it serves; then stop it cleanly. */
static void restart_and_stop(crash_state *st) {
  http_resp r;
  assert_int_equal(start_server(st), 0);
  assert_int_equal(http_request(st->port, "GET", "/healthz", NULL, NULL, 0, &r), 0);
  assert_int_equal(r.status, 200);
  http_resp_dispose(&r);
  kill(st->pid, SIGTERM);
  int status = serve_proc_wait(st->pid);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static int setup(void **state) {
  crash_state *st = calloc(1, sizeof *st);
  if (!st) return -1;
  snprintf(st->dir, sizeof st->dir, "/tmp/cdplan-crash-XXXXXX");
  if (!mkdtemp(st->dir)) return -1;
  snprintf(st->db, sizeof st->db, "%s/crash.db", st->dir);
  if (serve_writes_init(&st->w)) return -1;
  *state = st;
  return 0;
}

static int teardown(void **state) {
  crash_state *st = *state;
  static const char *const names[] = {"crash.db", "crash.db-wal", "crash.db-shm", "serve.err"};
  char p[160];
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    snprintf(p, sizeof p, "%s/%s", st->dir, names[i]);
    unlink(p);
  }
  rmdir(st->dir);
  serve_writes_dispose(&st->w);
  free(st);
  return 0;
}

static void test_crash__sigkill_mid_stream_loses_no_acknowledged_write(void **state) {
  crash_state *st = *state;
  static const int kill_after_ms[] = {400, 750, 1300};
  for (size_t round = 0; round < 3; round++) {
    int before = st->w.nacked;
    assert_int_equal(start_server(st), 0);
    int status = stream_then_signal(st, kill_after_ms[round], SIGKILL);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    print_message("round %zu: %d writes acknowledged before SIGKILL\n", round,
                  st->w.nacked - before);
    assert_true(st->w.nacked - before > 5); /* the kill did land mid-stream */
    restart_and_stop(st);
    check_file(st);
  }
}

static void test_crash__sigterm_mid_stream_closes_cleanly(void **state) {
  crash_state *st = *state;
  char wal[128];
  struct stat sb;
  assert_int_equal(start_server(st), 0);
  int status = stream_then_signal(st, 500, SIGTERM);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
  assert_true(st->w.nacked > 5);
  /* A clean close checkpoints the WAL into the file and removes it. */
  snprintf(wal, sizeof wal, "%s-wal", st->db);
  assert_int_not_equal(stat(wal, &sb), 0);
  check_file(st);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_crash__sigkill_mid_stream_loses_no_acknowledged_write,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(test_crash__sigterm_mid_stream_closes_cleanly, setup,
                                      teardown),
  };
  return cmocka_run_group_tests_name("crash", tests, NULL, NULL);
}
