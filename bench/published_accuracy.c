/* bench/published_accuracy: the collective model against published
 * nccl-tests / rccl-tests bus bandwidths
 * (data/measurements/published/collectives.json; COLLECTIVES.md there
 * names the sources). Rows carry a role, assigned per source: the
 * latency floors are fitted on "fit" rows only (sum of |log busbw error|,
 * coordinate search inside each parameter's bounds; the link efficiencies
 * stay the shipped per-technology values, themselves fitted on the fit
 * rows) and both halves are scored with the shipped defaults and with the
 * fit; the targets are scored on the "check" rows, which no fit ever sees.
 * Every scored row is printed with the algorithm and protocol picked.
 *
 * How a row becomes an op: the hardware's descriptor from the catalog
 * compiled into cdplan; gpus_per_node is the ranks of one scale-up domain
 * (a GB200 NVL72 rack is one domain of 72 though its hosts hold 4); a row
 * that says NVLS was off is priced without in-switch reduction.
 * A second part (published_mlperf.c) prices the published MLPerf Training
 * DLRM-DCNv2 throughputs with the step model.
 * usage: published_accuracy [collectives.json [mlperf_dlrm.json]]
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_hw.h"
#include "bench/published_mlperf.h"
#include "costmodel/costmodel.h"
#include "bench_cli.h"

#define MAX_ROWS 512

typedef struct {
  char id[64], hw[32], role[8], arch[32];
  cost_hw h;
  cost_collective_op op;
  double meas;                 /* GB/s */
  double pdef[COST_MAX_CALIB]; /* the shipped defaults for this row's hardware */
  double pfit[COST_MAX_CALIB]; /* those with the latencies fitted on fit rows */
  int multi;                   /* crosses scale-up domains */
} row;

/* Fitted: the latency floors. The link efficiencies stay the shipped
 * per-technology values (costmodel/params.c), themselves fitted on these
 * fit rows only; a joint fit of both let an efficiency stand in for an
 * algorithm the fit rows never run (ring on one NVSwitch tier). */
static const char *const fit_names[] = {"coll_alpha_node_us", "coll_alpha_cluster_us"};
#define NFIT (sizeof fit_names / sizeof fit_names[0])
static int fit_ids[NFIT]; /* their indices (cost_param_index), set in main */

/* The whole file (common's svc_read_file; *len bytes); NULL when it
 * cannot be read. */
static char *slurp(const char *path, size_t *len) {
  char *text = NULL;
  svc_err err;
  return svc_read_file(path, 64u << 20, &text, len, &err) ? NULL : text;
}

static double num(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static int load(api_ctx *ctx, const char *path, row *rows, int *n) {
  size_t len = 0;
  char *text = slurp(path, &len);
  cJSON *doc = text ? cJSON_ParseWithLength(text, len) : NULL;
  free(text);
  if (!cJSON_IsArray(doc)) {
    fprintf(stderr, "published_accuracy: cannot read %s\n", path);
    cJSON_Delete(doc);
    return -1;
  }
  const cJSON *it;
  *n = 0;
  cJSON_ArrayForEach(it, doc) {
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(it, "setup");
    const cJSON *hwn = cJSON_GetObjectItemCaseSensitive(s, "hardware");
    const cJSON *opn = cJSON_GetObjectItemCaseSensitive(s, "op");
    const cJSON *role = cJSON_GetObjectItemCaseSensitive(it, "role");
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(it, "id");
    const cJSON *metric = cJSON_GetObjectItemCaseSensitive(it, "metric");
    if (*n >= MAX_ROWS || !cJSON_IsString(hwn) || !cJSON_IsString(opn) || !cJSON_IsString(role) ||
        !cJSON_IsString(metric) || strcmp(metric->valuestring, "busbw"))
      continue;
    row *r = &rows[*n];
    memset(r, 0, sizeof *r);
    snprintf(r->id, sizeof r->id, "%s", cJSON_IsString(id) ? id->valuestring : "?");
    snprintf(r->hw, sizeof r->hw, "%s", hwn->valuestring);
    snprintf(r->role, sizeof r->role, "%s", role->valuestring);
    svc_err err;
    if (api_hw_lookup(ctx, r->hw, 0, &r->h, &err)) {
      fprintf(stderr, "published_accuracy: %s: %s\n", r->id, err.message);
      continue;
    }
    snprintf(r->arch, sizeof r->arch, "%s", r->h.arch);
    cost_params_resolve(&r->h, r->pdef);
    double ranks = num(s, "ranks"), gpn = num(s, "gpus_per_node"), bytes = num(s, "bytes");
    int kind = cost_coll_kind_parse(opn->valuestring);
    if (kind < 0 || !(ranks >= 1) || !(gpn >= 1) || !(bytes > 0)) continue;
    /* An NVLink domain larger than a host (GB200 NVL72) spans hosts. */
    double dom = r->h.scaleup_domain > gpn ? fmin(ranks, r->h.scaleup_domain) : gpn;
    const cJSON *nvls = cJSON_GetObjectItemCaseSensitive(s, "nvls");
    if (cJSON_IsFalse(nvls)) r->h.in_switch_reduction = 0;
    r->op = (cost_collective_op){.kind = kind,
                                 .bytes = bytes,
                                 .ranks = (int64_t)ranks,
                                 .scope = ranks > dom ? COST_SCOPE_CLUSTER : COST_SCOPE_NODE,
                                 .gpus_per_node = (int64_t)dom};
    r->multi = ranks > dom;
    r->meas = num(it, "value");
    if (r->meas > 0) (*n)++;
  }
  cJSON_Delete(doc);
  return 0;
}

/* Parameter sets: joint NULL = each row's shipped defaults; joint set
 * and no per-arch entries = each row's pfit (defaults with the fitted
 * latencies). Per-arch entries are kept for a per-technology fit. */
#define MAX_ARCH 16
typedef struct {
  char arch[32];
  double p[COST_MAX_CALIB];
} arch_params;

typedef struct {
  const double *joint;
  arch_params a[MAX_ARCH];
  int n;
} param_set;

static const double *params_for(const param_set *ps, const row *r) {
  if (!ps->joint) return r->pdef;
  if (!ps->n) return r->pfit;
  for (int i = 0; i < ps->n; i++)
    if (!strcmp(ps->a[i].arch, r->arch)) return ps->a[i].p;
  return ps->joint;
}

/* Predicted busbw (GB/s) of r with parameters p. */
static double predict(const row *r, const double *p) {
  cost_result res;
  if (cost_collective_p(&r->h, p, &r->op, &res) || !(res.ms > 0)) return NAN;
  return res.bytes / (res.ms * 1e-3) / 1e9;
}

/* The algorithm and protocol the model picked for r. */
static const char *algo(const row *r, const double *p) {
  cost_result res;
  if (cost_collective_p(&r->h, p, &r->op, &res)) return "?";
  return res.detail ? res.detail : "?";
}

static double loss(const row *rows, int n, const double *p, const char *arch) {
  double s = 0;
  for (int i = 0; i < n; i++) {
    if (strcmp(rows[i].role, "fit") || (arch && strcmp(rows[i].arch, arch))) continue;
    /* |log error|: robust to the few rows no two-level model explains
     * (a 20-rack GB200 job limited by its spine). */
    double q[COST_MAX_CALIB];
    memcpy(q, rows[i].pdef, sizeof q);
    for (size_t k = 0; k < NFIT; k++) q[fit_ids[k]] = p[fit_ids[k]];
    double e = fabs(log(predict(&rows[i], q) / rows[i].meas));
    s += isfinite(e) ? e : 1e3;
  }
  return s;
}

/* Coordinate search on parameters ids[0..nid) inside their bounds, on the
 * fit rows of arch (NULL: all). */
static void fit(const row *rows, int n, double *p, const int *ids, size_t nid, const char *arch) {
  for (int round = 0; round < 40; round++) {
    for (size_t k = 0; k < nid; k++) {
      int id = ids[k];
      double lo = 0, hi = 0;
      cost_param_info(id, NULL, NULL, NULL, &lo, &hi);
      double best = loss(rows, n, p, arch), bv = p[id];
      for (int j = 0; j <= 200; j++) {
        p[id] = lo + (hi - lo) * j / 200.0;
        double l = loss(rows, n, p, arch);
        if (l < best) best = l, bv = p[id];
      }
      p[id] = bv;
    }
  }
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Median |rel error| over rows matching role/hw/multi (NULL/-1 = any). */
static double median_err_v(const row *rows, int n, const param_set *ps, const char *role,
                           const char *hw, const char *vendor, int multi, int *count) {
  double e[MAX_ROWS];
  int m = 0;
  for (int i = 0; i < n; i++) {
    const row *r = &rows[i];
    if ((role && strcmp(r->role, role)) || (hw && strcmp(r->hw, hw)) ||
        (vendor && strcmp(r->h.vendor, vendor)) || (multi >= 0 && r->multi != multi))
      continue;
    e[m++] = fabs(predict(r, params_for(ps, r)) / r->meas - 1);
  }
  *count = m;
  if (!m) return NAN;
  qsort(e, (size_t)m, sizeof *e, cmp_d);
  return m % 2 ? e[m / 2] : 0.5 * (e[m / 2 - 1] + e[m / 2]);
}

static double median_err(const row *rows, int n, const param_set *ps, const char *role,
                         const char *hw, int multi, int *count) {
  return median_err_v(rows, n, ps, role, hw, NULL, multi, count);
}

int main(int argc, char **argv) {
  int cli = bench_cli(argc, argv, "[COLLECTIVES.json [MLPERF_DLRM.json]]", "", 2);
  if (cli >= 0) return cli;
  const char *path =
      argc > 1 ? argv[1] : CDPLAN_SOURCE_DIR "/data/measurements/published/collectives.json";
  static row rows[MAX_ROWS];
  api_ctx *ctx = NULL;
  svc_err err;
  int n = 0;
  svc_log_threshold = SVC_LOG_WARN;
  if (api_ctx_new(&ctx, ":memory:", &err)) {
    fprintf(stderr, "published_accuracy: %s\n", err.message);
    return 1;
  }
  for (size_t k = 0; k < NFIT; k++)
    if ((fit_ids[k] = cost_param_index(fit_names[k])) < 0) return 1;
  if (load(ctx, path, rows, &n)) return 1;
  double def[COST_MAX_CALIB] = {0}, fitted[COST_MAX_CALIB] = {0};
  cost_hw none;
  memset(&none, 0, sizeof none);
  cost_params_resolve(&none, def);
  memcpy(fitted, def, sizeof def);
  fit(rows, n, fitted, fit_ids, NFIT, NULL);
  param_set pd = {.joint = NULL}, pf = {.joint = fitted};
  for (int i = 0; i < n; i++) {
    memcpy(rows[i].pfit, rows[i].pdef, sizeof rows[i].pfit);
    for (size_t k = 0; k < NFIT; k++) rows[i].pfit[fit_ids[k]] = fitted[fit_ids[k]];
  }

  printf("collectives vs published bus bandwidth (%d rows; median |pred/meas - 1|)\n", n);
  printf("  %-10s %-6s %4s  %9s  %9s\n", "hardware", "role", "n", "defaults", "fit-only");
  static const char *const hws[] = {"h100-sxm", "h200",   "b200",   "gb200",
                                    "mi300x",   "mi325x", "mi350x", "mi355x"};
  for (size_t h = 0; h < sizeof hws / sizeof hws[0]; h++)
    for (int k = 0; k < 2; k++) {
      const char *role = k ? "check" : "fit";
      int c;
      double d = median_err(rows, n, &pd, role, hws[h], -1, &c);
      double f = median_err(rows, n, &pf, role, hws[h], -1, &c);
      if (c) printf("  %-10s %-6s %4d  %8.1f%%  %8.1f%%\n", hws[h], role, c, d * 100, f * 100);
    }
  int c1, c2, c3, c4;
  double in_d = median_err(rows, n, &pd, "check", NULL, 0, &c1);
  double in_f = median_err(rows, n, &pf, "check", NULL, 0, &c1);
  double mn_d = median_err(rows, n, &pd, "check", NULL, 1, &c2);
  double mn_f = median_err(rows, n, &pf, "check", NULL, 1, &c2);
  double fit_f = median_err(rows, n, &pf, "fit", NULL, -1, &c3);
  double all_d = median_err(rows, n, &pd, "check", NULL, -1, &c4);
  printf("  check rows inside one domain (n=%d): defaults %.1f%%, fit-only %.1f%% (target 10%%)\n",
         c1, in_d * 100, in_f * 100);
  printf("  check rows across domains   (n=%d): defaults %.1f%%, fit-only %.1f%% (target 15%%)\n",
         c2, mn_d * 100, mn_f * 100);
  printf("  fit rows (n=%d): fit-only %.1f%%\n", c3, fit_f * 100);
  static const char *const vendors[] = {"nvidia", "amd"};
  for (int v = 0; v < 2; v++)
    for (int m = 0; m < 2; m++) {
      int cv;
      double dv = median_err_v(rows, n, &pd, "check", NULL, vendors[v], m, &cv);
      double fv = median_err_v(rows, n, &pf, "check", NULL, vendors[v], m, &cv);
      if (cv)
        printf("  check %-6s %-14s (n=%2d): defaults %5.1f%%, fit-only %5.1f%%\n", vendors[v],
               m ? "across domains" : "one domain", cv, dv * 100, fv * 100);
    }
  printf("  fitted jointly:");
  for (size_t k = 0; k < NFIT; k++) printf(" %s=%.3g", fit_names[k], fitted[fit_ids[k]]);
  for (int j = 0; j < pf.n; j++)
    printf("\n  fitted for %s: coll_bus_eff=%.3g coll_nvls_eff=%.3g", pf.a[j].arch,
           pf.a[j].p[cost_param_index("coll_bus_eff")],
           pf.a[j].p[cost_param_index("coll_nvls_eff")]);
  printf("\n  rows: id, role, predicted / measured GB/s with the fit, algorithm\n");
  for (int i = 0; i < n; i++)
    if (!strcmp(rows[i].role, "check") || !strcmp(rows[i].role, "fit"))
      printf("    %-38s %-5s %7.1f / %7.1f  %+6.1f%%  %s\n", rows[i].id, rows[i].role,
             predict(&rows[i], params_for(&pf, &rows[i])), rows[i].meas,
             (predict(&rows[i], params_for(&pf, &rows[i])) / rows[i].meas - 1) * 100,
             algo(&rows[i], params_for(&pf, &rows[i])));
  printf("{\"bench\":\"published_accuracy\",\"rows\":%d,\"check_node_median\":%.4f,"
         "\"check_cluster_median\":%.4f,\"check_node_median_defaults\":%.4f,"
         "\"check_cluster_median_defaults\":%.4f,\"check_all_median_defaults\":%.4f}\n",
         n, in_f, mn_f, in_d, mn_d, all_d);
  const char *mlperf =
      argc > 2 ? argv[2] : CDPLAN_SOURCE_DIR "/data/measurements/published/mlperf_dlrm.json";
  int rc = mlperf_score(ctx, mlperf, CDPLAN_SOURCE_DIR "/data/workloads/mlperf_dcnv2.json");
  api_ctx_free(ctx);
  return rc ? 1 : 0;
}
