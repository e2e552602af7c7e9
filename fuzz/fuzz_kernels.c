/* POST /v1/kernels/select: problems, candidate configs, the ranking. */
#include "api/api_kernels.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  return fuzz_run(api_kernels_select, data, size);
}
