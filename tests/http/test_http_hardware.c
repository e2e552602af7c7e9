/* The hardware catalog over HTTP: list/filter/get, create/replace/delete
 * with their status codes, error documents naming the field, and that a
 * refused write leaves the stored descriptor as it was. */
#include "test_http_common.h"

/* Does the list document hold a descriptor named name? */
static int list_has(const cJSON *doc, const char *name) {
  const cJSON *hw = cJSON_GetObjectItemCaseSensitive(doc, "hardware"), *it;
  cJSON_ArrayForEach(it, hw) {
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(it, "name");
    if (cJSON_IsString(n) && strcmp(n->valuestring, name) == 0) return 1;
  }
  return 0;
}

static void test_http_hw__list_has_seeded_h200(void **state) {
  http_fixture *f = *state;
  http_resp r;
  expect_typed_get(f, "/v1/hardware", "application/json", &r);
  cJSON *doc = fixture_json(&r);
  assert_true(cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(doc, "hardware")));
  assert_true(list_has(doc, "h200"));
  cJSON_Delete(doc);
  http_resp_dispose(&r);
}

static void test_http_hw__list_filters_by_vendor(void **state) {
  http_fixture *f = *state;
  http_resp r;
  assert_int_equal(fixture_get(f, "/v1/hardware?vendor=nvidia", &r), 0);
  expect_status(&r, 200);
  cJSON *doc = fixture_json(&r), *it;
  assert_true(list_has(doc, "h200"));
  cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(doc, "hardware")) {
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(it, "vendor")->valuestring, "nvidia");
  }
  cJSON_Delete(doc);
  http_resp_dispose(&r);

  assert_int_equal(fixture_get(f, "/v1/hardware?vendor=amd", &r), 0);
  expect_status(&r, 200);
  doc = fixture_json(&r);
  assert_false(list_has(doc, "h200"));
  cJSON_Delete(doc);
  http_resp_dispose(&r);
}

static void test_http_hw__get_one(void **state) {
  http_fixture *f = *state;
  http_resp r;
  assert_int_equal(fixture_get(f, "/v1/hardware/h200", &r), 0);
  expect_status(&r, 200);
  cJSON *doc = fixture_json(&r);
  assert_string_equal(cJSON_GetObjectItemCaseSensitive(doc, "name")->valuestring, "h200");
  assert_string_equal(cJSON_GetObjectItemCaseSensitive(doc, "vendor")->valuestring, "nvidia");
  cJSON_Delete(doc);
  http_resp_dispose(&r);
}

static void test_http_hw__unknown_is_404_error_document(void **state) {
  http_fixture *f = *state;
  http_resp r;
  assert_int_equal(fixture_get(f, "/v1/hardware/no-such-gpu", &r), 0);
  expect_status(&r, 404);
  cJSON *doc = fixture_json(&r);
  assert_string_equal(fixture_err_code(doc), "not_found");
  assert_non_null(
      cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "error"), "message"));
  cJSON_Delete(doc);
  http_resp_dispose(&r);
}

static void test_http_hw__create_201_then_409(void **state) {
  http_fixture *f = *state;
  http_resp r;
  char *body = descriptor_body("test-gpu");
  assert_int_equal(fixture_send(f, "POST", "/v1/hardware", body, NULL, &r), 0);
  expect_status(&r, 201);
  expect_header(&r, "Location", "/v1/hardware/test-gpu", 0);
  http_resp_dispose(&r);

  expect_get(f, "/v1/hardware/test-gpu", 200);

  assert_int_equal(fixture_send(f, "POST", "/v1/hardware", body, NULL, &r), 0);
  expect_status(&r, 409);
  cJSON *doc = fixture_json(&r);
  assert_string_equal(fixture_err_code(doc), "conflict");
  cJSON_Delete(doc);
  http_resp_dispose(&r);
  free(body);
}

static void test_http_hw__put_creates_then_replaces(void **state) {
  http_fixture *f = *state;
  http_resp r;
  cJSON *d = fixture_descriptor("test-gpu");
  char *body = fixture_print(d);
  expect_send(f, "PUT", "/v1/hardware/test-gpu", body, NULL, 201);
  free(body);

  cJSON_ReplaceItemInObjectCaseSensitive(d, "clock_mhz", cJSON_CreateNumber(1755));
  body = fixture_print(d);
  expect_send(f, "PUT", "/v1/hardware/test-gpu", body, NULL, 200);

  assert_int_equal(fixture_get(f, "/v1/hardware/test-gpu", &r), 0);
  expect_status(&r, 200);
  cJSON *got = fixture_json(&r);
  assert_int_equal((int)cJSON_GetObjectItemCaseSensitive(got, "clock_mhz")->valuedouble, 1755);
  cJSON_Delete(got);
  http_resp_dispose(&r);
  cJSON_Delete(d);
  free(body);
}

static void test_http_hw__delete_204_then_404(void **state) {
  http_fixture *f = *state;
  http_resp r;
  char *body = descriptor_body("test-gpu");
  expect_send(f, "POST", "/v1/hardware", body, NULL, 201);
  free(body);

  assert_int_equal(fixture_send(f, "DELETE", "/v1/hardware/test-gpu", NULL, NULL, &r), 0);
  expect_status(&r, 204);
  assert_int_equal(r.body_len, 0);
  http_resp_dispose(&r);

  expect_get(f, "/v1/hardware/test-gpu", 404);
  expect_send(f, "DELETE", "/v1/hardware/test-gpu", NULL, NULL, 404);
}

static void test_http_hw__bad_json_is_400_with_field(void **state) {
  http_fixture *f = *state;
  http_resp r;
  assert_int_equal(fixture_send(f, "POST", "/v1/hardware", "{\"name\": \"x\",", NULL, &r), 0);
  expect_status(&r, 400);
  cJSON *doc = fixture_json(&r);
  assert_string_equal(fixture_err_code(doc), "bad_json");
  /* The error document always carries field, even when it is "". */
  assert_true(cJSON_IsString(
      cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "error"), "field")));
  cJSON_Delete(doc);
  http_resp_dispose(&r);
}

static void test_http_hw__unknown_field_is_named(void **state) {
  http_fixture *f = *state;
  http_resp r;
  cJSON *d = fixture_descriptor("test-gpu");
  cJSON_AddNumberToObject(d, "warp_drive", 9);
  char *body = fixture_print(d);
  assert_int_equal(fixture_send(f, "POST", "/v1/hardware", body, NULL, &r), 0);
  expect_status(&r, 400);
  cJSON *doc = fixture_json(&r);
  assert_string_equal(fixture_err_code(doc), "unknown_field");
  assert_non_null(strstr(fixture_err_field(doc), "warp_drive"));
  cJSON_Delete(doc);
  http_resp_dispose(&r);
  cJSON_Delete(d);
  free(body);

  expect_get(f, "/v1/hardware/test-gpu", 404); /* nothing was stored */
}

static void test_http_hw__failed_put_leaves_descriptor(void **state) {
  http_fixture *f = *state;
  http_resp r, before, after;
  assert_int_equal(fixture_get(f, "/v1/hardware/h200", &before), 0);
  expect_status(&before, 200);

  cJSON *d = fixture_descriptor("h200");
  cJSON_ReplaceItemInObjectCaseSensitive(d, "clock_mhz", cJSON_CreateNumber(1000));
  cJSON_ReplaceItemInObjectCaseSensitive(d, "compute_units", cJSON_CreateString("many"));
  char *body = fixture_print(d);
  assert_int_equal(fixture_send(f, "PUT", "/v1/hardware/h200", body, NULL, &r), 0);
  expect_status(&r, 400);
  cJSON *doc = fixture_json(&r);
  assert_non_null(strstr(fixture_err_field(doc), "compute_units"));
  cJSON_Delete(doc);
  http_resp_dispose(&r);

  assert_int_equal(fixture_get(f, "/v1/hardware/h200", &after), 0);
  expect_status(&after, 200);
  assert_string_equal(after.body, before.body);
  http_resp_dispose(&before);
  http_resp_dispose(&after);
  cJSON_Delete(d);
  free(body);
}

static void test_http_hw__estimate_prices_ops(void **state) {
  http_fixture *f = *state;
  http_resp r;
  const char *body = "{\"hardware\":\"h200\",\"ops\":[{\"op\":\"gemm\",\"m\":4096,\"n\":4096,"
                     "\"k\":4096,\"dtype\":\"bf16\"}]}";
  assert_int_equal(fixture_send(f, "POST", "/v1/estimate", body, NULL, &r), 0);
  expect_status(&r, 200);
  cJSON *doc = fixture_json(&r);
  assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc, "results")), 1);
  cJSON_Delete(doc);
  http_resp_dispose(&r);

  assert_int_equal(
      fixture_send(f, "POST", "/v1/estimate", "{\"hardware\":\"nope\",\"ops\":[]}", NULL, &r), 0);
  assert_true(r.status == 400 || r.status == 404);
  http_resp_dispose(&r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_http_hw__list_has_seeded_h200, setup_open, teardown),
      cmocka_unit_test_setup_teardown(test_http_hw__list_filters_by_vendor, setup_open, teardown),
      cmocka_unit_test_setup_teardown(test_http_hw__get_one, setup_open, teardown),
      cmocka_unit_test_setup_teardown(test_http_hw__unknown_is_404_error_document, setup_open,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_http_hw__create_201_then_409, setup_open, teardown),
      cmocka_unit_test_setup_teardown(test_http_hw__put_creates_then_replaces, setup_open,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_http_hw__delete_204_then_404, setup_open, teardown),
      cmocka_unit_test_setup_teardown(test_http_hw__bad_json_is_400_with_field, setup_open,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_http_hw__unknown_field_is_named, setup_open, teardown),
      cmocka_unit_test_setup_teardown(test_http_hw__failed_put_leaves_descriptor, setup_open,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_http_hw__estimate_prices_ops, setup_open, teardown),
  };
  return cmocka_run_group_tests_name("http_hardware", tests, NULL, NULL);
}
