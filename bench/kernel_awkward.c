/* bench/kernel_awkward: the kernel selector and the GEMM time model on the
 * production-like awkward GEMMs of issue 25 (bench/awkward_shapes.py: DLRM
 * layers' forward nt / dgrad nn / wgrad tn GEMMs, K or N not a multiple of
 * 16, M <= 64, N = 1), swept on an H200 into data/measurements/h200-awkward/:
 *   fit_kernel_*.json, fit_gemm.json     the fitting half (in-sample, CV)
 *   blind_kernel_*.json, blind_gemm.json the blind half, scored once
 *   refit_kernel_16bit.json              the fitting half again, timed as the
 *                                        blind half (backlog_us), after it
 * Selection: per set and dtype, top-1 efficiency (best measured / measured
 * of the chosen config), geo-mean and worst, and Kendall tau per shape,
 * for the shipped model. GEMM time: cost_gemm on the cuBLAS rows with the
 * H200 calibration fitted on data/measurements/h200 (as
 * bench/costmodel_accuracy's held-out column), median / p90 of
 * |pred/meas - 1| over all rows and over the unaligned ones (K or N not a
 * multiple of 8, the issue's class).
 * Usage: kernel_awkward [--fit | --fit-all [--set N] [--refam | --refam-awk]] [--predict FILE]
 *                       [--picks FILE]
 *                       [--verbose] [--configs] [--splits N] [--jobs DIR] [--hw NAME]
 *                       [--blind-dir DIR] [--gemm-rows] [source_dir]
 *   --fit      CV-choose and fit the awkward-shape terms on the fitting data
 *              (--verbose: also every CV-held-out shape under 0.85, chosen
 *              against best; --configs: every config's time, measured and
 *              predicted, instead; --splits: CV splits, 6 by default)
 *   --fit-all  the same over every H200 awkward sweep now fitting data
 *              (h200-awkward refit + blind, h200-awkward2..7 blind), with a
 *              leave-one-set-out CV over those seven sets beside the 2-fold
 *              one (fifth round; seventh with sets 3 and 4; eighth with 5;
 *              tenth with 6 and 7); --set N: only the eighth round's set and
 *              set N, N fitted at the end; --refam: each fit scored with the
 *              2-byte N-unaligned family corrections refitted under its own
 *              terms on kernel_select's family set (tenth round); AWK_EPI
 *              sets the grid value of kernel_epi_sc (set 17); --refam-awk:
 *              the 2-byte families with a scalar operand refitted on that
 *              set plus the fit's own awkward training rows (eleventh
 *              round; AWK_REFAM_BONLY: only those with a scalar B); the
 *              CV detail lines show the table each shape was scored with;
 *              AWK_REG_OCC: every fold's kernel_reg_occ (twelfth round:
 *              blocks per SM from the estimate times it; a compile-data
 *              constant, not fitted); AWK_SC_LINES / AWK_SC_REFETCH:
 *              every fold's kernel_sc_lines / kernel_sc_refetch (thirteenth
 *              round: the L1 lines of co-resident scalar-load chains, held
 *              at a grid value)
 *   --predict  write the picks and predicted times for the blind set
 * Each committed predictions file (round 1's, round 2's, round 4's
 * predictions_v2.json) is scored on its blind sweep once that exists;
 * --picks FILE scores another such file (relative to source_dir) on the
 * first blind half.
 *   --hw NAME  the accelerator the model prices (h200 by default: the H200
 *              sweeps above and the calibration fitted on
 *              data/measurements/h200). Another catalog descriptor is
 *              priced as cdplan resolves it (api_hw_lookup: its own
 *              calibration, else its architecture's shipped one, e.g.
 *              arch-hopper for h100-sxm); the H200 sweeps are not scored
 *              with it, only --predict and --blind-dir.
 *   --blind-dir DIR  (relative to source_dir) a blind sweep of the same
 *              job files on that accelerator: its blind_kernel_*.json
 *              scored under the current model, its committed picks
 *              (DIR/predictions.json, DIR/predictions_v2.json) on the
 *              bf16 + fp16 rows, and its blind_gemm.json's GEMM times;
 *              with --configs also every measured config of every shape,
 *              measured and predicted (to 1 ns), family factor, registers.
 *   AWK_KP=name=value[,name=value...]  any kernel term at that value, set
 *              in the calibration of this run (twenty-third round's grid).
 *   The third blind set (h200-awkward3/) gets the same rows ("r3") once its
 *   sweep is there, its predictions.json (round 4's model) and
 *   predictions_v2.json (round 5's) each scored; "backlog" rows score cost_gemm against the kernel
 *   sweeps' cuBLAS times (cublas_ms, timed after the 100 us backlog).
 *   The fourth (h200-awkward4/: 16-bit kernel sweep, bf16/fp16/tf32 gemm_sweep) gets "r4" rows
 *   the same way once its blind_*.json are there; its predictions.json is "r4 picks".
 *   The fifth (h200-awkward5/, swept as the fourth) gets "r5" rows, its predictions.json
 *   (the seventh round's model) "r5 picks"; "gemmbl" rows score the backlog-timed
 *   gemm_sweep (blind_gemmbl.json) of the fourth and fifth sets.
 *   The sixth (h200-awkward6/, swept as the fifth) gets "r6" rows and "r6 picks"; its
 *   GEMM-time score of record is "r6 gemmbl" (the backlog-timed copy). The seventh
 *   (h200-awkward7/, the same model's picks) gets "r7" rows, "r7 gemmbl" of record.
 *   The eighth (h200-awkward8/, the ninth round's cost_gemm, the same kernel model) gets
 *   "r8" rows and "r8 picks" once its blind_*.json are there, "r8 gemmbl" of record.
 *   The ninth (h200-awkward9/, the same model, drawn at fresh batches so that 7 of its
 *   20 shapes are bf16 align1 small-grid split-K shapes) gets "r9" rows likewise, the
 *   tenth (h200-awkward10/, fresh batches again, drawn after rounds 10-11) "r10" rows.
 *   --gemm-rows  instead of the summary: every cuBLAS row of every set (gemm_sweep and
 *              backlog-timed), one line each with layout, alignment class, M N K, measured,
 *              predicted, its launch floor and GPU part, the kernel priced and the error;
 *              with --hw h100-sxm, the same for every h100-awkwardN set (the rows
 *              data/measurements/h100-floor/floor_cv.py chooses the H100's floor on).
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/api_hw.h"
#include "bench/bench_cli.h"
#include "bench/bench_json.h"
#include "bench/costmodel_load.h"
#include "bench/kernel_sweep.h"

/* Configs whose median is over this multiple of their fastest iteration
 * are left out of the fit (timing disturbed by the host: README there). */
#define AWK_SPREAD 1.3

static const char *const kinds[] = {"kernel_16bit", "kernel_tf32", "kernel_fp8"};

static int load_gemm(const char *path, cost_sample **out, size_t *n) {
  size_t len = 0, cap;
  char *text = cm_slurp(path, &len);
  *out = NULL;
  *n = 0;
  if (!text) return cm_exists(path) ? -1 : 0;
  cJSON *doc = cJSON_ParseWithLength(text, len);
  free(text);
  const cJSON *rows = cJSON_GetObjectItemCaseSensitive(doc, "rows");
  cap = (size_t)cJSON_GetArraySize(rows);
  *out = calloc(cap ? cap : 1, sizeof **out);
  if (!*out) {
    cJSON_Delete(doc);
    return -1;
  }
  for (const cJSON *r = rows ? rows->child : NULL; r; r = r->next) {
    cost_sample *s = &(*out)[*n];
    const char *dt = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "dtype"));
    const char *lay = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "layout"));
    const cJSON *ms = cJSON_GetObjectItemCaseSensitive(r, "ms");
    int d = dt ? cost_dtype_parse(dt) : -1;
    if (d < 0 || !cJSON_IsNumber(ms)) continue;
    s->kind = COST_OP_GEMM;
    s->u.gemm.m = (int64_t)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(r, "m"));
    s->u.gemm.n = (int64_t)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(r, "n"));
    s->u.gemm.k = (int64_t)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(r, "k"));
    s->u.gemm.dtype = d;
    s->u.gemm.batch = 1;
    snprintf(s->u.gemm.layout, sizeof s->u.gemm.layout, "%s", lay && strlen(lay) == 2 ? lay : "nn");
    s->ms = ms->valuedouble;
    (*n)++;
  }
  cJSON_Delete(doc);
  return 0;
}

static int cmpd(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double pct(double *v, size_t n, double q) {
  if (!n) return NAN;
  qsort(v, n, sizeof *v, cmpd);
  double pos = q * (double)(n - 1);
  size_t i = (size_t)pos;
  return i + 1 < n ? v[i] + (pos - (double)i) * (v[i + 1] - v[i]) : v[i];
}

static int unaligned8(const cost_gemm_op *g) { return g->k % 8 != 0 || g->n % 8 != 0; }

/* GEMM time errors of cal on rows; dt < 0: every dtype; un: only unaligned. */
static void gemm_err(const cost_hw *cal, const cost_sample *s, size_t n, int dt, int un,
                     const char *name, int verbose) {
  double *e = malloc((n ? n : 1) * sizeof *e);
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    cost_result r;
    if ((dt >= 0 && s[i].u.gemm.dtype != dt) || (un && !unaligned8(&s[i].u.gemm))) continue;
    if (cost_sample_predict(cal, &s[i], &r)) continue;
    e[k++] = fabs(r.ms / s[i].ms - 1.0);
    if (verbose)
      printf("  gemm %-5s %5lld %5lld %5lld %s meas %.4f pred %.4f  %+.0f%%\n",
             cost_dtype_name((cost_dtype)s[i].u.gemm.dtype), (long long)s[i].u.gemm.m,
             (long long)s[i].u.gemm.n, (long long)s[i].u.gemm.k, s[i].u.gemm.layout, s[i].ms, r.ms,
             (r.ms / s[i].ms - 1) * 100);
  }
  if (k) {
    double med = pct(e, k, 0.5), p90 = pct(e, k, 0.9);
    printf("%-22s %4zu  median %5.1f%%  p90 %5.1f%%\n", name, k, med * 100, p90 * 100);
  }
  free(e);
}

static void sel_row(const cost_hw *hw, const ks_shape *sh, int n, int dt, const char *name) {
  ks_shape *sel = calloc((size_t)(n ? n : 1), sizeof *sel);
  int k = 0;
  ks_score s = {0};
  for (int i = 0; i < n; i++)
    if (dt < 0 ? (sh[i].p.dtype == COST_DT_BF16 || sh[i].p.dtype == COST_DT_FP16)
               : sh[i].p.dtype == dt)
      sel[k++] = sh[i];
  if (k) {
    ks_evaluate(hw, NULL, NULL, -1, sel, k, &s);
    printf("%-22s %4d  top1 %.3f worst %.3f tau %.3f (min %.3f)\n", name, s.n, s.eff_geo, s.eff_min,
           s.tau_mean, s.tau_min);
  }
  free(sel);
}

/* SRC/REL, or REL where it is absolute (--jobs and --blind-dir take either:
 * a path relative to the source tree or an absolute one). */
static void src_path(char *buf, size_t cap, const char *src, const char *rel) {
  int n = rel[0] == '/' ? snprintf(buf, cap, "%s", rel) : snprintf(buf, cap, "%s/%s", src, rel);
  if (n < 0 || (size_t)n >= cap) buf[0] = '\0'; /* too long: no such file */
}

/* DIR/NAME under src as src_path places it. */
static void under(char *buf, size_t cap, const char *src, const char *dir, const char *name) {
  char rel[1024];
  int n = snprintf(rel, sizeof rel, "%s/%s", dir, name);
  if (n < 0 || (size_t)n >= sizeof rel) rel[0] = '\0';
  src_path(buf, cap, src, rel);
}

/* The picks of a predictions file (written by --predict and committed
 * before its sweep ran) scored on the measured shapes sh (bf16 + fp16):
 * per shape, among the measured configs, the one the file ranks fastest,
 * and Kendall tau of the file's times against the measured ones -- the
 * blind score of the model that wrote the file, whatever the code is now. */
static void picks_row(const char *src, const char *rel, const ks_shape *sh, int n,
                      const char *name) {
  char path[1024];
  size_t len = 0;
  src_path(path, sizeof path, src, rel);
  char *text = cm_slurp(path, &len);
  cJSON *doc = text ? cJSON_ParseWithLength(text, len) : NULL;
  const cJSON *sel = cJSON_GetObjectItemCaseSensitive(doc, "selection"), *e;
  double geo = 0, tau = 0, worst = INFINITY;
  int k = 0;
  free(text);
  for (int i = 0; i < n && sel; i++) {
    const ks_shape *x = &sh[i];
    double pred[KS_MAX_CFG], meas[KS_MAX_CFG], best = INFINITY, chosen = NAN, cp = INFINITY;
    int m = 0;
    if (x->p.dtype != COST_DT_BF16 && x->p.dtype != COST_DT_FP16) continue;
    cJSON_ArrayForEach(e, sel) {
      const char *lay = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "layout"));
      const char *dt = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "dtype"));
      if (bench_jnum(e, "m") == x->p.m && bench_jnum(e, "n") == x->p.n &&
          bench_jnum(e, "k") == x->p.k && lay &&
          !strcmp(lay, x->p.layout[0] ? x->p.layout : "nn") && dt &&
          cost_dtype_parse(dt) == x->p.dtype)
        break;
    }
    if (!e) continue;
    for (int j = 0; j < x->n; j++) {
      const cost_kcfg *c = &x->cfg[j];
      const cJSON *r;
      best = fmin(best, x->ms[j]);
      cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(e, "ranked")) {
        if (bench_jnum(r, "bm") == c->block_m && bench_jnum(r, "bn") == c->block_n &&
            bench_jnum(r, "bk") == c->block_k && bench_jnum(r, "warps") == c->num_warps &&
            bench_jnum(r, "stages") == c->num_stages &&
            bench_jnum(r, "split_k") == (c->split_k > 1 ? c->split_k : 1) &&
            isfinite(bench_jnum(r, "ms"))) {
          pred[m] = bench_jnum(r, "ms");
          meas[m++] = x->ms[j];
          if (pred[m - 1] < cp) {
            cp = pred[m - 1];
            chosen = x->ms[j];
          }
          break;
        }
      }
    }
    if (!m) continue;
    double eff = best / chosen;
    geo += log(eff);
    worst = fmin(worst, eff);
    tau += ks_kendall(pred, meas, m);
    k++;
  }
  cJSON_Delete(doc);
  if (k)
    printf("%-22s %4d  top1 %.3f worst %.3f tau %.3f  (committed picks: %s)\n", name, k,
           exp(geo / k), worst, tau / k, rel);
}

static int load_half(const char *src, const char *dir, const char *half, ks_shape **all,
                     int *n_all) {
  char path[1024];
  *all = NULL;
  *n_all = 0;
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
    ks_shape *s = NULL;
    int n = 0;
    char name[128];
    snprintf(name, sizeof name, "%s_%s.json", half, kinds[i]);
    under(path, sizeof path, src, dir, name);
    if (!cm_exists(path)) continue;
    if (ks_load(path, &s, &n)) return -1;
    ks_shape *g = realloc(*all, (size_t)(*n_all + n + 1) * sizeof *g);
    if (!g) return -1;
    memcpy(g + *n_all, s, (size_t)n * sizeof *s);
    *all = g;
    *n_all += n;
    free(s);
  }
  return 0;
}

/* The term sets the CV chooses among (issue 25 terms): the K-major scalar
 * B's register and per-element weights (nt, K % 16 != 0), split-K's
 * reduce and partial stores, small-M tiles. */
#define MAX_SET 12
static const int set_ids[][MAX_SET] = {
    {-1},
    {COST_KP_REG_SC_KB, -1},
    {COST_KP_REG_SC_KB, COST_KP_SC_KB, -1},
    {COST_KP_REG_SC_KB, COST_KP_SPILL_KB, -1},
    {COST_KP_REG_SC_KB, COST_KP_SC_KB, COST_KP_SPILL_KB, -1},
    {COST_KP_REG_SC_KB, COST_KP_SC_KB, COST_KP_SPILL_KB, COST_KP_SK_US, COST_KP_SK_EPI, -1},
    {COST_KP_REG_SC_KB, COST_KP_SC_KB, COST_KP_SPILL_KB, COST_KP_SK_US, COST_KP_SK_EPI,
     COST_KP_SMALLM, -1},
    {COST_KP_SK_US, COST_KP_SK_EPI, -1},
    {COST_KP_SMALLM, -1},
    {COST_KP_REG_SC_KB, COST_KP_SC_KB, COST_KP_SPILL_KB, COST_KP_SK_US, COST_KP_SK_EPI,
     COST_KP_LAT_KB, -1},
    {COST_KP_REG_SC_KB, COST_KP_SC_KB, COST_KP_SPILL_KB, COST_KP_SK_US, COST_KP_SK_EPI,
     COST_KP_ISSUE_KB, -1},
    {COST_KP_REG_SC_KB, COST_KP_SC_KB, COST_KP_SPILL_KB, COST_KP_SK_US, COST_KP_SK_EPI,
     COST_KP_LAT_KB, COST_KP_ISSUE_KB, -1},
    {COST_KP_LAT_KB, COST_KP_ISSUE_KB, COST_KP_SK_US, COST_KP_SK_EPI, -1},
    {COST_KP_REG_SC_KB, COST_KP_SC_KB, COST_KP_SPILL_KB, COST_KP_SK_US, COST_KP_SK_EPI,
     COST_KP_LAT_KB, COST_KP_ISSUE_KB, COST_KP_SMALLM, -1},
    {COST_KP_REG_SC_KB, COST_KP_SC_KB, COST_KP_SPILL_KB, COST_KP_SK_US, COST_KP_SK_EPI,
     COST_KP_LAT_KB, COST_KP_ISSUE_KB, COST_KP_ALIAS_CLK, -1},
    {COST_KP_REG_SC_KB, COST_KP_SC_KB, COST_KP_SPILL_KB, COST_KP_SK_US, COST_KP_SK_EPI,
     COST_KP_LAT_KB, COST_KP_ISSUE_KB, COST_KP_ALIAS_CLK, COST_KP_SK_NS, -1},
    {COST_KP_REG_SC_KB, COST_KP_SC_KB, COST_KP_SPILL_KB, COST_KP_SK_US, COST_KP_SK_EPI,
     COST_KP_LAT_KB, COST_KP_ISSUE_KB, COST_KP_ALIAS_CLK, COST_KP_SK_NS, COST_KP_SC_L1_KB, -1},
    {COST_KP_REG_SC_KB, COST_KP_SC_KB, COST_KP_SPILL_KB, COST_KP_SK_US, COST_KP_SK_EPI,
     COST_KP_LAT_KB, COST_KP_ISSUE_KB, COST_KP_ALIAS_CLK, COST_KP_SK_NS, COST_KP_SC_L1_KB,
     COST_KP_EPI_SC, -1}};
static const char *const set_names[] = {"none",
                                        "reg_sc_kb",
                                        "reg_sc_kb+sc_kb",
                                        "reg_sc_kb+spill_kb",
                                        "reg/sc/spill_kb",
                                        "reg/sc/spill_kb+splitk",
                                        "reg/sc/spill_kb+splitk+smallm",
                                        "splitk_us+epi",
                                        "smallm",
                                        "reg/sc/spill_kb+splitk+lat_kb",
                                        "reg/sc/spill_kb+splitk+issue_kb",
                                        "reg/sc/spill_kb+splitk+lat/issue_kb",
                                        "lat/issue_kb+splitk",
                                        "reg/sc/spill_kb+splitk+lat/issue_kb+smallm",
                                        "reg/sc/spill_kb+splitk+lat/issue_kb+alias",
                                        "reg/sc/spill_kb+splitk+lat/issue_kb+alias+sk_ns",
                                        "...+alias+sk_ns+sc_l1_kb",
                                        "...+sc_l1_kb+epi_sc"};
#define N_SETS ((int)(sizeof set_names / sizeof set_names[0]))
#define PREV_SET 16 /* the set shipped before the tenth round (eighth round) */
#define CV_SPLITS 6
static int cv_splits = CV_SPLITS; /* --splits N: more shuffled splits, a robustness check */

static int set_size(int s) {
  int k = 0;
  while (k < MAX_SET && set_ids[s][k] >= 0) k++;
  return k;
}

/* Fold per entry, one fold per shape (m, n, k, layout): a shape's bf16 and
 * fp16 rows fall in the same fold. */
static void shape_split(const ks_shape *sh, int n, int sp, int *which) {
  int *uid = calloc((size_t)n, sizeof(int)), *fu = calloc((size_t)n, sizeof(int)), nu = 0;
  for (int i = 0; i < n && uid && fu; i++) {
    int j = 0;
    while (j < i && (sh[j].p.m != sh[i].p.m || sh[j].p.n != sh[i].p.n || sh[j].p.k != sh[i].p.k ||
                     strcmp(sh[j].p.layout, sh[i].p.layout)))
      j++;
    uid[i] = j < i ? uid[j] : nu++;
  }
  if (uid && fu) {
    ks_split(nu, sp, fu);
    for (int i = 0; i < n; i++) which[i] = fu[uid[i]];
  }
  free(uid);
  free(fu);
}

/* The K-major scalar B's register weight and spill strength put a
 * threshold (which tiles spill) that a smooth log-time loss does not find:
 * they are chosen on a grid by the selection score (top-1 geo-mean + 0.5
 * tau) on the fitting shapes, the smallest change from the current values
 * among equal scores; the other terms of the set by ks_fit_subset.
 * FIT_PASSES alternations (grid, then the smooth terms): with one, the grid
 * was chosen while the smooth terms still sat at their priors, and a fold
 * could buy a small-M shape's pick with a threshold that spills the best
 * tile of the large-M ones (docs/kernels.md, "Fourth round"). */
#ifndef FIT_PASSES
#define FIT_PASSES 2
#endif

/* --refam: score each fit with the 2-byte families of a C whose N is not a
 * multiple of 16 (the ones the tenth round's term moves) refitted under its
 * own parameters on bench/kernel_select's family set (h200 + fit2/3/4 +
 * dtypes-fit sweeps; no awkward data), as kernel_select --fit prints them
 * for costmodel/kernel_family.c; the other entries stay the shipped ones.
 * Without it the shipped table is used, whose factors for those families
 * were fitted under one value of the term. */
#define AWK_MAX_FAM 512
static int refam = 0;
static ks_shape *famset = NULL;
static int n_famset = 0;

static int load_famset(const char *src) {
  static const char *const sets[] = {"h200", "h200-fit2", "h200-fit3", "h200-fit4",
                                     "h200-dtypes-fit"};
  for (int i = 0; i < 5; i++) {
    ks_shape *s = NULL;
    int k = 0;
    if (ks_load_set(src, sets[i], 0, &s, &k)) return -1;
    ks_shape *g = realloc(famset, (size_t)(n_famset + k + 1) * sizeof *g);
    if (!g) {
      free(s);
      return -1;
    }
    memcpy(g + n_famset, s, (size_t)k * sizeof *s);
    famset = g;
    n_famset += k;
    free(s);
  }
  return 0;
}

/* --refam-awk (eleventh round): the 2-byte families with an operand loaded
 * element by element are refitted on kernel_select's family set plus the
 * awkward rows the current fit is fitted on (awk_train: a CV fold's
 * training rows, or all of them for the shipped fit), under its terms. */
static const cost_kfamily *cur_fam = NULL; /* the table evaluate() last scored with */
static int n_cur_fam = 0;
static const ks_shape *awk_train = NULL;
static int n_awk_train = 0;
static ks_shape *famcat = NULL;

static void evaluate(const cost_hw *hw, const double *kp, const ks_shape *sh, int n, ks_score *sc) {
  if (refam == 2) {
    static cost_kfamily fit[AWK_MAX_FAM], fam[AWK_MAX_FAM];
    int nall = n_famset + n_awk_train, nfam, b_only = getenv("AWK_REFAM_BONLY") != NULL;
    ks_shape *g = realloc(famcat, (size_t)(nall + 1) * sizeof *g);
    if (!g) return;
    famcat = g;
    memcpy(famcat, famset, (size_t)n_famset * sizeof *famcat);
    if (n_awk_train) memcpy(famcat + n_famset, awk_train, (size_t)n_awk_train * sizeof *famcat);
    int nfit = ks_fit_families(hw, kp, famcat, nall, fit, AWK_MAX_FAM);
    const cost_kfamily *shipped = cost_kfamily_builtin(hw, &nfam);
    if (nfam > AWK_MAX_FAM) nfam = AWK_MAX_FAM;
    memcpy(fam, shipped, (size_t)nfam * sizeof *fam);
    for (int i = 0; i < nfam; i++)
      for (int j = 0; fam[i].elem_bytes == 2 && (fam[i].a_scalar || fam[i].b_scalar == 1) &&
                      !(b_only && !fam[i].b_scalar) && j < nfit;
           j++)
        if (fit[j].elem_bytes == 2 && fit[j].b_scalar == fam[i].b_scalar &&
            fit[j].a_scalar == fam[i].a_scalar && fit[j].block_m == fam[i].block_m &&
            fit[j].block_n == fam[i].block_n && fit[j].block_k == fam[i].block_k &&
            fit[j].num_warps == fam[i].num_warps)
          fam[i].log_factor = fit[j].log_factor;
    cur_fam = fam;
    n_cur_fam = nfam;
    ks_evaluate(hw, kp, fam, nfam, sh, n, sc);
    return;
  }
  cur_fam = NULL;
  if (!refam) {
    ks_evaluate(hw, kp, NULL, -1, sh, n, sc);
    return;
  }
  static cost_kfamily fit[AWK_MAX_FAM], fam[AWK_MAX_FAM];
  int nfit = ks_fit_families(hw, kp, famset, n_famset, fit, AWK_MAX_FAM), nfam;
  const cost_kfamily *shipped = cost_kfamily_builtin(hw, &nfam);
  if (nfam > AWK_MAX_FAM) nfam = AWK_MAX_FAM;
  memcpy(fam, shipped, (size_t)nfam * sizeof *fam);
  /* only the families the term moves: 2-byte, N not a multiple of 16 */
  for (int i = 0; i < nfam; i++)
    for (int j = 0; fam[i].elem_bytes == 2 && fam[i].b_scalar == 1 && j < nfit; j++)
      if (fit[j].elem_bytes == 2 && fit[j].b_scalar == 1 && fit[j].a_scalar == fam[i].a_scalar &&
          fit[j].block_m == fam[i].block_m && fit[j].block_n == fam[i].block_n &&
          fit[j].block_k == fam[i].block_k && fit[j].num_warps == fam[i].num_warps)
        fam[i].log_factor = fit[j].log_factor;
  cur_fam = fam;
  n_cur_fam = nfam;
  ks_evaluate(hw, kp, fam, nfam, sh, n, sc);
}

static double sel_score(const cost_hw *hw, const double *kp, const ks_shape *sh, int n) {
  ks_score sc = {0};
  evaluate(hw, kp, sh, n, &sc);
  return sc.eff_geo + 0.5 * sc.tau_mean;
}

static void grid_search(const cost_hw *hw, double *kp, const ks_shape *sh, int n) {
  static const double spills[] = {1, 3, 10, 30, 100};
  double best = sel_score(hw, kp, sh, n), br = kp[COST_KP_REG_SC_KB], bs = kp[COST_KP_SPILL_KB];
  for (int ri = 0; ri <= 20; ri++)
    for (int si = 0; si < 5; si++) {
      kp[COST_KP_REG_SC_KB] = 1.0 + 0.1 * ri;
      kp[COST_KP_SPILL_KB] = spills[si];
      double v = sel_score(hw, kp, sh, n);
      if (v > best + 1e-6) {
        best = v;
        br = kp[COST_KP_REG_SC_KB];
        bs = kp[COST_KP_SPILL_KB];
      }
    }
  kp[COST_KP_REG_SC_KB] = br;
  kp[COST_KP_SPILL_KB] = bs;
}

static void fit_set(const cost_hw *hw, double *kp, int ts, const ks_shape *sh, int n, int rounds) {
  int ids[MAX_SET], k = 0, grid = 0;
  for (int i = 0; i < set_size(ts); i++) {
    if (set_ids[ts][i] == COST_KP_ALIAS_CLK)
      kp[COST_KP_ALIAS_CLK] = 350.0; /* ~0.7 TB/s at 1.98 GHz: a first guess */
    if (set_ids[ts][i] == COST_KP_SK_NS)
      kp[COST_KP_SK_NS] = 150.0; /* an L2 hit on Hopper, ~100-150 ns: a first guess */
    /* L1 KiB beside shared memory: a step (floor) the smooth fit does not
     * move; AWK_L1 sets it for the grid of docs/kernels.md "Eighth round" */
    if (set_ids[ts][i] == COST_KP_SC_L1_KB)
      kp[COST_KP_SC_L1_KB] = getenv("AWK_L1") ? atof(getenv("AWK_L1")) : 32.0;
    /* element-by-element C stores (tenth round, not kept: shipped off): a
     * step the smooth fit does not find (it takes it to 0.9, where no pick
     * moves), so it is held at a grid value: AWK_EPI, else 0.2 warp stores
     * per clock per SM, the grid's choice (docs/kernels.md "Tenth round") */
    if (set_ids[ts][i] == COST_KP_EPI_SC)
      kp[COST_KP_EPI_SC] = getenv("AWK_EPI") ? atof(getenv("AWK_EPI")) : 0.2;
    if (set_ids[ts][i] == COST_KP_REG_SC_KB || set_ids[ts][i] == COST_KP_SPILL_KB)
      grid = 1;
    else if (set_ids[ts][i] == COST_KP_EPI_SC)
      continue;
    else
      ids[k++] = set_ids[ts][i];
  }
  for (int pass = 0; pass < (grid ? FIT_PASSES : 1); pass++) {
    if (grid) grid_search(hw, kp, sh, n);
    if (k) ks_fit_subset(hw, kp, ids, k, sh, n, rounds);
  }
}

/* The fit starts every term from its physical first guess, not from the
 * shipped (fitted) default: a K-major scalar B costs what an N-major one
 * does (1, 1, 1), the reduce kernel 3 us, partial stores at the C store's
 * cost per byte, small-M tiles BM/64 + 0.1. */
static void prior(const cost_hw *hw, double *kp) {
  cost_kparams_resolve(hw, kp);
  kp[COST_KP_REG_SC_KB] = 1.0;
  kp[COST_KP_SC_KB] = 1.0;
  kp[COST_KP_SPILL_KB] = 1.0;
  kp[COST_KP_SK_US] = 3.0;
  kp[COST_KP_SK_EPI] = 1.0;
  kp[COST_KP_SMALLM] = 0.1;
  kp[COST_KP_LAT_KB] = 1.0;
  kp[COST_KP_ISSUE_KB] = 1.0;
  kp[COST_KP_ALIAS_CLK] = 1e9; /* off unless the set fits it (fit_set: from 350) */
  kp[COST_KP_SK_NS] = 0.0;     /* off unless the set fits it (fit_set: from 150) */
  kp[COST_KP_SC_L1_KB] = 0.0;  /* off unless the set fits it (fit_set: 32 KiB) */
  kp[COST_KP_EPI_SC] = 0.0;    /* off unless the set holds it (fit_set: a grid value) */
  /* twelfth round: AWK_REG_OCC sets the occupancy register scale (a
   * compile-data constant, not fitted) for a candidate's CV */
  if (getenv("AWK_REG_OCC")) kp[COST_KP_REG_OCC] = atof(getenv("AWK_REG_OCC"));
  /* thirteenth round: AWK_SC_LINES / AWK_SC_REFETCH hold the scalar-line
   * L1 terms at a grid value in every fold (steps the smooth fit does not
   * move) */
  if (getenv("AWK_SC_LINES")) kp[COST_KP_SC_LINES] = atof(getenv("AWK_SC_LINES"));
  if (getenv("AWK_SC_REFETCH")) kp[COST_KP_SC_REFETCH] = atof(getenv("AWK_SC_REFETCH"));
  /* nineteenth round: the awkward residual was fitted on top of the
   * shipped terms (H100 sweeps), not part of what these fits re-derive */
  kp[COST_KP_AWK_FAM] = 0.0;
  kp[COST_KP_AWK_REL] = 0.0; /* thirtieth round: the same, at every K */
}

/* AWK_FAM_W sets the awkward residual's weight (kernel_awk_family) in hw's
 * calibration for every prediction and score of this run: 0 is the model
 * without it, as data/measurements/h100-awkfam/fit_awkfam.py fits it. */
static void awk_fam_env(cost_hw *hw) {
  const char *w = getenv("AWK_FAM_W"), *kv = getenv("AWK_KP");
  cost_calib *c = &hw->calib;
  if (w && c->n < COST_MAX_CALIB) {
    snprintf(c->names[c->n], sizeof c->names[c->n], "kernel_awk_family");
    c->values[c->n++] = atof(w);
  }
  /* AWK_KP=name=value[,name=value...]: any kernel term at a grid value
   * (a candidate's leave-one-set-out without a rebuild; twenty-third round) */
  char buf[512], *save = NULL;
  snprintf(buf, sizeof buf, "%s", kv ? kv : "");
  for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(t, '=');
    if (!eq || c->n >= COST_MAX_CALIB) continue;
    *eq = '\0';
    snprintf(c->names[c->n], sizeof c->names[c->n], "%s", t);
    c->values[c->n++] = atof(eq + 1);
  }
}

/* One shape under kp (the built-in family table applied): the chosen
 * config against the best measured, with predictions and the model's
 * spill, edge waste and registers of both. */
static void shape_detail(const cost_hw *hw, const double *kp, const ks_shape *sh, const char *tag) {
  int nfam, ci = -1, bi = 0;
  const cost_kfamily *fam = cost_kfamily_builtin(hw, &nfam);
  if (cur_fam) { /* --refam-awk: the table the shape was scored with */
    fam = cur_fam;
    nfam = n_cur_fam;
  }
  cost_kpred pr[KS_MAX_CFG];
  for (int j = 0; j < sh->n; j++) {
    if (cost_kernel_predict_p(hw, kp, &sh->p, &sh->cfg[j], &pr[j]) || !pr[j].feasible) {
      pr[j].ms = INFINITY;
      continue;
    }
    pr[j].family = cost_kfamily_factor(fam, nfam, &sh->p, &sh->cfg[j]);
    pr[j].ms *= pr[j].family;
    if (ci < 0 || pr[j].ms < pr[ci].ms) ci = j;
    if (sh->ms[j] < sh->ms[bi]) bi = j;
  }
  if (ci < 0) return;
  for (int w = 0; w < 2; w++) {
    int j = w ? bi : ci;
    const cost_kcfg *c = &sh->cfg[j];
    printf("%s %5lld %5lld %5lld %-2s %-4s %s %3dx%3dx%3d w%d s%d k%-2d meas %.4f pred %.4f "
           "fam %.2f spill %.2f regs %d waste %.2f",
           tag, (long long)sh->p.m, (long long)sh->p.n, (long long)sh->p.k,
           sh->p.layout[0] ? sh->p.layout : "nn", cost_dtype_name((cost_dtype)sh->p.dtype),
           w ? "best " : "chose", c->block_m, c->block_n, c->block_k, c->num_warps, c->num_stages,
           c->split_k > 1 ? c->split_k : 1, sh->ms[j], pr[j].ms, pr[j].family, pr[j].spill,
           pr[j].regs, pr[j].edge_waste);
    if (w)
      printf("\n");
    else
      printf("  eff %.3f\n", sh->ms[bi] / sh->ms[ci]);
  }
}

/* Every measured config of every shape under the shipped model: measured
 * and predicted time (family factor included), spill factor, registers. */
static void configs_print(const cost_hw *hw, const ks_shape *sh, int n) {
  for (int i = 0; i < n; i++) {
    const ks_shape *x = &sh[i];
    double best = INFINITY;
    for (int j = 0; j < x->n; j++) best = fmin(best, x->ms[j]);
    printf("shape %lld %lld %lld %s %s\n", (long long)x->p.m, (long long)x->p.n, (long long)x->p.k,
           x->p.layout[0] ? x->p.layout : "nn", cost_dtype_name((cost_dtype)x->p.dtype));
    for (int j = 0; j < x->n; j++) {
      cost_kpred r;
      const cost_kcfg *c = &x->cfg[j];
      if (cost_kernel_predict(hw, &x->p, c, &r)) continue;
      printf("  %3dx%3dx%3d w%d s%d k%-2d eff %.3f meas %.6f pred %.6f fam %.2f spill %.2f regs %d "
             "occ %d sm %.6f dram %.6f bytes %.0f\n",
             c->block_m, c->block_n, c->block_k, c->num_warps, c->num_stages,
             c->split_k > 1 ? c->split_k : 1, best / x->ms[j], x->ms[j], r.ms, r.family, r.spill,
             r.regs, r.occupancy, r.t_sm_ms, r.t_dram_ms, r.dram_bytes);
    }
  }
}

/* Held-out scores pooled over CV folds: shape-weighted geo-mean and tau,
 * the worst of the worsts. */
typedef struct {
  double geo, tau, worst;
  int n;
} cv_acc;

static void cv_add(cv_acc *a, const ks_score *sc) {
  a->geo += sc->n * log(sc->eff_geo);
  a->tau += sc->n * sc->tau_mean;
  a->worst = fmin(a->worst, sc->eff_min);
  a->n += sc->n;
}

static ks_score cv_total(const cv_acc *a) {
  ks_score tot = {0};
  tot.n = a->n;
  if (a->n) {
    tot.eff_geo = exp(a->geo / a->n);
    tot.tau_mean = a->tau / a->n;
    tot.eff_min = a->worst;
  }
  return tot;
}

/* Every held-out shape of te[0..n) whose efficiency (effs, when scored)
 * is under detail, with the fold's terms kp. */
static void cv_detail(const cost_hw *hw, const double *kp, const ks_shape *te, int n,
                      const double *effs, double detail, const char *tag) {
  for (int i = 0; detail > 0 && effs && i < n; i++)
    if (effs[i] < detail) shape_detail(hw, kp, &te[i], tag);
}

/* 2-fold CV (CV_SPLITS splits by shape) of term set ts: each fold's terms
 * fitted from the defaults on one half, scored on the other. */
static ks_score cv_set(const cost_hw *hw, const ks_shape *sh, int n, int ts, double detail) {
  cv_acc acc = {.worst = INFINITY};
  ks_shape *fold[2] = {calloc((size_t)n, sizeof *sh), calloc((size_t)n, sizeof *sh)};
  int *which = calloc((size_t)n, sizeof(int));
  for (int sp = 0; sp < cv_splits && fold[0] && fold[1] && which; sp++) {
    int nf[2] = {0, 0};
    shape_split(sh, n, sp, which);
    for (int i = 0; i < n; i++) fold[which[i]][nf[which[i]]++] = sh[i];
    for (int f = 0; f < 2; f++) {
      double kp[COST_KP__COUNT];
      ks_score sc = {0};
      double effs[KS_MAX_CFG];
      prior(hw, kp);
      awk_train = fold[f];
      n_awk_train = nf[f];
      fit_set(hw, kp, ts, fold[f], nf[f], 6);
      sc.effs = nf[1 - f] <= KS_MAX_CFG ? effs : NULL;
      for (int i = 0; detail > 0 && i < set_size(ts); i++) {
        const char *name;
        cost_kparam_info(set_ids[ts][i], &name, NULL, NULL, NULL);
        printf("%s cv%d/%d %s %.4g", i ? "" : " ", sp, f, name, kp[set_ids[ts][i]]);
      }
      if (detail > 0) printf("\n");
      evaluate(hw, kp, fold[1 - f], nf[1 - f], &sc);
      char tag[32];
      snprintf(tag, sizeof tag, "  cv%d/%d", sp, f);
      cv_detail(hw, kp, fold[1 - f], nf[1 - f], sc.effs, detail, tag);
      cv_add(&acc, &sc);
    }
  }
  free(fold[0]);
  free(fold[1]);
  free(which);
  return cv_total(&acc);
}

/* Leave-one-set-out CV of term set ts: grp[i] (0..ngrp-1) is the sweep a
 * shape row came from; each sweep is scored under the terms fitted from the
 * priors on the others. */
static ks_score cv_loso(const cost_hw *hw, const ks_shape *sh, int n, const int *grp, int ngrp,
                        int ts, double detail) {
  cv_acc acc = {.worst = INFINITY};
  ks_shape *tr = calloc((size_t)n, sizeof *sh), *te = calloc((size_t)n, sizeof *sh);
  for (int g = 0; g < ngrp && tr && te; g++) {
    int nt = 0, ne = 0;
    double kp[COST_KP__COUNT], effs[KS_MAX_CFG];
    ks_score sc = {0};
    for (int i = 0; i < n; i++) {
      if (grp[i] == g)
        te[ne++] = sh[i];
      else
        tr[nt++] = sh[i];
    }
    if (!ne || !nt) continue;
    prior(hw, kp);
    awk_train = tr;
    n_awk_train = nt;
    fit_set(hw, kp, ts, tr, nt, 6);
    sc.effs = ne <= KS_MAX_CFG ? effs : NULL;
    evaluate(hw, kp, te, ne, &sc);
    if (detail > 0)
      printf("  loso set %d: top1 %.3f worst %.3f tau %.3f\n", g, sc.eff_geo, sc.eff_min,
             sc.tau_mean);
    char tag[32];
    snprintf(tag, sizeof tag, "  loso%d", g);
    cv_detail(hw, kp, te, ne, sc.effs, detail, tag);
    cv_add(&acc, &sc);
  }
  free(tr);
  free(te);
  return cv_total(&acc);
}

/* Appends the stable configs of SRC/data/measurements/h200-awkward/NAME to
 * *sh (bf16/fp16 sweeps timed with the backlog). */
static int add_stable(const char *src, const char *name, ks_shape **sh, int *n) {
  char path[1024];
  ks_shape *s = NULL;
  int k = 0;
  snprintf(path, sizeof path, "%s/data/measurements/h200-awkward/%s", src, name);
  if (!cm_exists(path)) return 0;
  if (ks_load_stable(path, AWK_SPREAD, &s, &k)) return -1;
  ks_shape *g = realloc(*sh, (size_t)(*n + k + 1) * sizeof *g);
  if (!g) {
    free(s);
    return -1;
  }
  memcpy(g + *n, s, (size_t)k * sizeof *s);
  *sh = g;
  *n += k;
  free(s);
  return 0;
}

/* Fitting data: the first fitting half timed with the backlog
 * (refit_kernel_16bit.json) and the first blind half (blind_kernel_16bit.json,
 * scored once in 336ee1c's round, fitting data since). */
static const char *const fit_files[] = {"refit_kernel_16bit.json",
                                        "blind_kernel_16bit.json",
                                        "../h200-awkward2/blind_kernel_16bit.json",
                                        "../h200-awkward3/blind_kernel_16bit.json",
                                        "../h200-awkward4/blind_kernel_16bit.json",
                                        "../h200-awkward5/blind_kernel_16bit.json",
                                        "../h200-awkward6/blind_kernel_16bit.json",
                                        "../h200-awkward7/blind_kernel_16bit.json"};
/* The H200 set each file belongs to (the leave-one-set-out groups): the
 * first set's two halves are one set. */
static const int fit_group[] = {0, 0, 1, 2, 3, 4, 5, 6};
#define N_FIT_FILES ((int)(sizeof fit_files / sizeof fit_files[0]))
#define N_FIT_SETS 7
/* --fit uses the first two; --fit-all (eighth round) all six files of the
 * five H200 sets, and adds a leave-one-set-out CV over the five sets. */
static int fit_all = 0;
static int force_set = -1; /* --set N: fit and detail term set N whatever the CV chose */

static int do_fit(const cost_hw *hw, const char *src, int verbose) {
  ks_shape *sh = NULL;
  int n = 0, best = 0, grp[8 * KS_MAX_CFG], nfiles = fit_all ? N_FIT_FILES : 2;
  double best_score = -INFINITY;
  for (int i = 0; i < nfiles; i++) {
    int n0 = n;
    if (add_stable(src, fit_files[i], &sh, &n)) return 1;
    for (int j = n0; j < n && j < 8 * KS_MAX_CFG; j++) grp[j] = fit_all ? fit_group[i] : i;
  }
  printf("fitting data (%s + %s%s), bf16+fp16, configs within %.2fx of their fastest "
         "iteration: %d shape rows\n",
         fit_files[0], fit_files[1], fit_all ? " + the h200-awkward2..7 blind sweeps" : "",
         AWK_SPREAD, n);
  if (verbose > 1) {
    configs_print(hw, sh, n);
    free(sh);
    return 0;
  }
  if (verbose) ks_detail_print(hw, sh, n, "fitdata");
  for (int s = 0; s < N_SETS; s++) {
    if (force_set >= 0 && s != force_set && s != PREV_SET) continue;
    ks_score c = cv_set(hw, sh, n, s, 0);
    double score = c.eff_geo + 0.5 * c.tau_mean;
    printf("  cv %-30s top1 %.3f worst %.3f tau %.3f\n", set_names[s], c.eff_geo, c.eff_min,
           c.tau_mean);
    if (fit_all && n <= 8 * KS_MAX_CFG) {
      ks_score l = cv_loso(hw, sh, n, grp, N_FIT_SETS, s, 0);
      printf("     loso %-28s top1 %.3f worst %.3f tau %.3f\n", "", l.eff_geo, l.eff_min,
             l.tau_mean);
    }
    if (score > best_score + 1e-3) {
      best_score = score;
      best = s;
    }
  }
  if (force_set >= 0 && force_set < N_SETS) best = force_set;
  for (int v = 0; verbose && v < 2; v++) {
    int ts = v ? best : PREV_SET;
    printf("CV of %s, held-out shapes under 0.85 (chosen vs best measured):\n", set_names[ts]);
    cv_set(hw, sh, n, ts, 0.85);
    if (fit_all) cv_loso(hw, sh, n, grp, N_FIT_SETS, ts, 0.85);
  }
  double kp[COST_KP__COUNT];
  prior(hw, kp);
  awk_train = sh;
  n_awk_train = n;
  fit_set(hw, kp, best, sh, n, 8);
  printf("chosen: %s; fitted on all the fitting data:\n", set_names[best]);
  for (int i = 0; i < set_size(best); i++) {
    const char *name;
    cost_kparam_info(set_ids[best][i], &name, NULL, NULL, NULL);
    printf("  %-22s %.4g\n", name, kp[set_ids[best][i]]);
  }
  ks_score in = {0};
  awk_train = sh;
  n_awk_train = n;
  evaluate(hw, kp, sh, n, &in);
  printf("in-sample with them: top1 %.3f worst %.3f tau %.3f\n", in.eff_geo, in.eff_min,
         in.tau_mean);
  free(sh);
  return 0;
}

/* A blind set's picks and predicted times, from its job files alone
 * (JOBS/blind_*.json, JOBS relative to src), under the shipped model. */
static int do_predict(const cost_hw *hw, const cost_hw *cal, const char *src, const char *jobdir,
                      const char *out, const char *calib_note) {
  static const char *const jobs[] = {"blind_kernel_16bit", "blind_kernel_tf32", "blind_kernel_fp8",
                                     "blind_gemm"};
  cJSON *res = cJSON_CreateObject(), *sel = cJSON_AddArrayToObject(res, "selection"),
        *gem = cJSON_AddArrayToObject(res, "gemm");
  static cost_kcfg cfg[KS_MAX_CFG];
  static cost_kpred pred[KS_MAX_CFG];
  cJSON_AddStringToObject(res, "model", "shipped kernel model + calibrated GEMM model");
  if (calib_note) { /* not the H200 default: say what it priced */
    cJSON_AddStringToObject(res, "hardware", hw->name);
    cJSON_AddStringToObject(res, "calibration", calib_note);
  }
  int found = 0;
  for (size_t j = 0; j < sizeof jobs / sizeof jobs[0]; j++) {
    char path[1024], name[64];
    size_t len = 0;
    snprintf(name, sizeof name, "%s.json", jobs[j]);
    under(path, sizeof path, src, jobdir, name);
    if (!cm_exists(path)) continue; /* e.g. no fp8 shape in the set */
    found++;
    char *text = cm_slurp(path, &len);
    cJSON *doc = text ? cJSON_ParseWithLength(text, len) : NULL;
    free(text);
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(doc, "params"), *x;
    const cJSON *shapes = cJSON_GetObjectItemCaseSensitive(p, "shapes");
    const cJSON *dts = cJSON_GetObjectItemCaseSensitive(p, "dtypes");
    const cJSON *cfgs = cJSON_GetObjectItemCaseSensitive(p, "configs");
    int nc = 0;
    if (!doc) return 1;
    cJSON_ArrayForEach(x, cfgs) {
      if (nc >= KS_MAX_CFG) break;
#define GI(o, k, d)                                                                                \
  (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(o, k))                                          \
       ? (int)cJSON_GetObjectItemCaseSensitive(o, k)->valuedouble                                  \
       : (d))
      cfg[nc++] = (cost_kcfg){GI(x, "bm", 0),     GI(x, "bn", 0),     GI(x, "bk", 0),
                              GI(x, "warps", 4),  GI(x, "stages", 3), GI(x, "group_m", 8),
                              GI(x, "split_k", 1)};
    }
    const cJSON *d, *s;
    cJSON_ArrayForEach(d, dts) {
      int dt = cost_dtype_parse(d->valuestring);
      cJSON_ArrayForEach(s, shapes) {
        const char *lay = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(s, "layout"));
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "m", GI(s, "m", 0));
        cJSON_AddNumberToObject(o, "n", GI(s, "n", 0));
        cJSON_AddNumberToObject(o, "k", GI(s, "k", 0));
        cJSON_AddStringToObject(o, "layout", lay ? lay : "nn");
        cJSON_AddStringToObject(o, "dtype", d->valuestring);
        if (!nc) {
          cost_sample sm = {.kind = COST_OP_GEMM};
          cost_result r;
          sm.u.gemm = (cost_gemm_op){
              .m = GI(s, "m", 0), .n = GI(s, "n", 0), .k = GI(s, "k", 0), .dtype = dt, .batch = 1};
          snprintf(sm.u.gemm.layout, 3, "%s", lay ? lay : "nn");
          if (cost_sample_predict(cal, &sm, &r) == 0) cJSON_AddNumberToObject(o, "ms", r.ms);
          cJSON_AddItemToArray(gem, o);
          continue;
        }
        cost_kproblem pb = {GI(s, "m", 0), GI(s, "n", 0), GI(s, "k", 0), dt, "nn"};
        int nf = 0;
        if (lay) snprintf(pb.layout, 3, "%s", lay);
        if (cost_kernel_rank(hw, &pb, cfg, nc, pred, &nf) || !nf) {
          cJSON_Delete(o);
          continue;
        }
        cJSON *rk = cJSON_AddArrayToObject(o, "ranked");
        for (int i = 0; i < nf; i++) {
          cJSON *c = cJSON_CreateObject();
          const cost_kcfg *k = &pred[i].cfg;
          cJSON_AddNumberToObject(c, "bm", k->block_m);
          cJSON_AddNumberToObject(c, "bn", k->block_n);
          cJSON_AddNumberToObject(c, "bk", k->block_k);
          cJSON_AddNumberToObject(c, "warps", k->num_warps);
          cJSON_AddNumberToObject(c, "stages", k->num_stages);
          cJSON_AddNumberToObject(c, "split_k", k->split_k > 1 ? k->split_k : 1);
          cJSON_AddNumberToObject(c, "ms", pred[i].ms);
          cJSON_AddItemToArray(rk, c);
        }
        cJSON_AddItemToArray(sel, o);
      }
    }
#undef GI
    cJSON_Delete(doc);
  }
  if (!found) { /* a wrong --jobs must not leave an empty predictions file */
    fprintf(stderr, "kernel_awkward: --jobs %s: no blind_kernel_*.json or blind_gemm.json there\n",
            jobdir);
    cJSON_Delete(res);
    return 1;
  }
  char *txt = cJSON_PrintUnformatted(res);
  FILE *f = fopen(out, "w");
  if (!f || !txt) return 1;
  fputs(txt, f);
  fputc('\n', f);
  fclose(f);
  free(txt);
  cJSON_Delete(res);
  printf("wrote %s\n", out);
  return 0;
}

static void gemm_rows(const cost_hw *cal, const char *src, const char *dir, const char *file,
                      const char *set, int verbose) {
  static const int dts[] = {COST_DT_BF16, COST_DT_FP16, COST_DT_TF32, COST_DT_FP8};
  char path[1024], name[64];
  cost_sample *g = NULL;
  size_t n = 0;
  under(path, sizeof path, src, dir, file);
  if (!cm_exists(path) || load_gemm(path, &g, &n)) return;
  snprintf(name, sizeof name, "%s all", set);
  gemm_err(cal, g, n, -1, 0, name, verbose);
  snprintf(name, sizeof name, "%s unaligned", set);
  gemm_err(cal, g, n, -1, 1, name, 0);
  for (int d = 0; d < 4; d++) {
    snprintf(name, sizeof name, "%s %s", set, cost_dtype_name((cost_dtype)dts[d]));
    gemm_err(cal, g, n, dts[d], 0, name, 0);
  }
  free(g);
}

static void sel_rows(const cost_hw *hw, const ks_shape *sh, int n, const char *set, int verbose) {
  static const int dts[] = {-1, COST_DT_BF16, COST_DT_FP16, COST_DT_TF32, COST_DT_FP8};
  char name[64];
  for (int d = 0; d < 5; d++) {
    snprintf(name, sizeof name, "%s %s", set,
             dts[d] < 0 ? "bf16+fp16" : cost_dtype_name((cost_dtype)dts[d]));
    sel_row(hw, sh, n, dts[d], name);
  }
  if (verbose) ks_detail_print(hw, sh, n, set);
  /* --verbose: each bf16/fp16 shape's Kendall tau (low-tau shapes) */
  for (int i = 0; verbose && i < n; i++) {
    ks_score t = {0};
    if (sh[i].p.dtype != COST_DT_BF16 && sh[i].p.dtype != COST_DT_FP16) continue;
    ks_evaluate(hw, NULL, NULL, -1, &sh[i], 1, &t);
    printf("%s tau %6lld %6lld %6lld %-2s %-4s tau %.3f top1 %.3f\n", set, (long long)sh[i].p.m,
           (long long)sh[i].p.n, (long long)sh[i].p.k, sh[i].p.layout[0] ? sh[i].p.layout : "nn",
           cost_dtype_name((cost_dtype)sh[i].p.dtype), t.tau_mean, t.eff_geo);
  }
}

/* A catalog accelerator other than the H200 as cdplan prices it
 * (api_hw_lookup with calibration, as POST /v1/kernels and the planner
 * do): its own calibration, else its architecture's shipped one with the
 * measured terms of the same architecture's measured accelerator. The
 * kernel model reads only kernel_* terms, which no shipped calibration
 * carries, so its picks are the descriptor's. note: what priced it. */
static int load_other(const char *name, cost_hw *hw, char *note, size_t cap) {
  api_ctx *ctx = NULL;
  svc_err err = {0};
  int rc = -1;
  svc_log_threshold = SVC_LOG_WARN;
  if (api_ctx_new(&ctx, ":memory:", &err) || api_hw_lookup(ctx, name, 1, hw, &err)) {
    fprintf(stderr, "kernel_awkward: --hw %s: %s\n", name, err.message);
    goto cleanup;
  }
  if (hw->calib.version <= 0)
    snprintf(note, cap, "datasheet figures: no calibration shipped for it or its architecture");
  else if (!hw->calib.per_arch)
    snprintf(note, cap, "its own shipped calibration");
  else
    snprintf(note, cap, "data/calibration/arch-%s.json (published GEMMs)%s%s",
             hw->calib.per_arch == 2 ? cost_arch_fallback(hw->arch) : hw->arch,
             hw->calib.inherited_from[0] ? ", measured terms from " : "", hw->calib.inherited_from);
  rc = 0;
cleanup:
  api_ctx_free(ctx);
  return rc;
}

static void backlog_rows(const cost_hw *cal, const char *src, const char *dir, const char *prefix,
                         const char *set);

/* A blind sweep of the h200-awkward2 job files in DIR (relative to src) on
 * the accelerator hw prices: the current model's selection rows, each
 * committed predictions file's picks (bf16 + fp16), cuBLAS times under cal. */
static int blind_rows(const cost_hw *hw, const cost_hw *cal, const char *src, const char *dir,
                      int verbose) {
  static const char *const files[] = {"predictions.json", "predictions_v2.json"};
  char rel[1024];
  ks_shape *sh = NULL;
  int n = 0;
  if (load_half(src, dir, "blind", &sh, &n)) {
    fprintf(stderr, "kernel_awkward: cannot read the blind_kernel_*.json of %s\n", dir);
    free(sh);
    return -1;
  }
  printf("blind sweep %s, model priced for %s: %d kernel shape rows%s\n", dir, hw->name, n,
         n ? " (chosen among measured configs)" : " (no blind_kernel_*.json there yet)");
  sel_rows(hw, sh, n, "blind", verbose);
  if (verbose == 2) configs_print(hw, sh, n);
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    snprintf(rel, sizeof rel, "%s/%s", dir, files[i]);
    picks_row(src, rel, sh, n, "blind bf16+fp16");
  }
  printf("GEMM time (cuBLAS), |pred/meas - 1|; unaligned = K or N not a multiple of 8\n");
  gemm_rows(cal, src, dir, "blind_gemm.json", "blind", verbose);
  /* the same cuBLAS calls timed after the backlog (a lent host's launch
   * path can triple a gemm_sweep row: h100-awkward3 1x512x100 tn bf16
   * 18.4 us there, 5.3 us in the kernel sweep) */
  const char *sub = dir[0] == '/' ? dir : strncmp(dir, "data/measurements/", 18) ? NULL : dir + 18;
  if (sub) {
    printf("GEMM time vs the kernel sweeps' cuBLAS times (backlog 100 us: no host path)\n");
    backlog_rows(cal, src, sub, "blind", "blind");
  }
  free(sh);
  return 0;
}

/* The cuBLAS time each kernel_sweep row carries (cublas_ms: the same
 * torch.matmul timed inside the Triton sweep, after the 100 us backlog that
 * hides the host's launch path, data/measurements/h200-awkward/README.md)
 * as GEMM samples; 16-bit and tf32 sweeps only (the fp8 one times
 * torch._scaled_mm). 0 (none when the file is absent) or -1. */
static int load_cublas_ms(const char *path, cost_sample **out, size_t *n) {
  size_t len = 0;
  char *text = cm_slurp(path, &len);
  *out = NULL;
  *n = 0;
  if (!text) return cm_exists(path) ? -1 : 0;
  cJSON *doc = cJSON_ParseWithLength(text, len);
  free(text);
  const cJSON *rows = cJSON_GetObjectItemCaseSensitive(doc, "rows"), *r;
  int cap = cJSON_GetArraySize(rows);
  *out = calloc((size_t)(cap > 0 ? cap : 1), sizeof **out);
  if (!*out) {
    cJSON_Delete(doc);
    return -1;
  }
  cJSON_ArrayForEach(r, rows) {
    const char *dt = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "dtype"));
    const char *lay = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "layout"));
    int d = dt ? cost_dtype_parse(dt) : -1;
    double ms = bench_jnum(r, "cublas_ms");
    if (d < 0 || !(ms > 0)) continue;
    cost_sample *x = &(*out)[*n];
    x->kind = COST_OP_GEMM;
    x->u.gemm = (cost_gemm_op){.m = (int64_t)bench_jnum(r, "m"),
                               .n = (int64_t)bench_jnum(r, "n"),
                               .k = (int64_t)bench_jnum(r, "k"),
                               .dtype = d,
                               .batch = 1};
    snprintf(x->u.gemm.layout, sizeof x->u.gemm.layout, "%s", lay && strlen(lay) == 2 ? lay : "nn");
    x->ms = ms;
    (*n)++;
  }
  cJSON_Delete(doc);
  return 0;
}

/* GEMM time against the backlog-timed cuBLAS rows of a set's kernel sweeps
 * (prefix: "blind" or "refit"): all rows and the unaligned ones. The
 * gemm_sweep (gemm_rows) times cuBLAS without the backlog, so a kernel of
 * a few microseconds there can be timed with the host's launch path in it
 * (h200-awkward2: 1x256x24 tn fp16 8.5 us there, 5.1 us in the sweep). */
static void backlog_rows(const cost_hw *cal, const char *src, const char *dir, const char *prefix,
                         const char *set) {
  static const char *const kk[] = {"kernel_16bit", "kernel_tf32"};
  cost_sample *all = NULL;
  size_t n_all = 0;
  char path[1024], name[64];
  for (size_t i = 0; i < 2; i++) {
    cost_sample *s = NULL, *g;
    size_t n = 0;
    char rel[1024]; /* dir: under data/measurements, or an absolute --blind-dir */
    int nr = snprintf(rel, sizeof rel, "%s%s/%s_%s.json", dir[0] == '/' ? "" : "data/measurements/",
                      dir, prefix, kk[i]);
    if (nr < 0 || (size_t)nr >= sizeof rel) continue;
    src_path(path, sizeof path, src, rel);
    if (load_cublas_ms(path, &s, &n) || !n) {
      free(s);
      continue;
    }
    g = realloc(all, (n_all + n) * sizeof *g);
    if (!g) {
      free(s);
      break;
    }
    all = g;
    memcpy(all + n_all, s, n * sizeof *s);
    n_all += n;
    free(s);
  }
  if (n_all) {
    snprintf(name, sizeof name, "%s backlog all", set);
    gemm_err(cal, all, n_all, -1, 0, name, 0);
    snprintf(name, sizeof name, "%s backlog unal", set);
    gemm_err(cal, all, n_all, -1, 1, name, 0);
  }
  free(all);
}

static double term_of(const cost_result *r, const char *name) {
  for (int i = 0; i < r->n_terms; i++)
    if (!strcmp(r->terms[i].name, name)) return r->terms[i].value;
  return NAN;
}

/* --gemm-rows: every cuBLAS row of every H200 awkward set, one line each:
 * set, timing (sweep: gemm_sweep, no backlog; backlog: the kernel sweeps'
 * cublas_ms), dtype, layout, M N K, alignment class (bytes of the worst
 * leading dimension, as cost_gemm's align_bytes), measured (median, and
 * the fastest call where the file has it), predicted, its launch floor
 * and GPU part, the kernel shape it priced (tile, split-K) and the error. */
static void gemm_dump_file(const cost_hw *cal, const char *path, const char *set, const char *how,
                           int backlog) {
  cost_sample *g = NULL;
  size_t n = 0;
  if ((backlog ? load_cublas_ms(path, &g, &n) : load_gemm(path, &g, &n)) || !n) {
    free(g);
    return;
  }
  for (size_t i = 0; i < n; i++) {
    cost_result r;
    const cost_gemm_op *o = &g[i].u.gemm;
    if (cost_sample_predict(cal, &g[i], &r)) continue;
    double l = term_of(&r, "launch_ms");
    printf("%-9s %-7s %-5s %s %5lld %5lld %5lld al%-2.0f %-5s meas %.4f pred %.4f launch %.4f "
           "gpu %.4f tile %.0fx%.0f s%.0f %+6.1f%%\n",
           set, how, cost_dtype_name((cost_dtype)o->dtype), o->layout, (long long)o->m,
           (long long)o->n, (long long)o->k, term_of(&r, "align_bytes"),
           unaligned8(o) ? "unal" : "al8", g[i].ms, r.ms, l, r.ms - l, term_of(&r, "tile_m"),
           term_of(&r, "tile_n"), term_of(&r, "split_k"), (r.ms / g[i].ms - 1) * 100);
  }
  free(g);
}

/* --gemm-rows with --hw h100-sxm: the same lines for every lent-H100
 * awkward set (h100-awkward2..N, as far as they exist): the rows the H100's
 * cuBLAS-time terms are chosen on (fourteenth round). */
static void gemm_dump_h100(const cost_hw *cal, const char *src) {
  static const char *const kk[] = {"kernel_16bit", "kernel_tf32"};
  char path[1024], set[32];
  for (int i = 2; i <= 99; i++) {
    snprintf(path, sizeof path, "%s/data/measurements/h100-awkward%d/blind_gemm.json", src, i);
    if (!cm_exists(path)) continue;
    snprintf(set, sizeof set, "h%dblind", i);
    gemm_dump_file(cal, path, set, "sweep", 0);
    snprintf(path, sizeof path, "%s/data/measurements/h100-awkward%d/blind_gemmbl.json", src, i);
    gemm_dump_file(cal, path, set, "gemmbl", 0);
    for (size_t k = 0; k < 2; k++) {
      snprintf(path, sizeof path, "%s/data/measurements/h100-awkward%d/blind_%s.json", src, i,
               kk[k]);
      gemm_dump_file(cal, path, set, "backlog", 1);
    }
  }
}

static void gemm_dump(const cost_hw *cal, const char *src) {
  static const struct {
    const char *dir, *gemm, *prefix, *set;
  } sets[] = {{"h200-awkward", "fit_gemm.json", "refit", "r1fit"},
              {"h200-awkward", "blind_gemm.json", "blind", "r1blind"},
              {"h200-awkward2", "blind_gemm.json", "blind", "r2blind"},
              {"h200-awkward3", "blind_gemm.json", "blind", "r3blind"},
              {"h200-awkward4", "blind_gemm.json", "blind", "r4blind"},
              {"h200-awkward5", "blind_gemm.json", "blind", "r5blind"},
              {"h200-awkward6", "blind_gemm.json", "blind", "r6blind"},
              {"h200-awkward7", "blind_gemm.json", "blind", "r7blind"},
              {"h200-awkward8", "blind_gemm.json", "blind", "r8blind"},
              {"h200-awkward9", "blind_gemm.json", "blind", "r9blind"},
              {"h200-awkward10", "blind_gemm.json", "blind", "r10blind"}};
  static const char *const kk[] = {"kernel_16bit", "kernel_tf32"};
  char path[1024];
  for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++) {
    snprintf(path, sizeof path, "%s/data/measurements/%s/%s", src, sets[i].dir, sets[i].gemm);
    gemm_dump_file(cal, path, sets[i].set, "sweep", 0);
    snprintf(path, sizeof path, "%s/data/measurements/%s/blind_gemmbl.json", src, sets[i].dir);
    if (strcmp(sets[i].set, "r1fit")) gemm_dump_file(cal, path, sets[i].set, "gemmbl", 0);
    for (size_t k = 0; k < 2; k++) {
      snprintf(path, sizeof path, "%s/data/measurements/%s/%s_%s.json", src, sets[i].dir,
               sets[i].prefix, kk[k]);
      gemm_dump_file(cal, path, sets[i].set, "backlog", 1);
    }
  }
}

/* The third blind set (h200-awkward3, issue 25): its selection rows and
 * the committed picks' score once its blind_*.json exist. */
static void r3_sel_rows(const cost_hw *hw, const char *src, int verbose) {
  ks_shape *b3 = NULL;
  int n3 = 0;
  if (load_half(src, "data/measurements/h200-awkward3", "blind", &b3, &n3) == 0 && n3) {
    sel_rows(hw, b3, n3, "r3 blind", verbose);
    picks_row(src, "data/measurements/h200-awkward3/predictions.json", b3, n3,
              "r3 blind, r3 picks");
    /* the fifth round's model (kernel_alias_clk), committed beside it */
    picks_row(src, "data/measurements/h200-awkward3/predictions_v2.json", b3, n3,
              "r3 blind, r5 picks");
  }
  free(b3);
}

/* The fourth to ninth blind sets (h200-awkward4..9, issue 25): each a
 * 16-bit kernel sweep and the bf16/fp16/tf32 gemm_sweep (the fifth and
 * later ones also a backlog-timed copy, blind_gemmbl.json), with its
 * predictions.json committed before the sweep: the fourth's by the model
 * with the split-K reduce latency (GEMM_RED_SPLIT_NS, docs/model.md "GEMM
 * time on awkward shapes"), the fifth's by the seventh round's
 * (kernel_splitk_ns), the sixth's by the eighth round's (kernel_sc_l1_kb;
 * its GEMM-time score of record is "r6 gemmbl"), the seventh's by the same
 * model ("r7 gemmbl" of record), the eighth's by the ninth round's cost_gemm
 * (GEMM_SPLIT_GRID_FRAC, GEMM_RED_GAP_US; "r8 gemmbl" of record), the ninth's
 * by the same model (drawn at fresh batches to test that term; "r9 gemmbl" of
 * record). Prints "rN blind" and
 * "rN blind, rN picks" for each set whose blind_*.json exist. */
/* the newest H200 awkward set whose rows are printed once its sweep is there */
#define AWK_LAST_SET 10

static void later_sel_rows(const cost_hw *hw, const char *src, int verbose) {
  for (int set = 4; set <= AWK_LAST_SET; set++) {
    char dir[64], pred[128], label[32], plabel[32];
    snprintf(dir, sizeof dir, "data/measurements/h200-awkward%d", set);
    snprintf(pred, sizeof pred, "%s/predictions.json", dir);
    snprintf(label, sizeof label, "r%d blind", set);
    snprintf(plabel, sizeof plabel, "r%d blind, r%d picks", set, set);
    ks_shape *b = NULL;
    int n = 0;
    if (load_half(src, dir, "blind", &b, &n) == 0 && n) {
      sel_rows(hw, b, n, label, verbose);
      picks_row(src, pred, b, n, plabel);
    }
    free(b);
  }
}

/* GEMM time rows of the third to ninth blind sets (each only once its
 * blind_*.json are there; the fourth and later ones also "rN gemmbl", the
 * backlog-timed copy) and, for every set swept with the backlog, the model
 * against the kernel sweeps' cuBLAS times. */
static void r3_gemm_rows(const cost_hw *cal, const char *src, int verbose) {
  char dir[64], label[32];
  gemm_rows(cal, src, "data/measurements/h200-awkward3", "blind_gemm.json", "r3 blind", verbose);
  for (int set = 4; set <= AWK_LAST_SET; set++) {
    snprintf(dir, sizeof dir, "data/measurements/h200-awkward%d", set);
    snprintf(label, sizeof label, "r%d blind", set);
    gemm_rows(cal, src, dir, "blind_gemm.json", label, verbose);
    snprintf(label, sizeof label, "r%d gemmbl", set);
    gemm_rows(cal, src, dir, "blind_gemmbl.json", label, verbose);
  }
  printf("GEMM time vs the kernel sweeps' cuBLAS times (backlog 100 us: no host path)\n");
  backlog_rows(cal, src, "h200-awkward", "refit", "r1 refit");
  backlog_rows(cal, src, "h200-awkward", "blind", "r1 blind");
  for (int set = 2; set <= AWK_LAST_SET; set++) {
    snprintf(dir, sizeof dir, "h200-awkward%d", set);
    snprintf(label, sizeof label, "r%d blind", set);
    backlog_rows(cal, src, dir, "blind", label);
  }
}

/* The selection rows of every H200 awkward set and each committed picks
 * file's score on its blind sweep. */
static void sel_all(const cost_hw *hwp, const char *src, const ks_shape *fit, int n_fit,
                    const ks_shape *blind, int n_blind, const ks_shape *refit, int n_refit,
                    const ks_shape *blind2, int n_blind2, const char *picks, int verbose) {
  printf("kernel selection on awkward H200 sweeps (chosen among measured configs)\n"
         "r1 = h200-awkward (fit: first call, launch-path noise; refit: the fitting half again\n"
         "with the backlog; blind: scored once for 336ee1c, fitting data since);\n"
         "r2 = h200-awkward2 (blind for this model: picks committed before the sweep)\n");
  sel_rows(hwp, fit, n_fit, "r1 fit", 0);
  sel_row(hwp, refit, n_refit, -1, "r1 refit bf16+fp16");
  sel_rows(hwp, blind, n_blind, "r1 blind", verbose);
  sel_rows(hwp, blind2, n_blind2, "r2 blind", verbose);
  /* Each model's committed picks on its blind sweep: round 1's (336ee1c),
   * round 2's (d6a3893) and round 4's (predictions_v2.json) */
  picks_row(src, "data/measurements/h200-awkward/predictions.json", blind, n_blind,
            "r1 blind, r1 picks");
  picks_row(src, "data/measurements/h200-awkward2/predictions.json", blind2, n_blind2,
            "r2 blind, r2 picks");
  picks_row(src, "data/measurements/h200-awkward2/predictions_v2.json", blind2, n_blind2,
            "r2 blind, r4 picks");
  if (picks && *picks) picks_row(src, picks, blind, n_blind, "r1 blind, --picks");
  r3_sel_rows(hwp, src, verbose);
  later_sel_rows(hwp, src, verbose);
}

int main(int argc, char **argv) {
  const char *src = CDPLAN_SOURCE_DIR;
  int verbose = 0, do_fit_mode = 0, gemm_dump_mode = 0;
  const char *predict = NULL, *jobs = "data/measurements/h200-awkward2/jobs", *picks = NULL;
  const char *hwname = "h200", *blind_dir = NULL;
  int cli = bench_cli(
      argc, argv,
      "[--hw NAME] [--verbose | --configs] [--jobs DIR --predict FILE] [--blind-dir DIR] "
      "[--gemm-rows] [--fit | --fit-all] [--refam | --refam-awk] [--set N] [--splits N] "
      "[--picks FILE] [SOURCE_TREE]\n(environment: AWK_FAM_W, the short-K residual's weight; "
      "AWK_KP=name=value,..., any kernel term; docs/kernels.md)",
      "--verbose --configs --splits:1 --fit --set:1 --refam --refam-awk --fit-all --predict:1 "
      "--picks:1 --jobs:1 --hw:1 --gemm-rows --blind-dir:1",
      1);
  if (cli >= 0) return cli;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--verbose"))
      verbose = 1;
    else if (!strcmp(argv[i], "--configs"))
      verbose = 2;
    else if (!strcmp(argv[i], "--splits") && i + 1 < argc && atoi(argv[i + 1]) > 0)
      cv_splits = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--fit"))
      do_fit_mode = 1;
    else if (!strcmp(argv[i], "--set") && i + 1 < argc)
      force_set = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--refam"))
      refam = 1;
    else if (!strcmp(argv[i], "--refam-awk"))
      refam = 2;
    else if (!strcmp(argv[i], "--fit-all"))
      do_fit_mode = fit_all = 1;
    else if (!strcmp(argv[i], "--predict") && i + 1 < argc)
      predict = argv[++i];
    else if (!strcmp(argv[i], "--picks") && i + 1 < argc)
      picks = argv[++i];
    else if (!strcmp(argv[i], "--jobs") && i + 1 < argc)
      jobs = argv[++i];
    else if (!strcmp(argv[i], "--hw") && i + 1 < argc)
      hwname = argv[++i];
    else if (!strcmp(argv[i], "--gemm-rows"))
      gemm_dump_mode = 1;
    else if (!strcmp(argv[i], "--blind-dir") && i + 1 < argc)
      blind_dir = argv[++i];
    else
      src = argv[i]; /* bench_cli let through only the source tree */
  }
  char path[1024], dir[1024];
  cost_hw hw, cal;
  ks_shape *fit = NULL, *blind = NULL, *refit = NULL, *blind2 = NULL;
  int n_fit = 0, n_blind = 0, n_refit = 0, n_blind2 = 0, rc = 0;
  if (strcmp(hwname, "h200")) {
    /* Another accelerator: the H200 sweeps are not its to score. */
    char note[256];
    if (do_fit_mode) {
      fprintf(stderr, "kernel_awkward: --fit fits the H200 sweeps; not with --hw %s\n", hwname);
      return 2;
    }
    if (load_other(hwname, &cal, note, sizeof note)) return 1;
    awk_fam_env(&cal);
    hw = cal;
    printf(
        "kernel selection and GEMM time priced for %s (%s); the Triton terms were fitted on H200 "
        "sweeps only\n",
        hw.name, note);
    if (gemm_dump_mode) {
      gemm_dump_h100(&cal, src);
      return 0;
    }
    if (predict && do_predict(&hw, &cal, src, jobs, predict, note)) return 1;
    return blind_dir && blind_rows(&hw, &cal, src, blind_dir, verbose) ? 1 : 0;
  }
  snprintf(path, sizeof path, "%s/data/hardware/h200.json", src);
  if (ks_load_hw(path, &hw) ||
      load_half(src, "data/measurements/h200-awkward", "fit", &fit, &n_fit) ||
      load_half(src, "data/measurements/h200-awkward", "blind", &blind, &n_blind) ||
      load_half(src, "data/measurements/h200-awkward", "refit", &refit, &n_refit) ||
      load_half(src, "data/measurements/h200-awkward2", "blind", &blind2, &n_blind2))
    return 1;
  awk_fam_env(&hw);
  if (refam && load_famset(src)) return 1;
  if (do_fit_mode) return do_fit(&hw, src, verbose);
  if (!gemm_dump_mode)
    sel_all(&hw, src, fit, n_fit, blind, n_blind, refit, n_refit, blind2, n_blind2, picks, verbose);

  /* GEMM time: the descriptor calibrated on data/measurements/h200. */
  cost_sample *s = NULL;
  size_t n = 0;
  cost_calib call;
  snprintf(dir, sizeof dir, "%s/data/measurements/h200", src);
  if (cm_load_samples(dir, &s, &n)) return 1;
  cost_calibrate(&hw, s, n, &call, NULL);
  cal = hw;
  cal.calib = call;
  if (gemm_dump_mode) {
    gemm_dump(&cal, src);
    free(s);
    free(fit);
    free(blind);
    free(refit);
    free(blind2);
    return 0;
  }
  if (predict && do_predict(&hw, &cal, src, jobs, predict, NULL)) return 1;
  printf("GEMM time (cuBLAS), |pred/meas - 1|; unaligned = K or N not a multiple of 8\n");
  gemm_rows(&cal, src, "data/measurements/h200-awkward", "fit_gemm.json", "r1 fit", verbose);
  gemm_rows(&cal, src, "data/measurements/h200-awkward", "blind_gemm.json", "r1 blind", verbose);
  gemm_rows(&cal, src, "data/measurements/h200-awkward2", "blind_gemm.json", "r2 blind", verbose);
  if (blind_dir && blind_rows(&hw, &cal, src, blind_dir, verbose)) rc = 1;
  r3_gemm_rows(&cal, src, verbose);
  free(s);
  free(fit);
  free(blind);
  free(refit);
  free(blind2);
  return rc;
}
