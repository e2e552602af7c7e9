/* A hostile client, round two (issue 17): each test reproduces one attack
 * and checks the mechanism that stops it — rate limits on every route, a
 * per-address connection cap, header and body deadlines that trickled
 * bytes do not reset, a results upload refused on its job token before its
 * body is read, a global cap on buffered bodies, one Content-Length only,
 * calibration only by an admin POST. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

#include "api/api_tokens.h"
#include "api/api_validate.h"
#include "server/server_int.h"
#include "test_http_common.h"

static int setup_rate(void **state) {
  return setup_with_config(state, (srv_config){.threads = 2, .rate = 2, .burst = 3});
}
static int setup_per_ip(void **state) {
  return setup_with_config(state, (srv_config){.threads = 2, .max_conns_per_ip = 3});
}
static int setup_deadlines(void **state) {
  return setup_with_config(
      state,
      (srv_config){.threads = 2, .timeout_s = 30, .header_timeout_s = 1, .body_timeout_s = 1});
}
static int setup_one_thread(void **state) {
  return setup_with_config(state, (srv_config){.threads = 1});
}
static int setup_small_buffer(void **state) {
  return setup_with_config(state, (srv_config){.threads = 2, .max_buffered = 64 * 1024});
}

/* Wait up to ms for the peer to close fd (recv returns 0 or an error);
 * bytes it sends first (a reply) are read and skipped. */
static int closed_within(int fd, int ms) {
  char b[4096];
  double until = svc_now() + ms / 1e3;
  for (;;) {
    int left = (int)((until - svc_now()) * 1e3);
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (left <= 0 || poll(&p, 1, left) <= 0) return 0;
    if (recv(fd, b, sizeof b, 0) <= 0) return 1;
  }
}

/* Send raw on fd and read the status code of the answer (0: none). */
static int status_of(int fd, const char *raw) {
  char b[1024] = {0};
  if (send(fd, raw, strlen(raw), 0) != (ssize_t)strlen(raw)) return 0;
  struct pollfd p = {.fd = fd, .events = POLLIN};
  if (poll(&p, 1, 3000) <= 0) return 0;
  ssize_t n = recv(fd, b, sizeof b - 1, 0);
  return n > 12 && !strncmp(b, "HTTP/1.1 ", 9) ? atoi(b + 9) : 0;
}

/* 404, 405 and static files take from the address's bucket as well: the
 * fourth request of a burst of three is a 429, whatever the path. */
static void test_http_hostile__rate_limit_covers_404_405_and_static(void **state) {
  http_fixture *f = *state;
  static const char *const paths[][2] = {
      {"GET", "/no/such/path"}, {"DELETE", "/healthz"}, {"GET", "/app.js"}};
  for (size_t k = 0; k < 3; k++) {
    http_resp r;
    int last = 0;
    for (int i = 0; i < 4; i++) {
      assert_int_equal(fixture_send(f, paths[k][0], paths[k][1], NULL, NULL, &r), 0);
      last = r.status;
      http_resp_dispose(&r);
    }
    if (last != 429) print_error("%s %s: %d after the burst\n", paths[k][0], paths[k][1], last);
    assert_int_equal(last, 429);
    usleep(1600 * 1000); /* 2/s: the bucket refills its burst of 3 */
  }
}

/* Past max_conns_per_ip one address's new connections are closed at once,
 * while another address is still served. */
static void test_http_hostile__per_address_connection_cap(void **state) {
  http_fixture *f = *state;
  int held[3];
  for (int i = 0; i < 3; i++) {
    held[i] = http_connect_from(f->port, "127.0.0.1");
    assert_true(held[i] >= 0);
  }
  usleep(200 * 1000);
  int extra = http_connect_from(f->port, "127.0.0.1");
  assert_true(extra >= 0);                 /* the kernel accepts it ... */
  assert_true(closed_within(extra, 2000)); /* ... and the server closes it unanswered */
  close(extra);
  int other = http_connect_from(f->port, "127.0.0.2");
  assert_true(other >= 0);
  assert_int_equal(
      status_of(other, "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"), 200);
  close(other);
  for (int i = 0; i < 3; i++) close(held[i]);
}

/* One header byte every 200 ms resets MHD's idle timeout for ever; the
 * header deadline (1 s here) closes the connection all the same. */
static void test_http_hostile__trickled_headers_hit_the_deadline(void **state) {
  http_fixture *f = *state;
  static const char head[] =
      "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaa";
  unsigned before = atomic_load(&f->s->reaped);
  int fd = http_connect_from(f->port, "127.0.0.1");
  assert_true(fd >= 0);
  double t0 = svc_now();
  int closed = 0;
  for (size_t i = 0; i < sizeof head - 1 && !closed; i++) {
    if (send(fd, head + i, 1, MSG_NOSIGNAL) != 1) {
      closed = 1;
      break;
    }
    closed = closed_within(fd, 200);
  }
  double took = svc_now() - t0;
  close(fd);
  assert_true(closed);
  assert_true(took < 4.0); /* 25 bytes at 5/s would have lasted 5 s */
  assert_true(atomic_load(&f->s->reaped) > before);
}

/* The same for a body trickled after complete headers. */
static void test_http_hostile__trickled_body_hits_the_deadline(void **state) {
  http_fixture *f = *state;
  static const char head[] = "POST /v1/estimate HTTP/1.1\r\nHost: x\r\nContent-Type: "
                             "application/json\r\nContent-Length: 100\r\n\r\n";
  int fd = http_connect_from(f->port, "127.0.0.1");
  assert_true(fd >= 0);
  assert_int_equal(send(fd, head, sizeof head - 1, 0), (ssize_t)(sizeof head - 1));
  double t0 = svc_now();
  int closed = 0;
  for (int i = 0; i < 25 && !closed; i++) {
    if (send(fd, " ", 1, MSG_NOSIGNAL) != 1) break;
    closed = closed_within(fd, 200);
  }
  double took = svc_now() - t0;
  close(fd);
  assert_true(closed);
  assert_true(took < 4.0); /* 25 bytes at 5/s would have lasted 5 s */
}

/* A results upload that names an existing job with a wrong token is
 * refused (403) right after its headers: the server answers although not
 * one body byte was sent, and buffers nothing. */
static void test_http_hostile__results_upload_refused_before_its_body(void **state) {
  http_fixture *f = *state;
  static const char job[] = "{\"kind\":\"cpu_selftest\",\"hardware\":\"h200\",\"backend\":"
                            "\"local\",\"params\":{\"n\":10,\"sleep_ms\":20000}}";
  char *out = NULL, head[512];
  svc_err err;
  assert_int_equal(api_validation_submit(f->api, job, sizeof job - 1, &out, &err), 0);
  cJSON *doc = cJSON_Parse(out);
  long id = (long)cJSON_GetObjectItem(doc, "id")->valuedouble;
  cJSON_Delete(doc);
  free(out);
  static const char *const tokens[] = {"X-Job-Token: 0000000000000000\r\n", ""};
  static const int want[] = {403, 401};
  for (int k = 0; k < 2; k++) {
    snprintf(head, sizeof head,
             "POST /v1/validations/%ld/results HTTP/1.1\r\nHost: x\r\nContent-Type: "
             "application/json\r\n%sContent-Length: 16000000\r\n\r\n",
             id, tokens[k]);
    int fd = http_connect_from(f->port, "127.0.0.1");
    assert_true(fd >= 0);
    assert_int_equal(status_of(fd, head), want[k]);
    assert_int_equal(atomic_load(&f->s->buffered), 0);
    close(fd);
  }
  char ids[24];
  snprintf(ids, sizeof ids, "%ld", id);
  assert_int_equal(api_validation_cancel(f->api, ids, &out, &err), 0);
  free(out);
}

/* With 64 KiB for all bodies together, a request declaring 100 kB is
 * told to come back (503, Retry-After) before its body is read; a small one
 * still passes, and the account returns to zero. */
static void test_http_hostile__buffered_bodies_are_capped(void **state) {
  http_fixture *f = *state;
  char head[256];
  snprintf(head, sizeof head,
           "POST /v1/estimate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
           "Content-Length: 100000\r\n\r\n");
  int fd = http_connect_from(f->port, "127.0.0.1");
  assert_true(fd >= 0);
  assert_int_equal(status_of(fd, head), 503);
  close(fd);
  expect_send(f, "POST", "/v1/estimate",
              "{\"hardware\":\"h200\",\"ops\":[{\"op\":\"gemm\",\"m\":64,\"n\":64,"
              "\"k\":64,\"dtype\":\"bf16\"}]}",
              NULL, 200);
  assert_int_equal(atomic_load(&f->s->buffered), 0);
}

/* Two Content-Length headers: 400 naming the header, differing or equal. */
static void test_http_hostile__duplicate_content_length_is_400(void **state) {
  http_fixture *f = *state;
  static const char *const lens[] = {"Content-Length: 2\r\nContent-Length: 20\r\n",
                                     "Content-Length: 2\r\nContent-Length: 2\r\n"};
  for (int k = 0; k < 2; k++) {
    char head[256];
    http_resp r;
    snprintf(head, sizeof head,
             "POST /v1/estimate HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
             "Content-Type: application/json\r\n%s\r\n",
             lens[k]);
    assert_int_equal(http_exchange(f->port, head, "{}", 2, &r), 0);
    /* MHD itself may refuse the first (differing) form; never a 2xx. */
    assert_true(r.status == 400);
    cJSON *doc = fixture_json(&r);
    if (doc) assert_string_equal(fixture_err_field(doc), "Content-Length");
    cJSON_Delete(doc);
    http_resp_dispose(&r);
  }
}

/* The report only reads: ?calibrate=1 is refused (400, field calibrate)
 * even for a token that could read the report; calibrating is a POST of
 * its own that needs admin and counts as heavy, as the report does. */
static void test_http_hostile__report_never_calibrates(void **state) {
  http_fixture *f = *state;
  char *tok = NULL, *out = NULL, auth[160];
  svc_err err;
  assert_int_equal(api_token_create(f->api, "read", "reader", &out, &err), 0);
  cJSON *doc = cJSON_Parse(out);
  tok = strdup(cJSON_GetObjectItem(doc, "token")->valuestring);
  cJSON_Delete(doc);
  free(out);
  snprintf(auth, sizeof auth, "Authorization: Bearer %s", tok);
  const char *hdrs[] = {auth, NULL};
  http_resp r;
  char *before = NULL, *after = NULL;
  assert_int_equal(api_hw_get(f->api, "h200", &before, &err), 0);
  for (int i = 0; i < 2; i++) {
    const char *path =
        i ? "/v1/validations/1/report?calibrate=true" : "/v1/validations/1/report?calibrate=1";
    assert_int_equal(http_request(f->port, "GET", path, hdrs, NULL, 0, &r), 0);
    expect_status(&r, 400);
    doc = fixture_json(&r);
    assert_string_equal(fixture_err_field(doc), "calibrate");
    cJSON_Delete(doc);
    http_resp_dispose(&r);
  }
  assert_int_equal(http_request(f->port, "POST", "/v1/validations/1/calibrate", hdrs, NULL, 0, &r),
                   0);
  expect_status(&r, 403);
  http_resp_dispose(&r);
  assert_int_equal(api_hw_get(f->api, "h200", &after, &err), 0);
  assert_string_equal(before, after); /* no calibration version was stored */
  size_t n;
  int seen = 0;
  const srv_route *rt = srv_routes(&n);
  for (size_t i = 0; i < n; i++) {
    if (!strcmp(rt[i].path, "/v1/validations/{id}/calibrate")) {
      assert_string_equal(rt[i].method, "POST");
      assert_int_equal(rt[i].scope, SRV_SCOPE_ADMIN);
      assert_true(rt[i].heavy);
      seen |= 1;
    }
    if (!strcmp(rt[i].path, "/v1/validations/{id}/report")) {
      assert_true(rt[i].heavy);
      seen |= 2;
    }
  }
  assert_int_equal(seen, 3);
  free(before);
  free(after);
  free(tok);
}

typedef struct {
  http_fixture *f;
  http_resp r;
} writer;

static void *write_descriptor(void *p) {
  writer *w = p;
  cJSON *d = fixture_descriptor("busy-gpu");
  char *body = fixture_print(d);
  cJSON_Delete(d);
  fixture_send(w->f, "POST", "/v1/hardware", body, NULL, &w->r);
  free(body);
  return NULL;
}

/* Another process holds the database's write lock: a catalog write waits
 * out the busy timeout and gets 503 db_busy with Retry-After (not a 500),
 * and reads meanwhile are served from their own connection instead of
 * queueing behind the waiting writer. */
static void test_http_hostile__busy_database_is_503_and_reads_go_on(void **state) {
  http_fixture *f = *state;
  sqlite3 *other = NULL;
  assert_int_equal(sqlite3_open(f->db, &other), SQLITE_OK);
  assert_int_equal(sqlite3_exec(other, "BEGIN IMMEDIATE;", NULL, NULL, NULL), SQLITE_OK);
  writer w = {f, {0}};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, write_descriptor, &w), 0);
  usleep(300 * 1000); /* the write is now waiting for the lock */
  for (int i = 0; i < 3; i++) {
    http_resp r;
    double t0 = svc_now();
    assert_int_equal(fixture_get(f, i == 2 ? "/v1/hardware" : "/v1/hardware/mi300x", &r), 0);
    double took = svc_now() - t0;
    expect_status(&r, 200);
    http_resp_dispose(&r);
    if (took > 1.0) print_error("a read took %.2f s beside a waiting write\n", took);
    assert_true(took < 1.0);
  }
  pthread_join(th, NULL);
  expect_status(&w.r, 503);
  char after[16];
  assert_non_null(http_header(&w.r, "Retry-After", after, sizeof after));
  cJSON *doc = fixture_json(&w.r);
  assert_string_equal(fixture_err_code(doc), "db_busy");
  cJSON_Delete(doc);
  http_resp_dispose(&w.r);
  sqlite3_exec(other, "ROLLBACK;", NULL, NULL, NULL);
  sqlite3_close(other);
  char *out = NULL;
  svc_err err;
  assert_int_equal(api_hw_get(f->api, "busy-gpu", &out, &err),
                   -SVC_NOT_FOUND); /* nothing half-written */
}

typedef struct {
  http_fixture *f;
  char *body;
  http_resp r;
  double took;
} solver;

static void *post_plan(void *p) {
  solver *w = p;
  double t0 = svc_now();
  fixture_send(w->f, "POST", "/v1/plans", w->body, NULL, &w->r);
  w->took = svc_now() - t0;
  return NULL;
}

/* data/workloads/plan_dlrm_mi350x.json: a plan that takes seconds. */
static char *plan_request_text(void) {
  static char text[65536];
  char path[512];
  snprintf(path, sizeof path, "%s/data/workloads/plan_dlrm_mi350x.json", CDPLAN_SOURCE_DIR);
  FILE *fp = fopen(path, "rb");
  assert_non_null(fp);
  size_t n = fread(text, 1, sizeof text - 1, fp);
  fclose(fp);
  text[n] = '\0';
  return text;
}

/* With one core's worth of threads, a plan being solved must not stall
 * other clients: /healthz answers within 0.5 s while the solve runs
 * (with a thread pool, a connection MHD put on the solving thread waited
 * out the whole solve). */
static void test_http_hostile__a_solve_does_not_stall_other_clients(void **state) {
  http_fixture *f = *state;
  char *text = plan_request_text();
  cJSON *req = cJSON_Parse(text);
  assert_non_null(req);
  cJSON_ReplaceItemInObject(req, "time_limit_s", cJSON_CreateNumber(3));
  solver w = {f, fixture_print(req), {0}, 0};
  cJSON_Delete(req);
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, post_plan, &w), 0);
  usleep(400 * 1000);
  int probes = 0;
  while (probes < 5) {
    http_resp r;
    double t0 = svc_now();
    assert_int_equal(fixture_get(f, "/healthz", &r), 0);
    double took = svc_now() - t0;
    expect_status(&r, 200);
    http_resp_dispose(&r);
    if (took > 0.5) print_error("/healthz took %.2f s beside a solve\n", took);
    assert_true(took < 0.5);
    probes++;
    usleep(100 * 1000);
  }
  pthread_join(th, NULL);
  if (w.r.status != 201 && w.r.status != 200) print_error("plan: %d %s\n", w.r.status, w.r.body);
  assert_true(w.r.status == 201 || w.r.status == 200);
  /* The probes ran while the plan was still being solved. */
  assert_true(w.took > 0.4 + probes * 0.1);
  http_resp_dispose(&w.r);
  free(w.body);
}

/* Stopping during a solve: srv_drain stops accepting at once and returns
 * after its grace with the solve still counted (so the CLI can exit on
 * SIGTERM without waiting minutes); srv_stop afterwards still completes. */
static void test_http_hostile__drain_is_bounded_during_a_solve(void **state) {
  http_fixture *f = *state;
  char *text = plan_request_text();
  solver w = {f, text, {0}, 0};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, post_plan, &w), 0);
  usleep(300 * 1000);
  double t0 = svc_now();
  unsigned left = srv_drain(f->s, 0.2);
  double took = svc_now() - t0;
  int fd = http_connect_from(f->port, "127.0.0.1"); /* no longer accepting */
  if (fd >= 0) close(fd);
  pthread_join(th, NULL);
  assert_true(w.took > 0.6); /* this plan takes seconds: the drain ran beside it */
  assert_true(left >= 1);
  assert_true(took < 0.6);
  assert_true(fd < 0);
  assert_true(w.r.status == 200 || w.r.status == 201); /* the solve still answered */
  http_resp_dispose(&w.r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_http_hostile__rate_limit_covers_404_405_and_static,
                                      setup_rate, teardown),
      cmocka_unit_test_setup_teardown(test_http_hostile__per_address_connection_cap, setup_per_ip,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_http_hostile__trickled_headers_hit_the_deadline,
                                      setup_deadlines, teardown),
      cmocka_unit_test_setup_teardown(test_http_hostile__trickled_body_hits_the_deadline,
                                      setup_deadlines, teardown),
      cmocka_unit_test_setup_teardown(test_http_hostile__results_upload_refused_before_its_body,
                                      setup_open, teardown),
      cmocka_unit_test_setup_teardown(test_http_hostile__buffered_bodies_are_capped,
                                      setup_small_buffer, teardown),
      cmocka_unit_test_setup_teardown(test_http_hostile__duplicate_content_length_is_400,
                                      setup_open, teardown),
      cmocka_unit_test_setup_teardown(test_http_hostile__report_never_calibrates, setup_open,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_http_hostile__busy_database_is_503_and_reads_go_on,
                                      setup_open, teardown),
      cmocka_unit_test_setup_teardown(test_http_hostile__a_solve_does_not_stall_other_clients,
                                      setup_one_thread, teardown),
      cmocka_unit_test_setup_teardown(test_http_hostile__drain_is_bounded_during_a_solve,
                                      setup_one_thread, teardown),
  };
  return cmocka_run_group_tests_name("http_hostile", tests, NULL, NULL);
}
