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

extern char **environ;

#define MAX_WRITES 20000
#define WRITERS 2

typedef struct {
  char dir[64], db[96];
  pid_t pid;
  int port;
  /* the stream */
  volatile int stop;
  int next;                        /* next name number, under lock */
  unsigned char acked[MAX_WRITES]; /* 1 = the server answered 201 */
  int nacked;
  pthread_mutex_t lock;
  char *doc_prefix, *doc_suffix; /* the descriptor split around its name */
} crash_state;

/* Start `cdplan serve` on port 0; the port comes from its one stdout line. */
static int start_server(crash_state *st) {
  int out[2];
  char errpath[128];
  if (pipe(out) != 0) return -1;
  snprintf(errpath, sizeof errpath, "%s/serve.err", st->dir);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_addclose(&fa, out[0]);
  posix_spawn_file_actions_addopen(&fa, 2, errpath, O_WRONLY | O_CREAT | O_APPEND, 0600);
  char *argv[] = {CDPLAN_BIN, "serve",     "--listen", "127.0.0.1:0", "--db",
                  st->db,     "--threads", "2",        NULL};
  int rc = posix_spawn(&st->pid, CDPLAN_BIN, &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(out[1]);
  if (rc != 0) {
    close(out[0]);
    return -1;
  }
  char line[256];
  size_t n = 0;
  struct pollfd p = {.fd = out[0], .events = POLLIN};
  while (n + 1 < sizeof line && !memchr(line, '\n', n) && poll(&p, 1, 10000) == 1) {
    ssize_t got = read(out[0], line + n, sizeof line - 1 - n);
    if (got <= 0) break;
    n += (size_t)got;
  }
  close(out[0]);
  line[n] = '\0';
  const char *colon = strstr(line, "127.0.0.1:");
  st->port = colon ? atoi(colon + 10) : 0;
  return st->port > 0 ? 0 : -1;
}

static int wait_exit(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

static void *writer(void *p) {
  crash_state *st = p;
  const char *headers[] = {"Content-Type: application/json", NULL};
  size_t cap = strlen(st->doc_prefix) + strlen(st->doc_suffix) + 32;
  char *body = malloc(cap);
  while (!st->stop && body) {
    pthread_mutex_lock(&st->lock);
    int i = st->next < MAX_WRITES ? st->next++ : -1;
    pthread_mutex_unlock(&st->lock);
    if (i < 0) break;
    int len = snprintf(body, cap, "%scrash-%d%s", st->doc_prefix, i, st->doc_suffix);
    http_resp r;
    if (http_request(st->port, "POST", "/v1/hardware", headers, body, (size_t)len, &r) == 0) {
      if (r.status == 201) {
        pthread_mutex_lock(&st->lock);
        st->acked[i] = 1;
        st->nacked++;
        pthread_mutex_unlock(&st->lock);
      }
      http_resp_dispose(&r);
    }
  }
  free(body);
  return NULL;
}

/* Run the stream for ms milliseconds, then deliver sig; returns the
 * server's wait status. */
static int stream_then_signal(crash_state *st, int ms, int sig) {
  pthread_t th[WRITERS];
  st->stop = 0;
  for (int i = 0; i < WRITERS; i++) pthread_create(&th[i], NULL, writer, st);
  usleep((useconds_t)ms * 1000);
  kill(st->pid, sig);
  int status = wait_exit(st->pid);
  st->stop = 1;
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
  while (sqlite3_step(q) == SQLITE_ROW) {
    int i = atoi((const char *)sqlite3_column_text(q, 0) + 6);
    if (i >= 0 && i < MAX_WRITES) seen[i] = 1;
  }
  sqlite3_finalize(q);
  sqlite3_close(db);
  int lost = 0;
  for (int i = 0; i < MAX_WRITES; i++)
    if (st->acked[i] && !seen[i]) lost++;
  free(seen);
  if (lost) print_error("%d of %d acknowledged writes lost\n", lost, st->nacked);
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
  int status = wait_exit(st->pid);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static int setup(void **state) {
  crash_state *st = calloc(1, sizeof *st);
  if (!st) return -1;
  snprintf(st->dir, sizeof st->dir, "/tmp/cdplan-crash-XXXXXX");
  if (!mkdtemp(st->dir)) return -1;
  snprintf(st->db, sizeof st->db, "%s/crash.db", st->dir);
  pthread_mutex_init(&st->lock, NULL);
  cJSON *d = fixture_descriptor("@NAME@");
  char *text = d ? fixture_print(d) : NULL;
  cJSON_Delete(d);
  char *at = text ? strstr(text, "@NAME@") : NULL;
  if (!at) return -1;
  *at = '\0';
  st->doc_prefix = strdup(text);
  st->doc_suffix = strdup(at + 6);
  free(text);
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
  pthread_mutex_destroy(&st->lock);
  free(st->doc_prefix);
  free(st->doc_suffix);
  free(st);
  return 0;
}

static void test_crash__sigkill_mid_stream_loses_no_acknowledged_write(void **state) {
  crash_state *st = *state;
  static const int kill_after_ms[] = {400, 750, 1300};
  for (size_t round = 0; round < 3; round++) {
    int before = st->nacked;
    assert_int_equal(start_server(st), 0);
    int status = stream_then_signal(st, kill_after_ms[round], SIGKILL);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    print_message("round %zu: %d writes acknowledged before SIGKILL\n", round, st->nacked - before);
    assert_true(st->nacked - before > 5); /* the kill did land mid-stream */
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
  assert_true(st->nacked > 5);
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
