/* /healthz and /metrics: health answers 200 with status ok; after some
 * requests the Prometheus text holds the per-route counters (labelled by
 * the route pattern, not the raw path), the histogram and cdplan_up. */
#include "test_http_common.h"

static void test_http_health__ok(void **state) {
  http_fixture *f = *state;
  http_resp r;
  assert_int_equal(fixture_get(f, "/healthz", &r), 0);
  expect_status(&r, 200);
  cJSON *doc = fixture_json(&r);
  assert_string_equal(cJSON_GetObjectItemCaseSensitive(doc, "status")->valuestring, "ok");
  cJSON_Delete(doc);
  http_resp_dispose(&r);
}

static void expect_line(const char *text, const char *line) {
  if (!strstr(text, line)) print_error("missing in /metrics: %s\n%s\n", line, text);
  assert_non_null(strstr(text, line));
}

static void test_http_metrics__counts_by_route_pattern(void **state) {
  http_fixture *f = *state;
  http_resp r, m;
  for (int i = 0; i < 3; i++) {
    assert_int_equal(fixture_get(f, "/v1/hardware/h200", &r), 0);
    http_resp_dispose(&r);
  }
  assert_int_equal(fixture_get(f, "/v1/hardware/no-such", &r), 0);
  http_resp_dispose(&r);
  assert_int_equal(fixture_get(f, "/v1/hardware", &r), 0);
  http_resp_dispose(&r);
  /* An unknown GET falls through to the dashboard's files; other methods
   * on unknown paths are "unmatched". */
  assert_int_equal(fixture_get(f, "/not/a/route", &r), 0);
  http_resp_dispose(&r);
  assert_int_equal(fixture_send(f, "POST", "/not/a/route", "{}", NULL, &r), 0);
  http_resp_dispose(&r);

  assert_int_equal(fixture_send(f, "PATCH", "/v1/hardware/h200", "{}", NULL, &r), 0);
  http_resp_dispose(&r);

  assert_int_equal(fixture_get(f, "/metrics", &m), 0);
  expect_status(&m, 200);
  expect_header(&m, "Content-Type", "text/plain", 1);
  expect_line(m.body, "\ncdplan_up 1\n");
  expect_line(m.body, "cdplan_http_requests_total{route=\"/v1/hardware/"
                      "{name}\",method=\"GET\",status=\"200\"} 3\n");
  expect_line(m.body, "cdplan_http_requests_total{route=\"/v1/hardware/"
                      "{name}\",method=\"GET\",status=\"404\"} 1\n");
  expect_line(
      m.body,
      "cdplan_http_requests_total{route=\"/v1/hardware\",method=\"GET\",status=\"200\"} 1\n");
  expect_line(m.body, "cdplan_http_requests_total{route=\"/v1/hardware/"
                      "{name}\",method=\"PATCH\",status=\"405\"} 1\n");
  expect_line(m.body,
              "cdplan_http_requests_total{route=\"static\",method=\"GET\",status=\"404\"} 1\n");
  expect_line(m.body,
              "cdplan_http_requests_total{route=\"unmatched\",method=\"POST\",status=\"404\"} 1\n");
  expect_line(
      m.body,
      "cdplan_http_request_duration_seconds_bucket{route=\"/v1/hardware/{name}\",le=\"+Inf\"} 5\n");
  expect_line(m.body,
              "cdplan_http_request_duration_seconds_count{route=\"/v1/hardware/{name}\"} 5\n");
  expect_line(m.body, "cdplan_http_request_duration_seconds_sum{route=\"/v1/hardware/{name}\"} ");
  expect_line(m.body, "# TYPE cdplan_http_request_duration_seconds histogram\n");
  /* Raw paths never become labels. */
  assert_null(strstr(m.body, "h200"));
  assert_null(strstr(m.body, "/not/a/route"));
  http_resp_dispose(&m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_http_health__ok, setup_open, teardown),
      cmocka_unit_test_setup_teardown(test_http_metrics__counts_by_route_pattern, setup_open,
                                      teardown),
  };
  return cmocka_run_group_tests_name("http_metrics", tests, NULL, NULL);
}
