/* calibrate_published.c: calibration per architecture from published
 * measurements (data/measurements/published/gemm.json rows: id, source,
 * setup {hardware, m, n, k, batch, dtype, layout, clock_mhz}, metric
 * "tflops", value, role "fit"|"check").
 *
 * Each row is priced on its accelerator's datasheet descriptor, at the
 * clock the source says the GEMM ran at where it says so (setup.clock_mhz
 * becomes the sustained clock: the tensor rate scales with it, gemm.c), and
 * the rows of one architecture (the descriptor's "arch") fit that arch's
 * achievable fraction of the clock-scaled peak per dtype
 * (cost_calibrate_arch). Only "fit" rows are used unless the caller asks
 * for every row (the shipped calibration may; its error band comes from
 * the fit-only calibration scored on the check rows, bench/published_gemm).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"

#define PUB_MAX_ROWS 4096

int api_published_is(const char *text, size_t len) {
  cJSON *doc = text ? cJSON_ParseWithLength(text, len) : NULL;
  const cJSON *r0 = cJSON_IsArray(doc) ? doc->child : NULL;
  int is = cJSON_IsObject(r0) && cJSON_GetObjectItemCaseSensitive(r0, "setup") &&
           cJSON_GetObjectItemCaseSensitive(r0, "source") &&
           cJSON_GetObjectItemCaseSensitive(r0, "role");
  cJSON_Delete(doc);
  return is;
}

static int bad(svc_err *err, const char *label, int i, const char *field, const char *msg) {
  char f[96];
  snprintf(f, sizeof f, "[%d].%s", i, field);
  return svc_err_set(err, SVC_BAD_FIELD, f, "%s: row %d: %s %s", label, i, field, msg);
}

/* A positive integer dimension of at most 2^31. */
static int dim(const cJSON *setup, const char *k, int64_t *out) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(setup, k);
  if (!cJSON_IsNumber(v) || !(v->valuedouble >= 1 && v->valuedouble <= 2147483648.0) ||
      v->valuedouble != floor(v->valuedouble))
    return -1;
  *out = (int64_t)v->valuedouble;
  return 0;
}

/* setup.load: how long the source's harness keeps the GPU under
 * back-to-back GEMMs. "sustained" (seconds: Azure's 10,000 warm-up and
 * 1,000 timed calls; gau-nernst's nvbench samples of >= 10 ms each) runs
 * where the board's power cap binds, so the row is priced at the
 * descriptor's clock under load (hw->load_clock_hz, the figure the step
 * models use: flashinfer PR #2899 on the B200, 1965 -> ~1580 MHz at
 * ~1000 W once kernels run back to back, throttling from ~45 ms on;
 * data/measurements/h200-sustained on the H200), as the step model does
 * (step_transformer.c, load_derate), for every dtype: the board's power
 * model (costmodel/gemm_arch.c) gives a dtype at full matrix rate the
 * same watts per clock as bf16 within 3 % (CDNA3's fit on AMD's clock-
 * stated rows: k_fp8 x F_fp8 / k_bf16 x F_bf16 = 0.975), and on the H200
 * the fp8 rows of a short harness (mamf) and of a sustained one (Azure)
 * differ by ~14 %, as its bf16 load clock (1500 of 1830 MHz) says
 * (GEMM.md, "fp8 under sustained load"). A clock the row states wins.
 * "short" or null: the default clock. Returns -1 on a bad value. */
static int harness_load(const cJSON *setup, int has_clock, api_pub_row *r) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(setup, "load");
  if (!v || cJSON_IsNull(v)) return 0;
  const char *s = cJSON_GetStringValue(v);
  if (!s || (strcmp(s, "sustained") && strcmp(s, "short"))) return -1;
  if (strcmp(s, "sustained") || has_clock || !(r->hw.load_clock_hz > 0)) return 0;
  double ref = r->hw.peak_clock_hz > 0 ? r->hw.peak_clock_hz : r->hw.clock_hz;
  r->hw.sustained_clock_hz = fmin(r->hw.load_clock_hz, ref);
  if (!(r->hw.peak_clock_hz > 0)) r->hw.peak_clock_hz = r->hw.clock_hz;
  return 0;
}

/* One row into r; 1 when the row is not a GEMM throughput (skipped),
 * 0 when loaded, negative on a bad row. */
static int one_row(api_ctx *ctx, const cJSON *it, int i, const char *label, api_pub_row *r,
                   svc_err *err) {
  const cJSON *setup = cJSON_GetObjectItemCaseSensitive(it, "setup");
  const cJSON *src = cJSON_GetObjectItemCaseSensitive(it, "source");
  const char *id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "id"));
  const char *metric = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "metric"));
  const char *role = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "role"));
  const char *url = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(src, "url"));
  const char *op = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(setup, "op"));
  const cJSON *val = cJSON_GetObjectItemCaseSensitive(it, "value");
  memset(r, 0, sizeof *r);
  if (!cJSON_IsObject(it)) return bad(err, label, i, "row", "is not an object");
  if (!id || !*id || strlen(id) >= sizeof r->id) return bad(err, label, i, "id", "is missing");
  if (!role || (strcmp(role, "fit") && strcmp(role, "check")))
    return bad(err, label, i, "role", "must be \"fit\" or \"check\"");
  if (!url || strlen(url) >= sizeof r->url) return bad(err, label, i, "source.url", "is missing");
  if (!cJSON_IsObject(setup)) return bad(err, label, i, "setup", "is not an object");
  if (!metric || strcmp(metric, "tflops") || (op && strcmp(op, "gemm"))) return 1;
  if (!cJSON_IsNumber(val) || !(val->valuedouble > 0 && val->valuedouble < 1e6))
    return bad(err, label, i, "value", "must be a TFLOP/s figure in (0, 1e6)");
  snprintf(r->id, sizeof r->id, "%s", id);
  snprintf(r->url, sizeof r->url, "%s", url);
  r->fit = !strcmp(role, "fit");
  const char *hw = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(setup, "hardware"));
  if (!hw) return bad(err, label, i, "setup.hardware", "is missing");
  if (api_hw_lookup(ctx, hw, 0, &r->hw, err))
    return bad(err, label, i, "setup.hardware", "names no accelerator of the catalog");
  cost_gemm_op *g = &r->s.u.gemm;
  if (dim(setup, "m", &g->m) || dim(setup, "n", &g->n) || dim(setup, "k", &g->k))
    return bad(err, label, i, "setup.m/n/k", "must be integers in [1, 2^31]");
  const cJSON *b = cJSON_GetObjectItemCaseSensitive(setup, "batch");
  g->batch = 1;
  if (b && !cJSON_IsNull(b) && dim(setup, "batch", &g->batch))
    return bad(err, label, i, "setup.batch", "must be an integer in [1, 2^31]");
  const char *dt = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(setup, "dtype"));
  if (!dt || (g->dtype = cost_dtype_parse(dt)) < 0)
    return bad(err, label, i, "setup.dtype", "is not a known dtype");
  const char *lay = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(setup, "layout"));
  snprintf(g->layout, sizeof g->layout, "%s", lay && strlen(lay) == 2 ? lay : "nn");
  const char *cm = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(setup, "c_major"));
  if (cm && strcmp(cm, "row") && strcmp(cm, "col"))
    return bad(err, label, i, "setup.c_major", "must be \"row\" or \"col\"");
  if (cm && !strcmp(cm, "col")) {
    /* A column-major C[M,N] (BLAS, hipblaslt-bench, cuBLASLt) is the
     * row-major C^T[N,M] = B^T A^T: M and N swap, B^T becomes the first
     * operand and A^T the second, each with its storage letter flipped. */
    int64_t t = g->m;
    char la = g->layout[0], lb = g->layout[1];
    g->m = g->n;
    g->n = t;
    g->layout[0] = lb == 'n' ? 't' : 'n';
    g->layout[1] = la == 'n' ? 't' : 'n';
  }
  const cJSON *clk = cJSON_GetObjectItemCaseSensitive(setup, "clock_mhz");
  if (clk && !cJSON_IsNull(clk)) {
    if (!cJSON_IsNumber(clk) ||
        !(clk->valuedouble >= API_CLOCK_MIN_MHZ && clk->valuedouble <= API_CLOCK_MAX_MHZ)) {
      double v = cJSON_IsNumber(clk) ? clk->valuedouble : NAN;
      return bad(err, label, i, "setup.clock_mhz",
                 v * 1e3 >= API_CLOCK_MIN_MHZ && v * 1e3 <= API_CLOCK_MAX_MHZ
                     ? "is in MHz, the figure looks like GHz (a clock lies in [100, 5000] MHz)"
                     : "must be null or in [100, 5000] MHz");
    }
    /* The clock the GEMM ran at (measured by the source): the sustained
     * clock of this row. */
    r->hw.sustained_clock_hz = clk->valuedouble * 1e6;
    if (!(r->hw.peak_clock_hz > 0)) r->hw.peak_clock_hz = r->hw.clock_hz;
  }
  int rc = harness_load(setup, clk && !cJSON_IsNull(clk), r);
  if (rc) return bad(err, label, i, "setup.load", "must be null, \"sustained\" or \"short\"");
  /* setup.timing: "per_call" when the source times one call at a time
   * with the GPU idle before it (an event or host timer around a single
   * eager op after a synchronize): the launch is in each figure, so the
   * GPU's share is the time less API_PUB_CALL_MS (kept >= 10 % of it);
   * "loop" or null: calls back to back, the launch hidden. */
  const char *tm = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(setup, "timing"));
  const cJSON *tmv = cJSON_GetObjectItemCaseSensitive(setup, "timing");
  if (tmv && !cJSON_IsNull(tmv) && (!tm || (strcmp(tm, "per_call") && strcmp(tm, "loop"))))
    return bad(err, label, i, "setup.timing", "must be null, \"per_call\" or \"loop\"");
  r->tflops = val->valuedouble;
  r->s.kind = COST_OP_GEMM;
  double ms = 2.0 * (double)g->m * g->n * g->k * g->batch / (r->tflops * 1e12) * 1e3;
  r->call_ms = tm && !strcmp(tm, "per_call") ? fmin(API_PUB_CALL_MS, 0.9 * ms) : 0;
  r->s.ms = ms - r->call_ms;
  return 0;
}

int api_published_rows(api_ctx *ctx, const char *text, size_t len, const char *label,
                       api_pub_row **rows, size_t *n, svc_err *err) {
  cJSON *doc = cJSON_ParseWithLength(text, len);
  api_pub_row *out = NULL;
  size_t m = 0, cap;
  int rc = 0, i = 0;
  *rows = NULL;
  *n = 0;
  if (!cJSON_IsArray(doc)) {
    rc = svc_err_set(err, SVC_BAD_JSON, "", "%s: not a JSON array of published rows", label);
    goto cleanup;
  }
  cap = (size_t)cJSON_GetArraySize(doc);
  if (cap > PUB_MAX_ROWS) {
    rc = svc_err_set(err, SVC_BAD_FIELD, "", "%s: %zu rows, at most %d", label, cap, PUB_MAX_ROWS);
    goto cleanup;
  }
  if (!(out = calloc(cap ? cap : 1, sizeof *out))) {
    rc = svc_err_set(err, SVC_NOMEM, "", NULL);
    goto cleanup;
  }
  const cJSON *it;
  cJSON_ArrayForEach(it, doc) {
    int k = one_row(ctx, it, i++, label, &out[m], err);
    if (k < 0) {
      rc = k;
      goto cleanup;
    }
    if (k == 0) m++;
  }
  *rows = out;
  *n = m;
  out = NULL;
cleanup:
  free(out);
  cJSON_Delete(doc);
  return rc;
}

int api_published_fit(const api_pub_row *rows, size_t n, int all_rows, const char *only_arch,
                      api_arch_fit *fits, int max_fits, int *nfits) {
  cost_arch_row *sel = malloc((n ? n : 1) * sizeof *sel);
  *nfits = 0;
  if (!sel) return -SVC_NOMEM;
  for (size_t i = 0; i < n; i++) {
    const char *arch = rows[i].hw.arch;
    int seen = 0;
    if ((!all_rows && !rows[i].fit) || (only_arch && strcmp(only_arch, arch))) continue;
    for (int f = 0; f < *nfits; f++) seen |= !strcmp(fits[f].arch, arch);
    if (seen || *nfits >= max_fits) continue;
    size_t m = 0;
    api_arch_fit *F = &fits[*nfits];
    memset(F, 0, sizeof *F);
    snprintf(F->arch, sizeof F->arch, "%s", arch);
    for (size_t j = i; j < n; j++) {
      if ((!all_rows && !rows[j].fit) || strcmp(rows[j].hw.arch, arch)) continue;
      sel[m].hw = rows[j].hw;
      sel[m].s = rows[j].s;
      m++;
      /* The sources this calibration rests on: the bench refuses to score
       * any row of them. */
      int known = 0;
      for (int s = 0; s < F->n_sources; s++) known |= !strcmp(F->sources[s], rows[j].url);
      if (!known && F->n_sources < API_FIT_MAX_SOURCES)
        snprintf(F->sources[F->n_sources++], sizeof F->sources[0], "%s", rows[j].url);
    }
    if (cost_calibrate_arch(sel, m, &F->calib, &F->rep) == 0) (*nfits)++;
  }
  free(sel);
  return 0;
}

/* The descriptor row r is priced on under the fits: its arch's, with the
 * parameters that fit lacks taken from its fallback's (cost_calib_fill). */
void api_published_apply(const api_pub_row *r, const api_arch_fit *fits, int nfits, cost_hw *hw) {
  const cost_calib *own = NULL, *base = NULL;
  const char *fb = cost_arch_fallback(r->hw.arch);
  *hw = r->hw;
  for (int f = 0; f < nfits; f++) {
    if (fb && !strcmp(fits[f].arch, fb)) base = &fits[f].calib;
    if (!strcmp(fits[f].arch, r->hw.arch)) own = &fits[f].calib;
  }
  if (own) {
    hw->calib = *own;
    cost_calib_fill(&hw->calib, base);
  } else if (base)
    hw->calib = *base;
}

int api_published_fitted_source(const api_arch_fit *fits, int nfits, const char *url) {
  for (int f = 0; f < nfits; f++)
    for (int s = 0; s < fits[f].n_sources; s++)
      if (!strcmp(fits[f].sources[s], url)) return 1;
  return 0;
}

static cJSON *fit_json(const api_arch_fit *F, int version) {
  cJSON *o = cJSON_CreateObject(), *p, *s;
  cJSON_AddStringToObject(o, "arch", F->arch);
  if (version) cJSON_AddNumberToObject(o, "version", version);
  cJSON_AddNumberToObject(o, "rows", F->rep.n_rows);
  cJSON_AddNumberToObject(o, "median_error_before", F->rep.median_before);
  cJSON_AddNumberToObject(o, "median_error_after", F->rep.median_after);
  p = cJSON_AddObjectToObject(o, "params");
  for (int i = 0; i < F->calib.n; i++)
    cJSON_AddNumberToObject(p, F->calib.names[i], F->calib.values[i]);
  s = cJSON_AddArrayToObject(o, "sources");
  for (int i = 0; i < F->n_sources; i++) cJSON_AddItemToArray(s, cJSON_CreateString(F->sources[i]));
  return o;
}

int api_calibrate_published(api_ctx *ctx, const char *hwname, int all_rows, size_t n,
                            const char *const *texts, const size_t *lens, const char *const *labels,
                            char **out, svc_err *err) {
  api_pub_row *all = NULL;
  api_arch_fit *fits = NULL;
  size_t total = 0;
  int nfits = 0, rc = 0;
  cost_hw hw;
  cJSON *doc = cJSON_CreateObject(), *arr, *files;
  *out = NULL;
  if (hwname && (rc = api_hw_lookup(ctx, hwname, 0, &hw, err))) goto cleanup;
  files = cJSON_AddArrayToObject(doc, "files");
  for (size_t i = 0; i < n; i++) {
    api_pub_row *r = NULL;
    size_t k = 0;
    if (!api_published_is(texts[i], lens[i])) {
      rc = svc_err_set(err, SVC_BAD_FIELD, "files",
                       "%s is not a published-measurement file: published rows and other "
                       "measurement files are calibrated apart",
                       labels[i]);
      goto cleanup;
    }
    if ((rc = api_published_rows(ctx, texts[i], lens[i], labels[i], &r, &k, err))) goto cleanup;
    api_pub_row *g = realloc(all, (total + k + 1) * sizeof *g);
    if (!g) {
      free(r);
      rc = svc_err_set(err, SVC_NOMEM, "", NULL);
      goto cleanup;
    }
    all = g;
    if (k) memcpy(all + total, r, k * sizeof *r);
    total += k;
    free(r);
    cJSON *f = cJSON_CreateObject();
    cJSON_AddStringToObject(f, "file", labels[i]);
    cJSON_AddNumberToObject(f, "gemm_rows", (double)k);
    cJSON_AddItemToArray(files, f);
  }
  if (!(fits = calloc(API_FIT_MAX_ARCH, sizeof *fits))) {
    rc = svc_err_set(err, SVC_NOMEM, "", NULL);
    goto cleanup;
  }
  if ((rc = api_published_fit(all, total, all_rows, hwname ? hw.arch : NULL, fits, API_FIT_MAX_ARCH,
                              &nfits)))
    goto cleanup;
  if (nfits == 0) {
    rc = svc_err_set(
        err, SVC_BAD_FIELD, "files", "no %s row of the files is a GEMM the model can price%s%s",
        all_rows ? "" : "\"fit\"", hwname ? " on architecture " : "", hwname ? hw.arch : "");
    goto cleanup;
  }
  cJSON_AddStringToObject(doc, "rows_used", all_rows ? "all" : "fit");
  arr = cJSON_AddArrayToObject(doc, "architectures");
  for (int f = 0; f < nfits; f++) {
    cJSON *one = fit_json(&fits[f], 0);
    char *rep = api_print(one);
    int version = 0;
    rc = rep ? api_arch_calib_store(ctx, fits[f].arch, &fits[f].calib, rep, &version, err)
             : svc_err_set(err, SVC_NOMEM, "", NULL);
    free(rep);
    if (rc) {
      cJSON_Delete(one);
      goto cleanup;
    }
    cJSON_AddNumberToObject(one, "version", version);
    cJSON_AddItemToArray(arr, one);
  }
  if (!(*out = api_print(doc))) rc = svc_err_set(err, SVC_NOMEM, "", NULL);
cleanup:
  free(all);
  free(fits);
  cJSON_Delete(doc);
  return rc;
}
