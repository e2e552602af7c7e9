/* bench/published_gemm_cdna3.c: why the MI300X check rows miss, printed
 * beside bench/published_gemm's scores (GEMM.md, "MI300X: the misses one
 * by one", h-amd9). Nothing here changes a shipped figure.
 *
 * Part 1 lists every MI300X check row with what could set its speed: the
 * source (one source is one harness and library build), dtype, shape, the
 * bytes of A and B against the 256 MiB Infinity Cache (the descriptor's
 * llc_bytes), whether K is an exact power of two, the measured time of one
 * call, and the fit-only model's signed error.
 *
 * Part 2 prices two large-operand terms, both looked for after the misses
 * were known, each a factor (1 - s) on the throughput of the rows its rule
 * matches, s = 1 - median(measured / fit-only) over the fit rows of the
 * architecture that match (fit rows only):
 *   spill       A + B exceed the last-level cache: operands stream from
 *               HBM once per wave, and HBM traffic costs power under the
 *               cap (AMD ROCm blog, "Measuring Max-Achievable FLOPs, Part
 *               2", 2025: MAF is measured "with cold caches to include the
 *               time and power needed to load initial values from memory");
 *   spill+2^k   the same with K an exact power of two (same blog: "Avoid
 *               exact powers of 2 as this can sometimes create hotspots in
 *               the memory hierarchy", hence its K = 32768 + 128).
 * Printed for CDNA3 and CDNA4, then the MI300X and MI325X check medians
 * and the worst AMD-vs-NVIDIA ratio (Azure MI300X / H100 fp8 16384^3)
 * under the CDNA3 value. Then the same terms fitted jointly (h-amd10,
 * once the new MI300X and MI350X fit sources were in): each arch's
 * fractions refitted on its fit rows the rule does not match, s from the
 * rows it does, and s per source, to show whether a term rests on one
 * harness. Fit rows only; printed, not shipped (GEMM.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/published_gemm.h"

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double med(double *e, int m) {
  if (!m) return NAN;
  qsort(e, (size_t)m, sizeof *e, cmp_d);
  return m % 2 ? e[m / 2] : 0.5 * (e[m / 2 - 1] + e[m / 2]);
}

static double operand_bytes(const api_pub_row *r) {
  const cost_gemm_op *g = &r->s.u.gemm;
  double b = g->batch > 0 ? (double)g->batch : 1;
  return b * (double)(g->m + g->n) * (double)g->k * cost_dtype_bytes((cost_dtype)g->dtype);
}

static int pow2(long long v) { return v > 0 && !(v & (v - 1)); }

enum { R_SPILL, R_SPILL_POW2K, R__N };
static const char *const rname[R__N] = {"spill", "spill+2^k"};

static int matches(const api_pub_row *r, int rule) {
  if (!(r->hw.llc_bytes > 0) || operand_bytes(r) <= r->hw.llc_bytes) return 0;
  return rule == R_SPILL || pow2(r->s.u.gemm.k);
}

static int is_arch(const api_pub_row *r, const char *arch) { return !strcmp(r->hw.arch, arch); }

/* s fitted on arch's fit rows that match rule; *cnt of them. */
static double fit_s(const api_pub_row *rows, size_t n, pg_pred_fn pred, const void *M,
                    const char *arch, int rule, double *scratch, int *cnt) {
  *cnt = 0;
  for (size_t i = 0; i < n; i++)
    if (rows[i].fit && is_arch(&rows[i], arch) && matches(&rows[i], rule))
      scratch[(*cnt)++] = rows[i].tflops / pred(M, &rows[i]);
  return *cnt ? 1 - med(scratch, *cnt) : 0;
}

static double pred_s(const api_pub_row *r, pg_pred_fn pred, const void *M, int rule, double s) {
  double p = pred(M, r);
  return is_arch(r, "cdna3") && matches(r, rule) ? p * (1 - s) : p;
}

static const api_pub_row *by_id(const api_pub_row *rows, size_t n, const char *id) {
  for (size_t i = 0; i < n; i++)
    if (!strcmp(rows[i].id, id)) return &rows[i];
  return NULL;
}

static void breakdown(const api_pub_row *rows, size_t n, pg_pred_fn pred, const void *M) {
  printf("MI300X check rows, fit-only (A+B against the %.0f MiB last-level cache):\n", 256.0);
  for (size_t i = 0; i < n; i++) {
    const api_pub_row *r = &rows[i];
    if (r->fit || strcmp(r->hw.name, "mi300x")) continue;
    const cost_gemm_op *g = &r->s.u.gemm;
    double ms = 2.0 * (double)g->m * (double)g->n * (double)g->k / (r->tflops * 1e9);
    printf("    %-36s %-5s %6lldx%6lldx%6lld A+B %7.0f MiB%s K %s  call %8.3f ms  %+6.1f%%\n",
           r->id, cost_dtype_name((cost_dtype)g->dtype), (long long)g->m, (long long)g->n,
           (long long)g->k, operand_bytes(r) / 1048576.0,
           operand_bytes(r) > r->hw.llc_bytes ? " > LLC" : "      ", pow2(g->k) ? "2^k" : "   ", ms,
           (pred(M, r) / r->tflops - 1) * 100);
  }
}

/* Row r's throughput under the fits (its arch's calibration, the
 * fallback's for the parameters it lacks), with the harness's per-call
 * cost, as bench/published_gemm's predict(). */
static double pred_with(const api_pub_row *r, const api_arch_fit *fits, int nf) {
  cost_hw hw;
  cost_result res;
  api_published_apply(r, fits, nf, &hw);
  if (cost_gemm(&hw, &r->s.u.gemm, &res) || !(res.ms > 0)) return NAN;
  return r->tflops * (r->s.ms + r->call_ms) / (res.ms + r->call_ms);
}

/* The joint fit of a term (h-amd10): the arch's fractions fitted on its
 * fit rows the rule does NOT match (so the spilled rows do not pull the
 * baseline), then s = 1 - median(measured / predicted) over the fit rows
 * it matches; every other arch keeps the full fit (base). Fit rows only.
 * Returns s; *cnt matching fit rows; fits/nf the arch's refit + base. */
static double joint_s(const api_pub_row *rows, size_t n, const api_arch_fit *base, int nbase,
                      const char *arch, int rule, api_pub_row *tmp, api_arch_fit *fits, int *nf,
                      double *scratch, int *cnt) {
  memcpy(tmp, rows, n * sizeof *tmp);
  for (size_t i = 0; i < n; i++)
    if (tmp[i].fit && is_arch(&tmp[i], arch) && matches(&tmp[i], rule)) tmp[i].fit = 0;
  *nf = 0;
  api_published_fit(tmp, n, 0, arch, fits, API_FIT_MAX_ARCH - 1, nf);
  for (int f = 0; f < nbase && *nf < API_FIT_MAX_ARCH; f++)
    if (strcmp(base[f].arch, arch)) fits[(*nf)++] = base[f];
  *cnt = 0;
  for (size_t i = 0; i < n; i++)
    if (rows[i].fit && is_arch(&rows[i], arch) && matches(&rows[i], rule))
      scratch[(*cnt)++] = rows[i].tflops / pred_with(&rows[i], fits, *nf);
  return *cnt ? 1 - med(scratch, *cnt) : 0;
}

static double pred_joint(const api_pub_row *r, const api_arch_fit *fits, int nf, int rule,
                         double s) {
  double p = pred_with(r, fits, nf);
  return is_arch(r, "cdna3") && matches(r, rule) ? p * (1 - s) : p;
}

/* s per source behind a joint fit: 1 - median(measured / predicted) over
 * each source's matching fit rows of arch (is the term one harness's?). */
static void per_source(const api_pub_row *rows, size_t n, const api_arch_fit *fits, int nf,
                       int rule, const char *arch, double *e) {
  for (size_t i = 0; i < n; i++) {
    const api_pub_row *r = &rows[i];
    int first = 1, cnt = 0;
    if (!r->fit || !is_arch(r, arch) || !matches(r, rule)) continue;
    for (size_t j = 0; j < i && first; j++)
      first = !(rows[j].fit && is_arch(&rows[j], arch) && matches(&rows[j], rule) &&
                !strcmp(rows[j].url, r->url));
    if (!first) continue;
    for (size_t j = i; j < n; j++)
      if (rows[j].fit && is_arch(&rows[j], arch) && matches(&rows[j], rule) &&
          !strcmp(rows[j].url, r->url))
        e[cnt++] = rows[j].tflops / pred_with(&rows[j], fits, nf);
    printf("\n      %s %s: s %+.3f over %d rows (%.70s)", arch, r->hw.name, 1 - med(e, cnt), cnt,
           r->url);
  }
}

static void joint_report(const api_pub_row *rows, size_t n, const api_arch_fit *base, int nbase,
                         pg_pred_fn pred, const void *M) {
  static api_arch_fit fits[API_FIT_MAX_ARCH], fits4[API_FIT_MAX_ARCH];
  api_pub_row *tmp = malloc((n ? n : 1) * sizeof *tmp);
  double *e = malloc((n ? n : 1) * sizeof *e);
  const api_pub_row *am = by_id(rows, n, "azure-mi300x-fp8-16384x16384x16384");
  const api_pub_row *ah = by_id(rows, n, "azure-h100-fp8-16384x16384x16384");
  if (!tmp || !e) goto out;
  printf("  the same terms fitted jointly (h-amd10; fractions on the fit rows the rule does not "
         "match, s on those it does; NOT shipped):\n");
  for (int rule = 0; rule < R__N; rule++) {
    int nf = 0, nf4 = 0, c3 = 0, c4 = 0;
    double s4 = joint_s(rows, n, base, nbase, "cdna4", rule, tmp, fits4, &nf4, e, &c4);
    double s3 = joint_s(rows, n, base, nbase, "cdna3", rule, tmp, fits, &nf, e, &c3);
    double b3 = NAN;
    for (int f = 0; f < nf; f++)
      if (!strcmp(fits[f].arch, "cdna3"))
        for (int k = 0; k < fits[f].calib.n; k++)
          if (!strcmp(fits[f].calib.names[k], "gemm_eff_bf16")) b3 = fits[f].calib.values[k];
    printf("  %-9s s: cdna3 %+.3f (%d fit rows; bf16 fraction %.3f without them) cdna4 %+.3f (%d "
           "fit rows);",
           rname[rule], s3, c3, b3, s4, c4);
    per_source(rows, n, fits, nf, rule, "cdna3", e);
    per_source(rows, n, fits4, nf4, rule, "cdna4", e);
    static const char *const hws[] = {"mi300x", "mi325x"};
    for (int h = 0; h < 2; h++) {
      int cnt = 0;
      for (size_t i = 0; i < n; i++)
        if (!rows[i].fit && !strcmp(rows[i].hw.name, hws[h]))
          e[cnt++] = fabs(pred_joint(&rows[i], fits, nf, rule, s3) / rows[i].tflops - 1);
      printf("%s%s check %.1f%% (n=%d)", h ? " " : "\n      ", hws[h], med(e, cnt) * 100, cnt);
    }
    if (am && ah)
      printf("; Azure MI300X/H100 fp8 16384^3 %+.1f%%",
             (pred_joint(am, fits, nf, rule, s3) / pred(M, ah) / (am->tflops / ah->tflops) - 1) *
                 100);
    printf("\n");
  }
out:
  free(tmp);
  free(e);
}

void pg_cdna3_report(const api_pub_row *rows, size_t n, pg_pred_fn pred, const void *M,
                     const api_arch_fit *fits, int nfits) {
  double *e = malloc((n ? n : 1) * sizeof *e);
  if (!e) return;
  breakdown(rows, n, pred, M);
  const api_pub_row *am = by_id(rows, n, "azure-mi300x-fp8-16384x16384x16384");
  const api_pub_row *ah = by_id(rows, n, "azure-h100-fp8-16384x16384x16384");
  printf("large-operand terms, looked for after the misses were known (NOT shipped):\n");
  for (int rule = 0; rule < R__N; rule++) {
    int c3 = 0, c4 = 0;
    double s4 = fit_s(rows, n, pred, M, "cdna4", rule, e, &c4);
    double s3 = fit_s(rows, n, pred, M, "cdna3", rule, e, &c3);
    printf("  %-9s s: cdna3 %+.3f (%d fit rows) cdna4 %+.3f (%d fit rows);", rname[rule], s3, c3,
           s4, c4);
    static const char *const hws[] = {"mi300x", "mi325x"};
    for (int h = 0; h < 2; h++) {
      int cnt = 0;
      for (size_t i = 0; i < n; i++)
        if (!rows[i].fit && !strcmp(rows[i].hw.name, hws[h]))
          e[cnt++] = fabs(pred_s(&rows[i], pred, M, rule, s3) / rows[i].tflops - 1);
      printf(" %s check %.1f%% (n=%d)", hws[h], med(e, cnt) * 100, cnt);
    }
    if (am && ah)
      printf("; Azure MI300X/H100 fp8 16384^3 %+.1f%% (without: %+.1f%%)",
             (pred_s(am, pred, M, rule, s3) / pred(M, ah) / (am->tflops / ah->tflops) - 1) * 100,
             (pred(M, am) / pred(M, ah) / (am->tflops / ah->tflops) - 1) * 100);
    printf("\n");
  }
  joint_report(rows, n, fits, nfits, pred, M);
  free(e);
}
