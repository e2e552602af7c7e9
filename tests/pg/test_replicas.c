/* Several `cdplan serve` replicas on one PostgreSQL database (issue 29),
 * the real binary (CDPLAN_BIN) on a fresh database of the throw-away
 * cluster (tests/pg/pg_up.sh; this test needs it and fails without):
 * - a write through one replica is read through the other, and a catalog
 *   change reaches the other's descriptor cache (an estimate's time);
 * - one replica at a time follows validation jobs (cdplan_job_leader on
 *   /metrics); SIGKILL the leader and the other takes over within 5 s;
 *   a replica without the lock polls no job (its ticks and a GET leave a
 *   job alone that a poll would fail);
 * - SIGKILL of one replica during a write burst through both loses no
 *   acknowledged write (test_crash_kill's check, with two replicas); the
 *   store is read with libpq, not through cdplan.
 */
#include <errno.h>
#include <fcntl.h>
#include <libpq-fe.h>
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

#include "http_fixture.h"
#include "pg_testdb.h"
#include "serve_proc.h"

#define MAX_WRITES SERVE_PROC_MAX_WRITES
#define WRITERS_PER_REPLICA 2

typedef struct {
  pid_t pid;
  int port;
} replica;

typedef struct {
  char dir[64], db[256];
  replica r[2];
  serve_writes w;   /* the write stream */
  int nacked_by[2]; /* under w.lock */
} rep_state;

typedef struct {
  rep_state *st;
  int which;
} writer_arg;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Start replica i (`cdplan serve` on port 0); the port comes from its one
 * stdout line; its stderr goes to DIR/serve-i.err. */
static int start_replica(rep_state *st, int i) {
  char errpath[128];
  snprintf(errpath, sizeof errpath, "%s/serve-%d.err", st->dir, i);
  return serve_proc_start(CDPLAN_BIN, st->db, errpath, 15000, &st->r[i].pid, &st->r[i].port);
}

static void stop_replica(rep_state *st, int i, int sig) {
  if (st->r[i].pid <= 0) return;
  kill(st->r[i].pid, sig);
  serve_proc_wait(st->r[i].pid);
  st->r[i].pid = 0;
}

/* cdplan_job_leader on replica i's /metrics: 1, 0, or -1 when absent. */
static int leader_gauge(const rep_state *st, int i) {
  http_resp r;
  int v = -1;
  if (http_request(st->r[i].port, "GET", "/metrics", NULL, NULL, 0, &r) != 0) return -1;
  const char *line = r.body ? strstr(r.body, "\ncdplan_job_leader ") : NULL;
  if (line) v = atoi(line + strlen("\ncdplan_job_leader "));
  http_resp_dispose(&r);
  return v;
}

static int setup(void **state) {
  rep_state *st = calloc(1, sizeof *st);
  if (!st) return -1;
  if (!testdb_is_pg()) {
    fprintf(stderr, "test_replicas: needs the PostgreSQL cluster (run it as test_replicas_pg: "
                    "ctest -R test_replicas_pg)\n");
    free(st);
    return -1;
  }
  snprintf(st->dir, sizeof st->dir, "/tmp/cdplan-replicas-XXXXXX");
  if (!mkdtemp(st->dir) || testdb_make(st->db, sizeof st->db, "")) {
    free(st);
    return -1;
  }
  if (serve_writes_init(&st->w)) return -1;
  *state = st;
  return 0;
}

static int teardown(void **state) {
  rep_state *st = *state;
  char p[160];
  for (int i = 0; i < 2; i++) {
    stop_replica(st, i, SIGKILL);
    snprintf(p, sizeof p, "%s/serve-%d.err", st->dir, i);
    unlink(p);
  }
  rmdir(st->dir);
  serve_writes_dispose(&st->w);
  free(st);
  return 0;
}

static const char *const json_headers[] = {"Content-Type: application/json", NULL};

/* The first result's ms of an elementwise add over 2^28 bf16 values (a
 * memory-bound op: its time follows the HBM bandwidth) on replica i. */
static double add_ms(const rep_state *st, int i, const char *hw) {
  char body[256];
  http_resp r;
  double ms = -1;
  int len = snprintf(body, sizeof body,
                     "{\"hardware\":\"%s\",\"ops\":[{\"op\":\"elementwise\",\"kind\":\"add\","
                     "\"numel\":268435456,\"dtype\":\"bf16\"}]}",
                     hw);
  if (http_request(st->r[i].port, "POST", "/v1/estimate", json_headers, body, (size_t)len, &r))
    return -1;
  cJSON *doc = r.status == 200 ? fixture_json(&r) : NULL;
  const cJSON *res = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "results"), 0);
  const cJSON *v = cJSON_GetObjectItem(res, "ms");
  if (cJSON_IsNumber(v)) ms = v->valuedouble;
  cJSON_Delete(doc);
  http_resp_dispose(&r);
  return ms;
}

static void test_replicas__write_through_one_is_read_through_the_other(void **state) {
  rep_state *st = *state;
  http_resp r;
  assert_int_equal(start_replica(st, 0), 0);
  assert_int_equal(start_replica(st, 1), 0);
  /* POST through replica 0, GET through replica 1. */
  cJSON *d = fixture_descriptor("shared-1");
  char *body = fixture_print(d);
  assert_int_equal(
      http_request(st->r[0].port, "POST", "/v1/hardware", json_headers, body, strlen(body), &r), 0);
  assert_int_equal(r.status, 201);
  http_resp_dispose(&r);
  free(body);
  assert_int_equal(http_request(st->r[1].port, "GET", "/v1/hardware/shared-1", NULL, NULL, 0, &r),
                   0);
  assert_int_equal(r.status, 200);
  assert_non_null(strstr(r.body, "\"shared-1\""));
  http_resp_dispose(&r);
  /* Replica 1 prices an op on it (and caches the descriptor); replica 0
   * halves its bandwidth; replica 1's estimate follows within 2 s. */
  double before = add_ms(st, 1, "shared-1");
  assert_true(before > 0);
  cJSON *bw = cJSON_GetObjectItem(d, "hbm_bandwidth_bytes_per_s");
  assert_true(cJSON_IsNumber(bw));
  cJSON_SetNumberValue(bw, bw->valuedouble / 2);
  body = fixture_print(d);
  assert_int_equal(http_request(st->r[0].port, "PUT", "/v1/hardware/shared-1", json_headers, body,
                                strlen(body), &r),
                   0);
  assert_int_equal(r.status, 200);
  http_resp_dispose(&r);
  free(body);
  cJSON_Delete(d);
  double after = before, t0 = now_s();
  while (now_s() - t0 < 2.0 && after < 1.5 * before) {
    usleep(100 * 1000);
    after = add_ms(st, 1, "shared-1");
  }
  print_message("add on shared-1 through replica 1: %.3f ms, after the PUT through replica 0: "
                "%.3f ms (%.2f s later)\n",
                before, after, now_s() - t0);
  assert_true(after > 1.5 * before);
  /* DELETE through replica 1, gone through replica 0. */
  assert_int_equal(
      http_request(st->r[1].port, "DELETE", "/v1/hardware/shared-1", NULL, NULL, 0, &r), 0);
  assert_true(r.status == 200 || r.status == 204);
  http_resp_dispose(&r);
  assert_int_equal(http_request(st->r[0].port, "GET", "/v1/hardware/shared-1", NULL, NULL, 0, &r),
                   0);
  assert_int_equal(r.status, 404);
  http_resp_dispose(&r);
}

/* Wait up to limit_s for replica i's gauge to read want; the seconds it
 * took, or -1. */
static double wait_gauge(const rep_state *st, int i, int want, double limit_s) {
  double t0 = now_s();
  while (now_s() - t0 < limit_s) {
    if (leader_gauge(st, i) == want) return now_s() - t0;
    usleep(50 * 1000);
  }
  return -1;
}

static void test_replicas__leader_fails_over_within_5s(void **state) {
  rep_state *st = *state;
  assert_int_equal(start_replica(st, 0), 0);
  assert_true(wait_gauge(st, 0, 1, 5) >= 0); /* alone: it leads */
  assert_int_equal(start_replica(st, 1), 0);
  assert_true(wait_gauge(st, 1, 0, 5) >= 0); /* the lock is taken */
  usleep(2500 * 1000);                       /* a tick later: still exactly one leader */
  assert_int_equal(leader_gauge(st, 0), 1);
  assert_int_equal(leader_gauge(st, 1), 0);
  stop_replica(st, 0, SIGKILL);
  double took = wait_gauge(st, 1, 1, 10);
  print_message("after SIGKILL of the leader, the other replica led after %.2f s\n", took);
  assert_true(took >= 0 && took < 5.0);
  /* The log says so too. */
  char p[160], buf[8192] = {0};
  snprintf(p, sizeof p, "%s/serve-1.err", st->dir);
  FILE *fp = fopen(p, "r");
  assert_non_null(fp);
  size_t n = fread(buf, 1, sizeof buf - 1, fp);
  buf[n] = '\0';
  fclose(fp);
  assert_non_null(strstr(buf, "took the leader lock"));
  /* A replica started now finds the lock taken. */
  assert_int_equal(start_replica(st, 0), 0);
  assert_true(wait_gauge(st, 0, 0, 5) >= 0);
  assert_int_equal(leader_gauge(st, 1), 1);
}

/* One text value from sql on the test's own connection c; "" on failure. */
static void query1(PGconn *c, const char *sql, char *out, size_t size) {
  PGresult *q = PQexec(c, sql);
  out[0] = '\0';
  if (PQresultStatus(q) == PGRES_TUPLES_OK && PQntuples(q) > 0)
    snprintf(out, size, "%s", PQgetvalue(q, 0, 0));
  else
    print_error("%s: %s", sql, PQresultErrorMessage(q));
  PQclear(q);
}

/* A replica that does not hold the leader lock never polls a job: the
 * test holds the lock itself (hwdb/pg.c's LEADER_KEY), so the replica's
 * ticks and a GET of the job leave alone a Slurm job that never reached
 * Slurm an hour ago (a poll fails it); once the test lets go, the replica
 * takes the lock and its next poll fails the job. */
static void test_replicas__only_the_leader_polls_jobs(void **state) {
  rep_state *st = *state;
  char v[64], sql[256], path[64];
  http_resp r;
  PGconn *holder = PQconnectdb(st->db);
  assert_int_equal(PQstatus(holder), CONNECTION_OK);
  assert_int_equal(start_replica(st, 0), 0); /* migrates the fresh database */
  stop_replica(st, 0, SIGKILL);
  query1(holder, "SELECT pg_try_advisory_lock(6513920001)", v, sizeof v);
  assert_string_equal(v, "t");
  query1(holder,
         "INSERT INTO val_job(kind, hw, backend, params, state, token_hash, timeout_s, created_at, "
         "updated_at) VALUES ('cpu_selftest', 'h200', 'slurm', '{}', 'queued', 'x', 3600, "
         "extract(epoch from now()) - 3600, extract(epoch from now()) - 3600) RETURNING id",
         v, sizeof v);
  long long id = atoll(v);
  assert_true(id > 0);
  assert_int_equal(start_replica(st, 0), 0);
  assert_true(wait_gauge(st, 0, 0, 5) >= 0);
  usleep(4500 * 1000); /* two ticks */
  snprintf(path, sizeof path, "/v1/validations/%lld", id);
  assert_int_equal(http_request(st->r[0].port, "GET", path, NULL, NULL, 0, &r), 0);
  assert_int_equal(r.status, 200);
  assert_non_null(strstr(r.body, "\"queued\""));
  http_resp_dispose(&r);
  snprintf(sql, sizeof sql, "SELECT state || ' ' || checked_at FROM val_job WHERE id = %lld", id);
  query1(holder, sql, v, sizeof v);
  assert_string_equal(v, "queued 0");
  PQfinish(holder); /* the lock goes with the session */
  double took = wait_gauge(st, 0, 1, 10);
  print_message("the replica led %.2f s after the lock's holder went away\n", took);
  assert_true(took >= 0 && took < 5.0);
  double t0 = now_s();
  int failed = 0;
  while (!failed && now_s() - t0 < 5) {
    assert_int_equal(http_request(st->r[0].port, "GET", path, NULL, NULL, 0, &r), 0);
    failed = r.status == 200 && strstr(r.body, "never reached slurm") != NULL;
    http_resp_dispose(&r);
    if (!failed) usleep(200 * 1000);
  }
  assert_true(failed);
}

static void *writer(void *p) {
  writer_arg *a = p;
  rep_state *st = a->st;
  int got;
  while (!st->w.stop && (got = serve_writes_post(&st->w, st->r[a->which].port)) >= 0) {
    if (got) {
      pthread_mutex_lock(&st->w.lock);
      st->nacked_by[a->which]++;
      pthread_mutex_unlock(&st->w.lock);
    } else {
      /* refused or not yet listening: back off rather than spin, which on a
       * loaded 2-core machine starves the replica being waited for and burns
       * through the write names */
      usleep(5 * 1000);
    }
  }
  return NULL;
}

/* Every acknowledged name is in the store (read with libpq). */
static void check_store(rep_state *st) {
  PGconn *c = PQconnectdb(st->db);
  assert_int_equal(PQstatus(c), CONNECTION_OK);
  PGresult *q = PQexec(c, "SELECT name FROM hardware WHERE name LIKE 'crash-%'");
  assert_int_equal(PQresultStatus(q), PGRES_TUPLES_OK);
  unsigned char *seen = calloc(MAX_WRITES, 1);
  assert_non_null(seen);
  for (int row = 0; row < PQntuples(q); row++) serve_writes_seen(seen, PQgetvalue(q, row, 0));
  PQclear(q);
  PQfinish(c);
  int lost = serve_writes_lost(&st->w, seen);
  free(seen);
  assert_int_equal(lost, 0);
}

static void test_replicas__sigkill_one_mid_stream_loses_no_acknowledged_write(void **state) {
  rep_state *st = *state;
  static const int kill_after_ms[] = {400, 750, 1300};
  assert_int_equal(start_replica(st, 1), 0);
  for (size_t round = 0; round < 3; round++) {
    assert_int_equal(start_replica(st, 0), 0);
    pthread_t th[2 * WRITERS_PER_REPLICA];
    writer_arg args[2 * WRITERS_PER_REPLICA];
    int before = st->w.nacked;
    st->w.stop = 0;
    for (int i = 0; i < 2 * WRITERS_PER_REPLICA; i++) {
      args[i] = (writer_arg){st, i % 2};
      pthread_create(&th[i], NULL, writer, &args[i]);
    }
    /* Kill once replica 0 has taken writes for the round's time (and at
     * least 10 of them: a loaded machine starts it slowly). */
    int before0 = st->nacked_by[0];
    double t0 = now_s();
    usleep((useconds_t)kill_after_ms[round] * 1000);
    while (st->nacked_by[0] - before0 < 10 && now_s() - t0 < 20) usleep(20 * 1000);
    kill(st->r[0].pid, SIGKILL);
    int status = serve_proc_wait(st->r[0].pid);
    st->r[0].pid = 0;
    int at_kill = st->w.nacked;
    usleep(300 * 1000); /* replica 1 keeps taking writes */
    st->w.stop = 1;
    for (int i = 0; i < 2 * WRITERS_PER_REPLICA; i++) pthread_join(th[i], NULL);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    print_message("round %zu: %d writes acknowledged before SIGKILL (%d by replica 0), %d after "
                  "(replica 1)\n",
                  round, at_kill - before, st->nacked_by[0] - before0, st->w.nacked - at_kill);
    assert_true(st->nacked_by[0] - before0 > 5); /* the kill did land mid-stream */
    assert_true(st->w.nacked - at_kill > 0);
    check_store(st);
  }
  stop_replica(st, 1, SIGTERM);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_replicas__write_through_one_is_read_through_the_other,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(test_replicas__leader_fails_over_within_5s, setup, teardown),
      cmocka_unit_test_setup_teardown(test_replicas__only_the_leader_polls_jobs, setup, teardown),
      cmocka_unit_test_setup_teardown(
          test_replicas__sigkill_one_mid_stream_loses_no_acknowledged_write, setup, teardown),
  };
  return cmocka_run_group_tests_name("replicas", tests, NULL, NULL);
}
