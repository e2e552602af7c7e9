/* Measurement files (cdplan calibrate, validation results):
 * api_measure_load for op-level files, api_measure_load_all for their
 * host-mapped embedding rows too (each priced by cost_uvm_bag_p) and
 * api_step_meas_load for whole-step files. */
#include <string.h>

#include "api/api_step.h"
#include "api/measure.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  cost_sample *s = NULL;
  size_t n = 0;
  svc_err err;
  api_measure_load((const char *)data, size, &s, &n, &err);
  free(s);
  cost_uvm_sample *u = NULL;
  size_t nu = 0;
  s = NULL;
  if (api_measure_load_all((const char *)data, size, &s, &n, &u, &nu, &err) == 0 && nu) {
    /* each row through the model (the fit's inner call), defaults */
    cost_hw hw;
    double prof[COST_SP__COUNT], f, fb;
    memset(&hw, 0, sizeof hw);
    hw.hbm_bw = 4.8e12, hw.compute_units = 132, hw.host_link_bw = 63e9;
    for (int i = 0; i < COST_SP__COUNT; i++) prof[i] = cost_step_param_value(&hw, i);
    for (size_t i = 0; i < nu && i < 64; i++) cost_uvm_bag_p(&hw, prof, &u[i], &f, &fb);
  }
  free(s);
  free(u);
  api_step_meas m = {0};
  if (api_step_meas_load((const char *)data, size, &m, &err) == 0) api_step_meas_dispose(&m);
  return 0;
}
