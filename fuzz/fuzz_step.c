/* POST /v1/step: the workload and recipe decoders and validators
 * (api_workload_decode, api_recipe_decode, api_step_check) and the step
 * model behind them. */
#include "api/api_step.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  return fuzz_run(api_step, data, size);
}
