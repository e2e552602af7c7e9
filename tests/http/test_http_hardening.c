/* Service limits: per-address rate limits (429 with Retry-After) and the
 * token buckets behind them, JSON nesting depth, idle-connection timeout,
 * the connection cap, the heavy-route gate, and a graceful stop that lets
 * a request in flight finish and keeps its write. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server/server_int.h"
#include "test_http_common.h"

static int setup_rate(void **state) {
  return setup_with_config(state, (srv_config){.threads = 2, .rate = 2, .burst = 3});
}
static int setup_timeout(void **state) {
  return setup_with_config(state, (srv_config){.threads = 1, .timeout_s = 1});
}
static int setup_conns(void **state) {
  return setup_with_config(state, (srv_config){.threads = 1, .max_conns = 3});
}

/* Wait up to ms for the peer to close fd (recv returns 0 or an error). */
static int closed_within(int fd, int ms) {
  struct pollfd p = {.fd = fd, .events = POLLIN};
  char b[256];
  if (poll(&p, 1, ms) <= 0) return 0;
  ssize_t n = recv(fd, b, sizeof b, 0);
  return n <= 0;
}

static void test_http_hardening__rate_limit_is_429_with_retry_after(void **state) {
  http_fixture *f = *state;
  http_resp r;
  char after[16];
  for (int i = 0; i < 3; i++) { /* the burst */
    expect_get(f, "/v1/hardware/h200", 200);
  }
  assert_int_equal(fixture_get(f, "/v1/hardware/h200", &r), 0);
  expect_status(&r, 429);
  assert_non_null(http_header(&r, "Retry-After", after, sizeof after));
  assert_true(atoi(after) >= 1);
  cJSON *doc = fixture_json(&r);
  assert_string_equal(fixture_err_code(doc), "rate_limited");
  cJSON_Delete(doc);
  http_resp_dispose(&r);
  usleep(1100 * 1000); /* 2/s refills two */
  expect_get(f, "/v1/hardware/h200", 200);
}

static void test_http_hardening__buckets_refill_and_stay_separate(void **state) {
  srv_ratelimit *rl = NULL;
  assert_int_equal(srv_ratelimit_new(&rl, 10, 2, NULL), 0);
  assert_non_null(rl);
  double t = 100;
  assert_int_equal(srv_ratelimit_take(rl, "a1", 2, t), 0);
  assert_int_equal(srv_ratelimit_take(rl, "a1", 2, t), 0);
  assert_int_equal(srv_ratelimit_take(rl, "a1", 2, t), 1);        /* empty: retry in 1 s */
  assert_int_equal(srv_ratelimit_take(rl, "a2", 2, t), 0);        /* another key has its own */
  assert_int_equal(srv_ratelimit_take(rl, "a1", 2, t + 0.11), 0); /* 10/s: one back */
  /* Many keys: the table stays bounded and new keys are admitted. */
  char key[16];
  for (int i = 0; i < 20000; i++) {
    int n = snprintf(key, sizeof key, "k%d", i);
    assert_int_equal(srv_ratelimit_take(rl, key, (size_t)n, t + 1), 0);
  }
  srv_ratelimit_free(rl);
  assert_int_equal(srv_ratelimit_new(&rl, 0, 0, NULL), 0);
  assert_null(rl); /* rate 0: off */
  assert_int_equal(srv_ratelimit_take(NULL, "a", 1, t), 0);
}

/* POST body to /v1/estimate: 400 bad_json, the message holding needle. */
static void expect_bad_json(const http_fixture *f, const char *body, const char *needle) {
  http_resp r;
  assert_int_equal(fixture_send(f, "POST", "/v1/estimate", body, NULL, &r), 0);
  expect_status(&r, 400);
  cJSON *doc = fixture_json(&r);
  assert_string_equal(fixture_err_code(doc), "bad_json");
  assert_non_null(strstr(r.body, needle));
  cJSON_Delete(doc);
  http_resp_dispose(&r);
}

static void test_http_hardening__json_nested_too_deep_is_400(void **state) {
  http_fixture *f = *state;
  http_resp r;
  char body[512];
  int n = snprintf(body, sizeof body, "{\"hardware\":\"h200\",\"ops\":");
  for (int i = 0; i < 40; i++) body[n++] = '[';
  for (int i = 0; i < 40; i++) body[n++] = ']';
  body[n++] = '}';
  body[n] = '\0';
  expect_bad_json(f, body, "nests deeper");
  /* Brackets inside strings are not nesting. */
  n = snprintf(body, sizeof body, "{\"hardware\":\"");
  for (int i = 0; i < 60; i++) body[n++] = '[';
  snprintf(body + n, sizeof body - (size_t)n, "\\\"\",\"ops\":[]}");
  assert_int_equal(fixture_send(f, "POST", "/v1/estimate", body, NULL, &r), 0);
  assert_null(strstr(r.body ? r.body : "", "nests deeper"));
  http_resp_dispose(&r);
}

/* A body that says one thing twice is ambiguous (cJSON reads the first
 * member, other parsers the last): refused with the member's path, at
 * the top level and nested. */
static void test_http_hardening__duplicate_member_is_400(void **state) {
  http_fixture *f = *state;
  static const char *const cases[][2] = {
      {"{\"hardware\":\"h200\",\"hardware\":\"b200\",\"ops\":[{\"op\":\"gemm\",\"m\":16,"
       "\"n\":1024,\"k\":479,\"dtype\":\"bf16\"}]}",
       "hardware"},
      {"{\"hardware\":\"h200\",\"ops\":[{\"op\":\"gemm\",\"m\":16,\"n\":1024,\"k\":479,"
       "\"dtype\":\"bf16\",\"m\":4096}]}",
       "ops[0].m"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    http_resp r;
    assert_int_equal(fixture_send(f, "POST", "/v1/estimate", cases[i][0], NULL, &r), 0);
    expect_status(&r, 400);
    cJSON *doc = fixture_json(&r);
    assert_string_equal(fixture_err_code(doc), "bad_json");
    assert_string_equal(fixture_err_field(doc), cases[i][1]);
    cJSON_Delete(doc);
    http_resp_dispose(&r);
  }
}

/* cJSON decodes \u0000 into a NUL that ends the C string, so
 * "h200\u0000zz" would silently be read as "h200": refused. An escaped
 * backslash before u0000 is plain text and still accepted. */
static void test_http_hardening__nul_escape_in_string_is_400(void **state) {
  http_fixture *f = *state;
  http_resp r;
  expect_bad_json(f,
                  "{\"hardware\":\"h200\\u0000zz\",\"ops\":[{\"op\":\"gemm\",\"m\":16,"
                  "\"n\":1024,\"k\":479,\"dtype\":\"bf16\"}]}",
                  "u0000");
  assert_int_equal(
      fixture_send(f, "POST", "/v1/estimate",
                   "{\"hardware\":\"h200\\\\u0000\",\"ops\":[{\"op\":\"gemm\",\"m\":16,"
                   "\"n\":1024,\"k\":479,\"dtype\":\"bf16\"}]}",
                   NULL, &r),
      0);
  expect_status(&r, 404); /* the name h200\u0000, no such hardware */
  http_resp_dispose(&r);
}

static void test_http_hardening__idle_connection_times_out(void **state) {
  http_fixture *f = *state;
  int fd = http_connect(f->port);
  assert_true(fd >= 0);
  /* Half a request line, then silence: closed after the 1 s timeout. */
  assert_int_equal(send(fd, "GET /healthz HT", 15, 0), 15);
  assert_true(closed_within(fd, 4000));
  close(fd);
}

/* At the cap a further client is closed unanswered (MHD accepts and
 * drops it: connection threads are never more than max_conns), and once a
 * slot frees up a new client is served. */
static void test_http_hardening__connections_past_the_cap_are_refused(void **state) {
  http_fixture *f = *state;
  static const char req[] = "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  int idle[3];
  for (int i = 0; i < 3; i++) {
    idle[i] = http_connect(f->port);
    assert_true(idle[i] >= 0);
  }
  usleep(200 * 1000); /* let the server accept them */
  int fd = http_connect(f->port);
  assert_true(fd >= 0); /* the kernel's backlog takes it */
  send(fd, req, sizeof req - 1, MSG_NOSIGNAL);
  struct pollfd p = {.fd = fd, .events = POLLIN};
  char buf[64] = {0};
  assert_int_equal(poll(&p, 1, 2000), 1);
  assert_true(recv(fd, buf, sizeof buf - 1, 0) <= 0); /* closed, no reply */
  close(fd);
  for (int i = 0; i < 3; i++) close(idle[i]);
  usleep(300 * 1000);
  fd = http_connect(f->port);
  assert_true(fd >= 0);
  assert_int_equal(send(fd, req, sizeof req - 1, 0), (ssize_t)(sizeof req - 1));
  p.fd = fd;
  assert_int_equal(poll(&p, 1, 3000), 1);
  assert_true(recv(fd, buf, sizeof buf - 1, 0) > 12);
  assert_memory_equal(buf, "HTTP/1.1 200", 12);
  close(fd);
}

typedef struct {
  srv *s;
  double took;
} stopper;

static void *stop_thread(void *p) {
  stopper *st = p;
  double t0 = svc_now();
  srv_stop(st->s);
  st->took = svc_now() - t0;
  return NULL;
}

/* srv_stop while a POST is half uploaded: the listener closes at once,
 * the request finishes (201) and its write is in the database. */
static void test_http_hardening__stop_lets_requests_in_flight_finish(void **state) {
  http_fixture *f = *state;
  cJSON *d = fixture_descriptor("inflight-gpu");
  char *body = fixture_print(d), head[256], resp[4096];
  cJSON_Delete(d);
  size_t len = strlen(body), half = len / 2;
  snprintf(head, sizeof head,
           "POST /v1/hardware HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
           "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n",
           len);
  int fd = http_connect(f->port);
  assert_true(fd >= 0);
  assert_int_equal(send(fd, head, strlen(head), 0), (ssize_t)strlen(head));
  assert_int_equal(send(fd, body, half, 0), (ssize_t)half);
  usleep(200 * 1000);

  stopper st = {f->s, 0};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, stop_thread, &st), 0);
  usleep(300 * 1000);
  int fd2 = http_connect(f->port);
  assert_true(fd2 < 0); /* no longer accepting */
  assert_int_equal(send(fd, body + half, len - half, 0), (ssize_t)(len - half));
  size_t got = 0;
  ssize_t n;
  while (got + 1 < sizeof resp && (n = recv(fd, resp + got, sizeof resp - 1 - got, 0)) > 0)
    got += (size_t)n;
  resp[got] = '\0';
  close(fd);
  pthread_join(th, NULL);
  f->s = NULL; /* stopped: fixture_stop must not stop it again */
  assert_memory_equal(resp, "HTTP/1.1 201", 12);
  assert_true(st.took < SRV_STOP_GRACE_S - 1);
  char *out = NULL;
  assert_int_equal(api_hw_get(f->api, "inflight-gpu", &out, NULL), 0);
  free(out);
  free(body);
}

/* Heavy routes (plan, compare) are gated: with no such route in the table
 * yet, check the gate's arithmetic through the configuration. */
static void test_http_hardening__heavy_routes_are_marked(void **state) {
  size_t n;
  const srv_route *rt = srv_routes(&n);
  for (size_t i = 0; i < n; i++) {
    int is_plan = !strcmp(rt[i].method, "POST") &&
                  (!strcmp(rt[i].path, "/v1/plans") || !strcmp(rt[i].path, "/v1/compare"));
    if (is_plan) {
      assert_true(rt[i].heavy);
      assert_int_equal(rt[i].scope, SRV_SCOPE_PLAN);
    }
    if (!strcmp(rt[i].path, "/healthz")) assert_false(rt[i].heavy);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_http_hardening__rate_limit_is_429_with_retry_after,
                                      setup_rate, teardown),
      cmocka_unit_test(test_http_hardening__buckets_refill_and_stay_separate),
      cmocka_unit_test_setup_teardown(test_http_hardening__json_nested_too_deep_is_400, setup_open,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_http_hardening__duplicate_member_is_400, setup_open,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_http_hardening__nul_escape_in_string_is_400, setup_open,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_http_hardening__idle_connection_times_out, setup_timeout,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_http_hardening__connections_past_the_cap_are_refused,
                                      setup_conns, teardown),
      cmocka_unit_test_setup_teardown(test_http_hardening__stop_lets_requests_in_flight_finish,
                                      setup_open, teardown),
      cmocka_unit_test(test_http_hardening__heavy_routes_are_marked),
  };
  return cmocka_run_group_tests_name("http_hardening", tests, NULL, NULL);
}
