/* api_device_check: whether the device a runner reported is the job's
 * accelerator, against the seeded catalog's descriptors. The H200 as torch
 * names it (150.1 GB total_memory, 132 SMs) matches h200; an H100 80GB, a
 * GB200 (whose name holds "b200"), a MIG slice (less memory, fewer SMs) and
 * the runner's CPU test mode do not; a result with no device name is -1. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "api/api_int.h"
#include "tests/tmpdb.h"

static char path[64];

static int setup(void **state) {
  api_ctx *ctx = NULL;
  svc_err err;
  tmpdb_name(path, sizeof path, "devchk");
  if (api_ctx_new(&ctx, path, &err)) fail_msg("open: %s", err.message);
  *state = ctx;
  return 0;
}

static int teardown(void **state) {
  api_ctx_free(*state);
  tmpdb_remove(path);
  return 0;
}

static int check(api_ctx *ctx, const char *hw, const char *dev_json, char *why, size_t n) {
  cost_hw h;
  svc_err err;
  assert_int_equal(api_hw_lookup(ctx, hw, 0, &h, &err), 0);
  cJSON *d = cJSON_Parse(dev_json);
  assert_non_null(d);
  int r = api_device_check(&h, d, why, n);
  cJSON_Delete(d);
  return r;
}

static void test_api_device_check__names_memory_units(void **state) {
  api_ctx *ctx = *state;
  char why[256];
  /* torch.cuda.get_device_properties on the H200 of data/measurements/h200 */
  const char *h200 =
      "{\"name\":\"NVIDIA H200\",\"memory_bytes\":150109880320,\"compute_units\":132}";
  assert_int_equal(check(ctx, "h200", h200, why, sizeof why), 1);
  assert_string_equal(why, "");
  /* the runner's older field names are read too */
  assert_int_equal(check(ctx, "h200",
                         "{\"name\":\"NVIDIA H200\",\"mem_bytes\":150109880320,\"sms\":132}", why,
                         sizeof why),
                   1);
  assert_int_equal(check(ctx, "h100-sxm", h200, why, sizeof why), 0);
  assert_non_null(strstr(why, "NVIDIA H200"));
  assert_int_equal(check(ctx, "h200",
                         "{\"name\":\"NVIDIA H100 80GB HBM3\",\"memory_bytes\":85031714816,"
                         "\"compute_units\":132}",
                         why, sizeof why),
                   0);
  assert_int_equal(check(ctx, "h100-sxm",
                         "{\"name\":\"NVIDIA H100 80GB HBM3\",\"memory_bytes\":85031714816,"
                         "\"compute_units\":132}",
                         why, sizeof why),
                   1);
  assert_int_equal(check(ctx, "b200", "{\"name\":\"NVIDIA GB200\"}", why, sizeof why), 0);
  /* a MIG slice of an H200: the name matches, the memory does not */
  assert_int_equal(check(ctx, "h200",
                         "{\"name\":\"NVIDIA H200\",\"memory_bytes\":74000000000,"
                         "\"compute_units\":60}",
                         why, sizeof why),
                   0);
  assert_non_null(strstr(why, "GB"));
  assert_int_equal(check(ctx, "h200",
                         "{\"name\":\"NVIDIA H200\",\"memory_bytes\":150109880320,"
                         "\"compute_units\":66}",
                         why, sizeof why),
                   0);
  assert_non_null(strstr(why, "compute units"));
  assert_int_equal(check(ctx, "mi300x", "{\"name\":\"AMD Instinct MI300X\"}", why, sizeof why), 1);
  assert_int_equal(
      check(ctx, "h200", "{\"name\":\"cpu (test mode)\",\"memory_bytes\":0}", why, sizeof why), 0);
  assert_int_equal(check(ctx, "h200", "{\"sms\":132}", why, sizeof why), -1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_api_device_check__names_memory_units, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
