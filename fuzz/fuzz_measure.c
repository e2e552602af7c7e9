/* Measurement files (cdplan calibrate, validation results):
 * api_measure_load for op-level files and api_step_meas_load for
 * whole-step files. */
#include "api/api_step.h"
#include "api/measure.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  cost_sample *s = NULL;
  size_t n = 0;
  svc_err err;
  api_measure_load((const char *)data, size, &s, &n, &err);
  free(s);
  api_step_meas m = {0};
  if (api_step_meas_load((const char *)data, size, &m, &err) == 0) api_step_meas_dispose(&m);
  return 0;
}
