/* bench/costmodel_load.c: see costmodel_load.h. */
#include "bench/costmodel_load.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "api/api_hw.h"
#include "api/measure.h"
#include "common/common.h"

enum { SLURP_MAX = 256 << 20 };

/* PATH.gz through zlib (gzip -n copies of large sweep files), or NULL. */
static char *slurp_gz(const char *path, size_t *len) {
  char gz[4096];
  if (snprintf(gz, sizeof gz, "%s.gz", path) >= (int)sizeof gz) return NULL;
  gzFile f = gzopen(gz, "rb");
  if (!f) return NULL;
  size_t cap = (size_t)1 << 20, n = 0;
  char *buf = malloc(cap + 1);
  int got = 0;
  while (buf && (got = gzread(f, buf + n, (unsigned)(cap - n))) > 0) {
    n += (size_t)got;
    if (n < cap) continue;
    char *grown = cap < SLURP_MAX ? realloc(buf, cap * 2 + 1) : NULL;
    if (!grown) {
      free(buf);
      buf = NULL; /* over SLURP_MAX, or out of memory */
      break;
    }
    buf = grown;
    cap *= 2;
  }
  int bad = got < 0;
  if (gzclose(f) != Z_OK) bad = 1;
  if (!buf || bad) {
    free(buf);
    return NULL;
  }
  buf[n] = '\0';
  *len = n;
  return buf;
}

int cm_exists(const char *path) {
  char gz[4096];
  if (access(path, F_OK) == 0) return 1;
  return snprintf(gz, sizeof gz, "%s.gz", path) < (int)sizeof gz && access(gz, F_OK) == 0;
}

char *cm_slurp(const char *path, size_t *len) {
  char *buf = NULL;
  if (!svc_read_file(path, SLURP_MAX, &buf, len, NULL)) return buf;
  return slurp_gz(path, len);
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
