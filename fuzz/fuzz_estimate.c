/* POST /v1/estimate: the op decoders and the cost model behind them. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  return fuzz_run(api_estimate, data, size);
}
