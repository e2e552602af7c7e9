/* bench/costmodel_load.c: see costmodel_load.h. */
#include "bench/costmodel_load.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_hw.h"
#include "api/measure.h"
#include "common/common.h"

char *cm_slurp(const char *path, size_t *len) {
  char *buf = NULL;
  return svc_read_file(path, (size_t)256 << 20, &buf, len, NULL) ? NULL : buf;
}

static double get(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

/* The service's decoder (api/api_hw.h), so that the figures rest on the
 * descriptor the service prices: its vendor, its usable-HBM default. */
int cm_load_hw(const char *path, cost_hw *hw) {
  size_t len;
  svc_err err;
  char *txt = cm_slurp(path, &len);
  if (!txt) {
    fprintf(stderr, "cannot read %s\n", path);
    return -1;
  }
  int rc = api_hw_parse(txt, len, hw, &err);
  free(txt);
  if (rc) fprintf(stderr, "%s: %s (%s)\n", path, err.message, err.field);
  return rc ? -1 : 0;
}

static int append_file(const char *path, cost_sample **all, size_t *n) {
  size_t len, k = 0;
  cost_sample *s = NULL;
  svc_err err = {0};
  char *txt = cm_slurp(path, &len);
  if (!txt) {
    fprintf(stderr, "cannot read %s\n", path);
    return -1;
  }
  int rc = api_measure_load(txt, len, &s, &k, &err);
  free(txt);
  if (rc) {
    fprintf(stderr, "%s: %s (%s)\n", path, err.message, err.field);
    return -1;
  }
  cost_sample *na = realloc(*all, (*n + k) * sizeof *na);
  if (!na) {
    free(s);
    return -1;
  }
  memcpy(na + *n, s, k * sizeof *s);
  *all = na;
  *n += k;
  free(s);
  return 0;
}

int cm_load_samples(const char *dir, cost_sample **out, size_t *n) {
  char p[1024];
  *out = NULL;
  *n = 0;
  snprintf(p, sizeof p, "%s/gemm.json", dir);
  if (append_file(p, out, n)) return -1;
  snprintf(p, sizeof p, "%s/memory_ops.json", dir);
  if (append_file(p, out, n)) return -1;
  return 0;
}

int cm_load_ceilings(const char *dir, double *copy_bw, double flops[COST_DT__COUNT]) {
  char p[1024];
  size_t len;
  snprintf(p, sizeof p, "%s/ceilings.json", dir);
  char *txt = cm_slurp(p, &len);
  if (!txt) return -1;
  cJSON *d = cJSON_ParseWithLength(txt, len);
  free(txt);
  if (!d) return -1;
  *copy_bw = get(d, "copy_GBps") * 1e9;
  for (int i = 0; i < COST_DT__COUNT; i++) {
    char k[32];
    snprintf(k, sizeof k, "%s_TFLOPs", cost_dtype_name((cost_dtype)i));
    flops[i] = get(d, k) * 1e12;
  }
  cJSON_Delete(d);
  return 0;
}

static unsigned long long mix(unsigned long long h, long long v) {
  h ^= (unsigned long long)v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  h *= 0xff51afd7ed558ccdULL;
  return h ^ (h >> 33);
}

int cm_fold(const cost_sample *s) {
  unsigned long long h = (unsigned long long)s->kind * 0x2545F4914F6CDD1DULL + 1;
  switch (s->kind) {
  case COST_OP_GEMM:
    h = mix(mix(mix(h, s->u.gemm.m), s->u.gemm.n), s->u.gemm.k);
    break;
  case COST_OP_ELEMENTWISE:
    h = mix(mix(h, s->u.ew.numel), s->u.ew.kind);
    break;
  default:
    h = mix(mix(mix(mix(h, s->u.emb.rows), s->u.emb.dim), s->u.emb.batch), s->u.emb.pooling);
  }
  return (int)(h >> 17) & 1;
}
