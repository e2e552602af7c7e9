/* POST /v1/validations (submission) with the bundle backend, which only
 * writes the job's files (to a private temp dir) and spawns nothing; and
 * the runner-result decoder through `validate ingest` on the job just
 * made, when the submission was accepted. The first byte picks which. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "api/api_int.h"
#include "api/api_validate.h"
#include "fuzz_common.h"

static char dir[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  svc_err err;
  char *out = NULL;
  if (!dir[0]) {
    snprintf(dir, sizeof dir, "/tmp/cdplan-fuzz-XXXXXX");
    if (!mkdtemp(dir)) abort();
  }
  if (size < 1) return 0;
  const char *body = (const char *)data + 1;
  size_t len = size - 1;
  if (data[0] & 1) {
    api_val_opts opts = {.backend = "bundle", .bundle_dir = dir};
    api_validation_submit_opts(fuzz_ctx(), body, len, &opts, &out, &err);
  } else {
    api_validation_ingest(fuzz_ctx(), body, len, &out, &err);
  }
  free(out);
  return 0;
}
