/* bench/published_gemm: the GEMM model against published dense GEMM
 * throughputs (data/measurements/published/gemm.json; GEMM.md there names
 * the sources) and the cross-vendor ratios fixed before any fit
 * (gemm_ratios.json). Rows carry a role assigned per source. Printed per
 * accelerator and role: median |pred/meas - 1| of the shipped model
 * (datasheet defaults, no calibration), and the ratios' errors.
 * usage: published_gemm [gemm.json [gemm_ratios.json]]
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#include "costmodel/costmodel_int.h"

#define MAX_ROWS 256

typedef struct {
  char id[64], hw[32], role[8];
  cost_hw h;
  cost_gemm_op op;
  double meas; /* TFLOP/s */
} row;

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *b = n >= 0 ? malloc((size_t)n + 1) : NULL;
  if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
    free(b);
    b = NULL;
  }
  fclose(f);
  if (b) b[n] = '\0', *len = (size_t)n;
  return b;
}

static cJSON *load_json(const char *path) {
  size_t len = 0;
  char *t = slurp(path, &len);
  cJSON *d = t ? cJSON_ParseWithLength(t, len) : NULL;
  free(t);
  if (!d) fprintf(stderr, "published_gemm: cannot read %s\n", path);
  return d;
}

static double num(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static int load(api_ctx *ctx, const cJSON *doc, row *rows, int *n) {
  const cJSON *it;
  *n = 0;
  cJSON_ArrayForEach(it, doc) {
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(it, "setup");
    const cJSON *hwn = cJSON_GetObjectItemCaseSensitive(s, "hardware");
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(s, "dtype");
    const cJSON *lay = cJSON_GetObjectItemCaseSensitive(s, "layout");
    const cJSON *role = cJSON_GetObjectItemCaseSensitive(it, "role");
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(it, "id");
    const cJSON *metric = cJSON_GetObjectItemCaseSensitive(it, "metric");
    if (*n >= MAX_ROWS || !cJSON_IsString(hwn) || !cJSON_IsString(dt) || !cJSON_IsString(role) ||
        !cJSON_IsString(metric) || strcmp(metric->valuestring, "tflops"))
      continue;
    row *r = &rows[*n];
    memset(r, 0, sizeof *r);
    snprintf(r->id, sizeof r->id, "%s", cJSON_IsString(id) ? id->valuestring : "?");
    snprintf(r->hw, sizeof r->hw, "%s", hwn->valuestring);
    snprintf(r->role, sizeof r->role, "%s", role->valuestring);
    svc_err err;
    if (api_hw_lookup(ctx, r->hw, 0, &r->h, &err)) continue;
    r->op.m = (int64_t)num(s, "m"), r->op.n = (int64_t)num(s, "n"), r->op.k = (int64_t)num(s, "k");
    r->op.batch = 1;
    r->op.dtype = cost_dtype_parse(dt->valuestring);
    snprintf(r->op.layout, sizeof r->op.layout, "%s",
             cJSON_IsString(lay) && strlen(lay->valuestring) == 2 ? lay->valuestring : "nn");
    r->meas = num(it, "value");
    if (r->op.dtype >= 0 && r->meas > 0 && r->op.m > 0 && r->op.n > 0 && r->op.k > 0) (*n)++;
  }
  return 0;
}

static double predict(const row *r) {
  cost_result res;
  if (cost_gemm(&r->h, &r->op, &res) || !(res.ms > 0)) return NAN;
  return 2.0 * r->op.m * r->op.n * r->op.k / (res.ms * 1e-3) / 1e12;
}

static const row *find(const row *rows, int n, const char *id) {
  for (int i = 0; i < n; i++)
    if (!strcmp(rows[i].id, id)) return &rows[i];
  return NULL;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *e, int m) {
  if (!m) return NAN;
  qsort(e, (size_t)m, sizeof *e, cmp_d);
  return m % 2 ? e[m / 2] : 0.5 * (e[m / 2 - 1] + e[m / 2]);
}

int main(int argc, char **argv) {
  const char *gp = argc > 1 ? argv[1] : CDPLAN_SOURCE_DIR "/data/measurements/published/gemm.json";
  const char *rp =
      argc > 2 ? argv[2] : CDPLAN_SOURCE_DIR "/data/measurements/published/gemm_ratios.json";
  static row rows[MAX_ROWS];
  api_ctx *ctx = NULL;
  svc_err err;
  int n = 0;
  svc_log_threshold = SVC_LOG_WARN;
  if (api_ctx_new(&ctx, ":memory:", &err)) return 1;
  cJSON *g = load_json(gp), *rat = load_json(rp);
  if (!g || !rat) return 1;
  load(ctx, g, rows, &n);
  printf("GEMMs vs published throughput (%d rows; median |pred/meas - 1|, signed mean)\n", n);
  static const char *const hws[] = {"h100-sxm", "h200",   "b200",   "gb200",
                                    "mi300x",   "mi325x", "mi350x", "mi355x"};
  double all_check[MAX_ROWS];
  int nc = 0;
  for (size_t h = 0; h < sizeof hws / sizeof hws[0]; h++)
    for (int k = 0; k < 2; k++) {
      const char *role = k ? "check" : "fit";
      double e[MAX_ROWS], sgn = 0;
      int m = 0;
      for (int i = 0; i < n; i++) {
        if (strcmp(rows[i].hw, hws[h]) || strcmp(rows[i].role, role)) continue;
        double rel = predict(&rows[i]) / rows[i].meas - 1;
        e[m++] = fabs(rel);
        sgn += rel;
        if (k) all_check[nc++] = fabs(rel);
      }
      if (m)
        printf("  %-10s %-6s %3d  median %6.1f%%  mean signed %+6.1f%%\n", hws[h], role, m,
               median(e, m) * 100, sgn / m * 100);
    }
  printf("  all check rows (n=%d): median %.1f%%\n", nc, median(all_check, nc) * 100);
  /* What the fit rows say of each architecture's achieved fraction: the
   * median measured/predicted (1 = the shipped efficiencies hold). */
  static const char *const archs[] = {"hopper", "blackwell", "cdna3", "cdna4"};
  for (size_t a = 0; a < sizeof archs / sizeof archs[0]; a++) {
    double q[MAX_ROWS];
    int m = 0;
    for (int i = 0; i < n; i++)
      if (!strcmp(rows[i].h.arch, archs[a]) && !strcmp(rows[i].role, "fit"))
        q[m++] = rows[i].meas / predict(&rows[i]);
    if (m)
      printf("  fit rows, %-9s (n=%2d): median measured/predicted %.3f\n", archs[a], m,
             median(q, m));
  }
  /* Ratios: numerator/denominator rows measured with the same harness. */
  printf("  cross-accelerator ratios (gemm_ratios.json, fixed before fitting):\n");
  const cJSON *it;
  double re[MAX_ROWS], worst = 0;
  int nr = 0;
  cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(rat, "ratios")) {
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(it, "numerator");
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(it, "denominator");
    const row *ra = cJSON_IsString(a) ? find(rows, n, a->valuestring) : NULL;
    const row *rb = cJSON_IsString(b) ? find(rows, n, b->valuestring) : NULL;
    if (!ra || !rb) continue;
    double meas = ra->meas / rb->meas, pred = predict(ra) / predict(rb);
    /* A ratio of rows whose source informed the model is shown, not scored. */
    int scored = !strcmp(ra->role, "check") && !strcmp(rb->role, "check");
    if (scored) {
      re[nr++] = fabs(pred / meas - 1);
      if (fabs(pred / meas - 1) > worst) worst = fabs(pred / meas - 1);
    }
    printf("    %-22s / %-22s measured %5.2f predicted %5.2f (%+5.1f%%)%s\n", ra->id, rb->id, meas,
           pred, (pred / meas - 1) * 100, scored ? "" : "  [fit rows: not scored]");
  }
  printf("  scored ratios (check rows, n=%d): median %.1f%%, worst %.1f%% (targets 10%% / 20%%)\n",
         nr, median(re, nr) * 100, worst * 100);
  printf("{\"bench\":\"published_gemm\",\"rows\":%d,\"check_median\":%.4f,\"ratio_median\":%.4f,"
         "\"ratio_worst\":%.4f}\n",
         n, median(all_check, nc), median(re, nr), worst);
  cJSON_Delete(g);
  cJSON_Delete(rat);
  api_ctx_free(ctx);
  return 0;
}
