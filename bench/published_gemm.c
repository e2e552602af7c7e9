/* bench/published_gemm: the GEMM model against published dense GEMM
 * throughputs (data/measurements/published/gemm.json; GEMM.md there names
 * the sources) and the cross-vendor ratios fixed before any fit
 * (gemm_ratios.json). Rows carry a role assigned per source. Two models:
 *   datasheet  the descriptors' figures, no calibration;
 *   fit-only   each architecture's calibration fitted on the "fit" rows
 *              only (api/calibrate_published.c: achievable fraction of the
 *              clock-scaled peak per dtype; an arch without fit rows takes
 *              cost_arch_fallback's); an accelerator with a
 *              calibration of its own (the H200: the shipped fit to
 *              data/measurements/h200/) keeps that one;
 *   shipped    what a fresh database prices with: fit-only for the
 *              architectures data/calibration/ ships (arch-<arch>.json),
 *              datasheet for the others -- its figures are the bands that
 *              api/provenance.c quotes.
 * Rows are priced at the clock their source states, where it states one;
 * a bf16/fp16 row whose harness holds the GPU under sustained load
 * (setup.load) at its accelerator's clock under load (load_clock_mhz).
 * Scored: check rows whose source no fit rests on; a row of a fitted
 * source is refused (counted, never scored). Printed per accelerator: the
 * median |pred/meas - 1|, and the ratios' errors under both models.
 * PG_ROWS=1 in the environment prints every row.
 * usage: published_gemm [gemm.json [gemm_ratios.json]]
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_hw.h"
#include "api/api_published.h"
#include "bench/published_gemm.h"
#include "bench_cli.h"

enum { M_SHEET, M_FIT, M_SHIP, M__N };
static const char *const mname[M__N] = {"datasheet", "fit-only", "shipped"};

/* The whole file (common's svc_read_file; *len bytes); NULL when it
 * cannot be read. */
static char *slurp(const char *path, size_t *len) {
  char *text = NULL;
  svc_err err;
  return svc_read_file(path, 64u << 20, &text, len, &err) ? NULL : text;
}

/* The throughput the model gives row r's harness: the GEMM's time plus
 * the harness's per-call cost (setup.timing, API_PUB_CALL_MS). */
static double predict(const cost_hw *hw, const api_pub_row *r) {
  cost_result res;
  if (cost_gemm(hw, &r->s.u.gemm, &res) || !(res.ms > 0)) return NAN;
  return r->tflops * (r->s.ms + r->call_ms) / (res.ms + r->call_ms);
}

static const api_pub_row *find(const api_pub_row *rows, size_t n, const char *id) {
  for (size_t i = 0; i < n; i++)
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

typedef struct {
  api_ctx *ctx;
  const api_arch_fit *fits;
  int nfits;
} models;

/* Whether data/calibration/ ships a calibration for arch (or for the arch
 * it falls back to). */
static int shipped(const char *arch) {
  char path[512];
  for (int i = 0; i < 2 && arch; i++, arch = cost_arch_fallback(arch)) {
    snprintf(path, sizeof path, "%s/data/calibration/arch-%s.json", CDPLAN_SOURCE_DIR, arch);
    FILE *f = fopen(path, "r");
    if (f) {
      fclose(f);
      return 1;
    }
  }
  return 0;
}

/* Row r's descriptor under model m. */
static void model_hw(const models *M, int m, const api_pub_row *r, cost_hw *hw) {
  *hw = r->hw;
  if (m == M_SHEET) return;
  cost_hw own;
  svc_err err;
  if (api_hw_lookup(M->ctx, r->hw.name, 1, &own, &err) == 0 && own.calib.version > 0 &&
      !own.calib.per_arch) {
    hw->calib = own.calib; /* measured on this accelerator: its own */
    return;
  }
  if (m == M_SHIP && !shipped(r->hw.arch)) return;
  api_published_apply(r, M->fits, M->nfits, hw);
}

static double pred_m(const models *M, int m, const api_pub_row *r) {
  cost_hw hw;
  model_hw(M, m, r, &hw);
  return predict(&hw, r);
}

static double pred_fit(const void *M, const api_pub_row *r) { return pred_m(M, M_FIT, r); }

/* Check rows per accelerator and source (one source is one harness: its
 * timing method, library build and setup), shipped model: which harness
 * an accelerator's median rests on. e: scratch of n doubles. */
static void by_source(const models *M, const api_pub_row *rows, size_t n, double *e) {
  printf("  check rows per accelerator and source (shipped model):\n");
  for (size_t i = 0; i < n; i++) {
    const api_pub_row *r = &rows[i];
    if (r->fit || api_published_fitted_source(M->fits, M->nfits, r->url)) continue;
    int first = 1, cnt = 0;
    double sg = 0;
    for (size_t j = 0; j < n && first; j++)
      first = j >= i || rows[j].fit || strcmp(rows[j].hw.name, r->hw.name) ||
              strcmp(rows[j].url, r->url);
    if (!first) continue;
    for (size_t j = i; j < n; j++) {
      if (rows[j].fit || strcmp(rows[j].hw.name, r->hw.name) || strcmp(rows[j].url, r->url))
        continue;
      double rel = pred_m(M, M_SHIP, &rows[j]) / rows[j].tflops - 1;
      e[cnt++] = fabs(rel);
      sg += rel;
    }
    printf("    %-9s %3d rows median %5.1f%% signed %+6.1f%%  %.90s\n", r->hw.name, cnt,
           median(e, cnt) * 100, sg / cnt * 100, r->url);
  }
}

/* The bf16 clock each AMD board's GEMMs are priced at: the descriptor's
 * measured sustained clock, else the power model's at its TDP
 * (costmodel/gemm_arch.c; CDNA4 at CDNA3's P0 and k: no CDNA4 clock under
 * load states its board power, GEMM.md). */
static void power_clocks(api_ctx *ctx) {
  static const char *const amd[] = {"mi300x", "mi325x", "mi350x", "mi355x"};
  printf("bf16 clock under load (measured, else power model at TDP):");
  for (size_t i = 0; i < sizeof amd / sizeof amd[0]; i++) {
    cost_hw hw;
    svc_err err;
    if (api_hw_lookup(ctx, amd[i], 0, &hw, &err)) continue;
    double peak = hw.peak_clock_hz > 0 ? hw.peak_clock_hz : hw.clock_hz;
    printf(" %s %.0f MHz (%s, %.0f W)", amd[i], cost_clock_ratio_dt(&hw, COST_DT_BF16) * peak / 1e6,
           hw.sustained_clock_hz > 0 ? "measured" : "model", hw.tdp_w);
  }
  printf("\n");
}

/* CDNA4 static power, a sensitivity that ships nothing (GEMM.md, h-amd6):
 * CDNA4 rows without a stated clock are priced at the clock a CDNA4 power
 * model with static power p0 gives (k's of fp16/fp8 at CDNA3's ratios to
 * bf16), k_bf16 bisected so that the CDNA4 fit on the fit rows prices the
 * clock-stated rocmlib4026 row exactly (that row measures the fraction,
 * HipKittens' rows the MI355X clock); then the MI350X/MI355X check rows are
 * scored. Both p0's were chosen after the MI350X check rows were seen. */
static double sens_fit(const models *M, const api_pub_row *rows, size_t n,
                       const cost_power_model *pm, api_pub_row *tmp, api_arch_fit *fits, int *nf) {
  memcpy(tmp, rows, n * sizeof *tmp);
  for (size_t i = 0; i < n; i++) {
    cost_hw *h = &tmp[i].hw;
    if (strcmp(h->arch, "cdna4") || h->sustained_clock_hz > 0) continue;
    int d = tmp[i].s.u.gemm.dtype;
    if (!(pm->k_w_per_tflops[d] > 0)) d = COST_DT_BF16;
    double peak = h->peak_clock_hz > 0 ? h->peak_clock_hz : h->clock_hz;
    h->peak_clock_hz = peak;
    h->sustained_clock_hz = peak * cost_power_clock_ratio(pm, h->tdp_w, h->peak_flops[d], d);
  }
  *nf = 0;
  api_published_fit(tmp, n, 0, "cdna4", fits, API_FIT_MAX_ARCH - 1, nf);
  for (int f = 0; f < M->nfits; f++)
    if (!strcmp(M->fits[f].arch, "cdna3")) fits[(*nf)++] = M->fits[f];
  for (size_t i = 0; i < n; i++)
    if (!strncmp(tmp[i].id, "rocmlib4026", 11)) {
      cost_hw hw;
      api_published_apply(&tmp[i], fits, *nf, &hw);
      return predict(&hw, &tmp[i]) / tmp[i].tflops - 1;
    }
  return NAN;
}

static void cdna4_sensitivity(const models *M, const api_pub_row *rows, size_t n) {
  static const struct {
    double p0;
    const char *why;
  } var[] = {{611, "the rocmlib4026 board read as an MI350X at 1000 W"},
             {713, "CDNA3's 419.5 W x idle power 238 W (MI355X) / 140 W (MI325X)"}};
  cost_hw c3 = {.vendor = "amd", .arch = "cdna3"};
  const cost_power_model *base = cost_power_model_of(&c3);
  api_pub_row *tmp = malloc((n ? n : 1) * sizeof *tmp);
  static api_arch_fit fits[API_FIT_MAX_ARCH];
  double *e = malloc((n ? n : 1) * sizeof *e);
  if (!tmp || !e || !base) goto cleanup;
  printf("CDNA4 static power, sensitivity (NOT shipped; both P0 chosen after the MI350X check rows "
         "were seen):\n");
  for (size_t v = 0; v < sizeof var / sizeof var[0]; v++) {
    cost_power_model pm = {.p0_w = var[v].p0};
    double lo = 0.2, hi = 3.0, b = base->k_w_per_tflops[COST_DT_BF16];
    int nf = 0;
    for (int it = 0; it < 40; it++) {
      double k = 0.5 * (lo + hi);
      for (int d = 0; d < COST_DT__COUNT; d++)
        pm.k_w_per_tflops[d] = base->k_w_per_tflops[d] * k / b;
      if (sens_fit(M, rows, n, &pm, tmp, fits, &nf) > 0)
        hi = k;
      else
        lo = k;
    }
    sens_fit(M, rows, n, &pm, tmp, fits, &nf);
    printf("  P0 %.0f W (%s): k_bf16 %.3f, bf16 clock", pm.p0_w, var[v].why,
           pm.k_w_per_tflops[COST_DT_BF16]);
    static const char *const hws[] = {"mi350x", "mi355x"};
    for (int h = 0; h < 2; h++) {
      cost_hw d;
      svc_err err;
      if (api_hw_lookup(M->ctx, hws[h], 0, &d, &err) == 0)
        printf(" %s %.0f MHz", hws[h],
               d.clock_hz / 1e6 *
                   cost_power_clock_ratio(&pm, d.tdp_w, d.peak_flops[COST_DT_BF16], COST_DT_BF16));
    }
    for (int f = 0; f < nf; f++)
      if (!strcmp(fits[f].arch, "cdna4"))
        printf(", cdna4 fit bf16 %.3f fp8 %.3f",
               cost_param_value(&(cost_hw){.calib = fits[f].calib}, "gemm_eff_bf16"),
               cost_param_value(&(cost_hw){.calib = fits[f].calib}, "gemm_eff_fp8"));
    for (int h = 0; h < 2; h++) {
      int cnt = 0;
      double sg = 0;
      for (size_t i = 0; i < n; i++) {
        if (tmp[i].fit || strcmp(tmp[i].hw.name, hws[h]) ||
            api_published_fitted_source(fits, nf, tmp[i].url))
          continue;
        cost_hw hw;
        api_published_apply(&tmp[i], fits, nf, &hw);
        double rel = predict(&hw, &tmp[i]) / tmp[i].tflops - 1;
        e[cnt++] = fabs(rel);
        sg += rel;
      }
      if (cnt) printf("; %s check %.1f%% (%+.1f%%)", hws[h], median(e, cnt) * 100, sg / cnt * 100);
    }
    printf("\n");
  }
cleanup:
  free(tmp);
  free(e);
}

/* The per-call harness cost (API_PUB_CALL_MS) recomputed from the fit rows
 * it rests on: HipKittens timed the same MI355X GEMMs one torch call at a
 * time from an idle GPU and with hipblaslt-bench back to back; the median
 * difference of the measured times at 1024^3-8192^3. Printed beside the
 * constant, with the rows that take it. */
static void harness_call(const api_pub_row *rows, size_t n) {
  double d[4];
  int nd = 0, per_call = 0;
  char a[64], b[64];
  for (int s = 1024; s <= 8192; s *= 2) {
    snprintf(a, sizeof a, "hk-mi355x-bf16-torch-%d", s);
    snprintf(b, sizeof b, "hk-mi355x-bf16-hipblaslt-%d", s);
    const api_pub_row *ra = find(rows, n, a), *rb = find(rows, n, b);
    if (ra && rb) d[nd++] = (ra->s.ms + ra->call_ms - rb->s.ms - rb->call_ms) * 1e3;
  }
  for (size_t i = 0; i < n; i++) per_call += rows[i].call_ms > 0;
  if (nd)
    printf("per-call harness cost (setup.timing \"per_call\", %d rows): %.1f us shipped, %.1f us "
           "recomputed from HipKittens' paired MI355X fit rows (median of %d)\n",
           per_call, API_PUB_CALL_MS * 1e3, median(d, nd), nd);
}

int main(int argc, char **argv) {
  int cli = bench_cli(argc, argv, "[GEMM.json [GEMM_RATIOS.json]]", "", 2);
  if (cli >= 0) return cli;
  const char *gp = argc > 1 ? argv[1] : CDPLAN_SOURCE_DIR "/data/measurements/published/gemm.json";
  const char *rp =
      argc > 2 ? argv[2] : CDPLAN_SOURCE_DIR "/data/measurements/published/gemm_ratios.json";
  api_ctx *ctx = NULL;
  svc_err err;
  api_pub_row *rows = NULL;
  size_t n = 0, glen = 0, rlen = 0;
  static api_arch_fit fits[API_FIT_MAX_ARCH];
  int nfits = 0;
  svc_log_threshold = SVC_LOG_WARN;
  char *gt = slurp(gp, &glen), *rt = slurp(rp, &rlen);
  cJSON *rat = rt ? cJSON_ParseWithLength(rt, rlen) : NULL;
  if (!gt || !rat || api_ctx_new(&ctx, ":memory:", &err) ||
      api_published_rows(ctx, gt, glen, gp, &rows, &n, &err)) {
    fprintf(stderr, "published_gemm: cannot read %s / %s\n", gp, rp);
    return 1;
  }
  api_published_fit(rows, n, 0, NULL, fits, API_FIT_MAX_ARCH, &nfits);
  models M = {ctx, fits, nfits};
  int refused = 0;
  for (size_t i = 0; i < n; i++)
    refused += !rows[i].fit && api_published_fitted_source(fits, nfits, rows[i].url);
  printf("GEMMs vs published throughput (%zu rows; median |pred/meas - 1|, signed mean)\n", n);
  printf("fit-only calibration per architecture (fit rows only):\n");
  for (int f = 0; f < nfits; f++) {
    printf("  %-10s rows %2d, median error %5.1f%% -> %5.1f%%:", fits[f].arch, fits[f].rep.n_rows,
           fits[f].rep.median_before * 100, fits[f].rep.median_after * 100);
    for (int k = 0; k < fits[f].calib.n; k++)
      printf(" %s=%.3f", fits[f].calib.names[k], fits[f].calib.values[k]);
    printf("\n");
  }
  power_clocks(ctx);
  printf("check rows of a fitted source, refused (not scored): %d\n", refused);
  static const char *const hws[] = {"h100-sxm", "h200",   "b200",   "gb200",
                                    "mi300x",   "mi325x", "mi350x", "mi355x"};
  double *all[M__N], *e[M__N], sgn[M__N];
  int nc[M__N] = {0};
  for (int m = 0; m < M__N; m++) {
    all[m] = calloc(n + 1, sizeof(double));
    e[m] = calloc(n + 1, sizeof(double));
  }
  char json[4096];
  size_t jl = (size_t)snprintf(json, sizeof json, "{\"bench\":\"published_gemm\",\"rows\":%zu", n);
  printf("  %-10s %-6s %3s  %-28s %-28s %-28s\n", "", "role", "n", mname[0], mname[1], mname[2]);
  for (size_t h = 0; h < sizeof hws / sizeof hws[0]; h++)
    for (int k = 0; k < 2; k++) {
      int cnt = 0;
      for (int m = 0; m < M__N; m++) {
        sgn[m] = 0;
        cnt = 0;
        for (size_t i = 0; i < n; i++) {
          const api_pub_row *r = &rows[i];
          if (strcmp(r->hw.name, hws[h]) || r->fit != !k) continue;
          if (k && api_published_fitted_source(fits, nfits, r->url)) continue;
          double rel = pred_m(&M, m, r) / r->tflops - 1;
          e[m][cnt++] = fabs(rel);
          sgn[m] += rel;
          if (k) all[m][nc[m]++] = fabs(rel);
        }
      }
      if (!cnt) continue;
      printf("  %-10s %-6s %3d ", hws[h], k ? "check" : "fit", cnt);
      for (int m = 0; m < M__N; m++) {
        double med = median(e[m], cnt);
        printf("  median %5.1f%% signed %+6.1f%%", med * 100, sgn[m] / cnt * 100);
        if (k)
          jl += (size_t)snprintf(json + jl, sizeof json - jl, ",\"%s_%s\":%.4f", hws[h],
                                 m == M_SHIP ? "shipped"
                                 : m         ? "fit_only"
                                             : "datasheet",
                                 med);
      }
      printf("\n");
    }
  double chk[M__N];
  for (int m = 0; m < M__N; m++) {
    chk[m] = median(all[m], nc[m]);
    printf("  all scored check rows (n=%d), %-9s: median %.1f%%\n", nc[m], mname[m], chk[m] * 100);
  }
  by_source(&M, rows, n, e[M_SHIP]);
  cdna4_sensitivity(&M, rows, n);
  harness_call(rows, n);
  pg_cdna3_report(rows, n, pred_fit, &M, fits, nfits);
  if (getenv("PG_ROWS"))
    for (size_t i = 0; i < n; i++)
      printf("    %-36s %-9s %-5s %-5s %6lldx%6lldx%6lld meas %7.1f datasheet %7.1f fit-only "
             "%7.1f shipped %7.1f\n",
             rows[i].id, rows[i].hw.name, rows[i].fit ? "fit" : "check",
             cost_dtype_name((cost_dtype)rows[i].s.u.gemm.dtype), (long long)rows[i].s.u.gemm.m,
             (long long)rows[i].s.u.gemm.n, (long long)rows[i].s.u.gemm.k, rows[i].tflops,
             pred_m(&M, M_SHEET, &rows[i]), pred_m(&M, M_FIT, &rows[i]),
             pred_m(&M, M_SHIP, &rows[i]));
  /* Ratios: numerator/denominator rows measured with the same harness. */
  printf("  cross-accelerator ratios (gemm_ratios.json, fixed before fitting):\n");
  double re[M__N][64], worst[M__N] = {0};
  int nr = 0;
  const cJSON *it;
  cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(rat, "ratios")) {
    const char *a = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "numerator"));
    const char *b = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "denominator"));
    const api_pub_row *ra = a ? find(rows, n, a) : NULL, *rb = b ? find(rows, n, b) : NULL;
    if (!ra || !rb || nr >= 64) continue;
    double meas = ra->tflops / rb->tflops, pr[M__N];
    for (int m = 0; m < M__N; m++) pr[m] = pred_m(&M, m, ra) / pred_m(&M, m, rb);
    /* A ratio of rows whose source informed a fit is shown, not scored. */
    int scored = !ra->fit && !rb->fit && !api_published_fitted_source(fits, nfits, ra->url) &&
                 !api_published_fitted_source(fits, nfits, rb->url);
    if (scored) {
      for (int m = 0; m < M__N; m++) {
        re[m][nr] = fabs(pr[m] / meas - 1);
        worst[m] = fmax(worst[m], re[m][nr]);
      }
      nr++;
    }
    printf("    %-34s / %-34s measured %5.2f datasheet %5.2f (%+5.1f%%) fit-only %5.2f "
           "(%+5.1f%%) shipped %5.2f (%+5.1f%%)%s\n",
           ra->id, rb->id, meas, pr[0], (pr[0] / meas - 1) * 100, pr[1], (pr[1] / meas - 1) * 100,
           pr[2], (pr[2] / meas - 1) * 100, scored ? "" : "  [fit rows: not scored]");
  }
  double rmed[M__N];
  for (int m = 0; m < M__N; m++) {
    rmed[m] = median(re[m], nr);
    printf("  scored ratios (n=%d), %-9s: median %.1f%%, worst %.1f%% (targets 10%% / 20%%)\n", nr,
           mname[m], rmed[m] * 100, worst[m] * 100);
  }
  snprintf(
      json + jl, sizeof json - jl,
      ",\"refused\":%d,\"check_median\":%.4f,\"check_median_fit_only\":%.4f,"
      "\"ratio_median\":%.4f,\"ratio_worst\":%.4f,\"ratio_median_fit_only\":%.4f,"
      "\"ratio_worst_fit_only\":%.4f,\"check_median_shipped\":%.4f,\"ratio_median_shipped\":%.4f,"
      "\"ratio_worst_shipped\":%.4f}",
      refused, chk[0], chk[1], rmed[0], worst[0], rmed[1], worst[1], chk[2], rmed[2], worst[2]);
  printf("%s\n", json);
  for (int m = 0; m < M__N; m++) free(all[m]), free(e[m]);
  free(rows);
  free(gt);
  free(rt);
  cJSON_Delete(rat);
  api_ctx_free(ctx);
  return 0;
}
