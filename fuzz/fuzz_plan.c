/* POST /v1/plans and /v1/compare: the plan request decoders. A decoded
 * request would solve for up to its time_limit_s, so a parsable input has
 * its limit forced to 50 ms first: the target is the decoding, and a
 * short solve still runs the code that turns a solution into an answer.
 * The first byte picks plan or compare. */
#include <string.h>

#include "api/api_int.h"
#include "api/api_plan.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  int compare = data[0] & 1;
  const char *body = (const char *)data + 1;
  size_t len = size - 1;
  char *text = NULL, *out = NULL;
  cJSON *doc = cJSON_ParseWithLength(body, len);
  if (cJSON_IsObject(doc) && cJSON_GetObjectItemCaseSensitive(doc, "time_limit_s")) {
    cJSON_ReplaceItemInObjectCaseSensitive(doc, "time_limit_s", cJSON_CreateNumber(0.05));
  } else if (cJSON_IsObject(doc)) {
    cJSON_AddNumberToObject(doc, "time_limit_s", 0.05);
  }
  if (doc) text = cJSON_PrintUnformatted(doc);
  cJSON_Delete(doc);
  if (text) {
    body = text;
    len = strlen(text);
  }
  svc_err err;
  if (compare)
    api_compare(fuzz_ctx(), body, len, &out, &err);
  else
    api_plan(fuzz_ctx(), body, len, &out, &err);
  free(out);
  free(text);
  return 0;
}
