/* Hardware descriptors: api_parse_body + api_hw_decode (the validator of
 * every catalog write), then the whole create path on a fresh name. */
#include "api/api_int.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  cJSON *doc = NULL;
  svc_err err;
  cost_hw hw;
  if (api_parse_body((const char *)data, size, &doc, &err) == 0) {
    api_hw_decode(doc, &hw, &err);
    cJSON_Delete(doc);
  }
  char *out = NULL;
  if (api_hw_create(fuzz_ctx(), (const char *)data, size, &out, &err) == 0) {
    /* Keep the catalog small: a stored descriptor is deleted again. */
    cJSON *d = cJSON_Parse(out);
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(d, "name");
    if (cJSON_IsString(name)) api_hw_delete(fuzz_ctx(), name->valuestring, &err);
    cJSON_Delete(d);
  }
  free(out);
  return 0;
}
