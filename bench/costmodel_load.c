/* bench/costmodel_load.c: see costmodel_load.h. */
#include "bench/costmodel_load.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int cm_load_hw(const char *path, cost_hw *hw) {
  size_t len;
  char *txt = cm_slurp(path, &len);
  if (!txt) {
    fprintf(stderr, "cannot read %s\n", path);
    return -1;
  }
  cJSON *d = cJSON_ParseWithLength(txt, len);
  free(txt);
  if (!d) {
    fprintf(stderr, "%s: bad JSON\n", path);
    return -1;
  }
  memset(hw, 0, sizeof *hw);
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(d, "name");
  if (cJSON_IsString(v)) snprintf(hw->name, sizeof hw->name, "%s", v->valuestring);
  v = cJSON_GetObjectItemCaseSensitive(d, "arch");
  if (cJSON_IsString(v)) snprintf(hw->arch, sizeof hw->arch, "%s", v->valuestring);
  hw->compute_units = (int)get(d, "compute_units");
  hw->clock_hz = get(d, "clock_mhz") * 1e6;
  hw->peak_clock_hz = get(d, "peak_clock_mhz") * 1e6;
  hw->sustained_clock_hz = get(d, "sustained_clock_mhz") * 1e6;
  hw->hbm_bytes = get(d, "hbm_bytes");
  hw->hbm_usable_bytes = get(d, "hbm_usable_bytes");
  hw->hbm_bw = get(d, "hbm_bandwidth_bytes_per_s");
  hw->l2_bytes = get(d, "l2_bytes");
  hw->llc_bytes = get(d, "llc_bytes");
  hw->smem_per_unit = get(d, "smem_per_unit_bytes");
  hw->regs_per_unit = get(d, "regs_per_unit");
  hw->scaleup_bw = get(d, "scaleup_bandwidth_bytes_per_s");
  hw->scaleup_domain = (int)get(d, "scaleup_domain");
  /* The topology members api_hw_decode reads too (collective.c uses them). */
  v = cJSON_GetObjectItemCaseSensitive(d, "scaleup_topology");
  hw->scaleup_mesh = cJSON_IsString(v) && !strcmp(v->valuestring, "mesh");
  hw->scaleup_link_bw = get(d, "scaleup_link_bandwidth_bytes_per_s");
  hw->in_switch_reduction =
      cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(d, "in_switch_reduction"));
  hw->scaleout_bw = get(d, "scaleout_bandwidth_bytes_per_s");
  hw->host_link_bw = get(d, "host_link_bandwidth_bytes_per_s");
  hw->host_mem_per_node = get(d, "host_memory_bytes_per_node");
  hw->tdp_w = get(d, "tdp_watts");
  const cJSON *pk = cJSON_GetObjectItemCaseSensitive(d, "peak_tflops"), *e;
  cJSON_ArrayForEach(e, pk) {
    int dt = cost_dtype_parse(e->string);
    if (dt >= 0 && cJSON_IsNumber(e)) hw->peak_flops[dt] = e->valuedouble * 1e12;
  }
  const cJSON *mi = cJSON_GetObjectItemCaseSensitive(d, "matrix_instructions");
  cJSON_ArrayForEach(e, mi) {
    const cJSON *dn = cJSON_GetObjectItemCaseSensitive(e, "dtype");
    if (hw->n_mma >= COST_MAX_MMA || !cJSON_IsString(dn)) continue;
    int dt = cost_dtype_parse(dn->valuestring);
    if (dt < 0) continue;
    hw->mma[hw->n_mma++] = (cost_mma){dt, (int)get(e, "m"), (int)get(e, "n"), (int)get(e, "k")};
  }
  cJSON_Delete(d);
  return 0;
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
