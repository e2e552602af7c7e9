/* bench/bench_json.h: what the published-data benches (published_mlperf.c,
 * published_llm.c) share to read their JSON row files -- a whole file
 * parsed, and a number or string member or its absence. Header-only so
 * each bench executable keeps its own source list.
 */
#ifndef CDPLAN_BENCH_JSON_H
#define CDPLAN_BENCH_JSON_H

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>

#include "common/common.h"

/* The file at path (at most cap bytes, common's svc_read_file) parsed;
 * NULL when it cannot be read or is not JSON. Caller deletes. */
static inline cJSON *bench_json_load(const char *path, size_t cap) {
  char *t = NULL;
  size_t len = 0;
  svc_err err;
  if (svc_read_file(path, cap, &t, &len, &err)) return NULL;
  cJSON *d = cJSON_ParseWithLength(t, len);
  free(t);
  return d;
}

/* o's number member k, or NAN. */
static inline double bench_jnum(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* o's string member k, or NULL. */
static inline const char *bench_jstr(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

#endif
