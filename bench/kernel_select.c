/* bench/kernel_select: the zero-warmup kernel selector against measured
 * Triton config sweeps on an H200.
 *   shared     data/measurements/h200/triton_configs.json -- the half the
 *              model's default parameters were fitted on (in-sample)
 *   fit2       data/measurements/h200-fit2/triton_configs.json -- 10
 *              shapes with K and/or N not a multiple of 16, also fitted on
 *              (in-sample)
 *   fit3       data/measurements/h200-fit3/triton_configs.json -- 12 more
 *              shapes (large squares, skinny, unaligned), also fitted on
 *   fit4       data/measurements/h200-fit4/triton_configs.json -- 10 bf16 +
 *              4 fp16 shapes, mostly unaligned K/N, also fitted on
 *   held-out2  data/measurements/h200-heldout2/triton_configs.json -- 14 bf16
 *              + 4 fp16 shapes measured after the fit (shared + fit2 + fit3)
 *              was fixed; never fitted on
 *   cv         2-fold cross-validation over the fit set (shared + fit2 + fit3
 *              + fit4), each fold fitted from the same physical starting
 *              guesses: the official split (alternate shapes) and the mean
 *              over --splits shuffled ones (docs/kernels.md, "Fit protocol")
 *   held-out   data/measurements/h200-extra/triton_configs.json -- never
 *              used to fit (absent: the row says so)
 *   held-out3  data/measurements/h200-heldout3/triton_configs.json -- 24 bf16
 *              + 8 fp16 shapes measured after the family corrections were
 *              fixed and their choices committed (predictions.json there)
 *   held-out-all  the three held-out sets together
 *   fp8, tf32  data/measurements/h200-dtypes/triton_configs.json -- 10 shapes
 *              each in the other two dtypes the kernel takes, never fitted
 *   fp8-fit, tf32-fit  data/measurements/h200-dtypes-fit/ -- 20 shapes each,
 *              the only data the 1- and 4-byte family corrections are fitted
 *              on (in-sample rows, and a 2-fold CV of the families alone)
 *   held-out4  data/measurements/h200-heldout4/ -- 12 bf16 + 4 fp16 shapes
 *              measured after the compile-fact rules and their refit were
 *              fixed and the picks committed (predictions.json there)
 *   fp8-held2, tf32-held2  data/measurements/h200-dtypes-held2/ -- 12
 *              shapes each, blind in the same way
 *   held-out5  data/measurements/h200-heldout5/ -- 12 bf16 shapes, blind to
 *              the shipped model (family shrink 1; picks committed in 19bf7a6)
 *   tf32-held4  data/measurements/h200-dtypes-held4/ -- 12 tf32 shapes,
 *              blind in the same way
 *   tf32-held3  data/measurements/h200-dtypes-held3/ -- 12 tf32 shapes,
 *              blind to the tf32 transpose-throughput rule (picks committed)
 *   fp8-held, tf32-held  data/measurements/h200-dtypes-held/ -- 10 shapes
 *              each measured after that table was fixed and its picks
 *              committed (blind)
 * Per set: top-1 efficiency (best measured / measured time of the config
 * the model chose among those measured) geometric mean and worst, Kendall
 * tau of predicted vs measured per shape (mean, min), the fixed
 * 128x128x64 (4 warps, 3 stages) baseline, and the time to rank 100
 * candidates. Prints a table and one JSON line.
 * Usage: kernel_select [--fit] [--fit-only] [--starts N] [--splits N] [--verbose]
 *        [--compile-check]   (the model against Triton's compile facts,
 *        data/measurements/h200-compile/: prints each disagreement and a summary)
 *        [--compile-regs]    (each compiled config's register estimate and blocks
 *        per SM beside the compiler's count: bench/compile_regs_fit.py reads it)
 *        [source_dir]   (--fit prints fitted defaults; --fit-only hides held-out)
 *   KS_PRIOR_LATER=1: the fit (and the CV folds) start with kernel_sc_l1_kb and
 *        kernel_epi_sc at their shipped values instead of off (eleventh round,
 *        docs/kernels.md: tried, not adopted)
 *   KS_REG_OCC=x: the fit and its CV folds hold kernel_reg_occ at x (twelfth
 *        round, docs/kernels.md: blocks per SM of 2-byte tiles from the
 *        register estimate times x; not adopted, shipped 0 = off)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/bench_cli.h"
#include "bench/costmodel_load.h"
#include "bench/kernel_sweep.h"

/* Physical first guesses the CV folds start from (docs/kernels.md). */
/* Starts of the fit (ks_fit_multi) and shuffled CV splits averaged
 * (docs/kernels.md, "Fit protocol"). */
#ifndef KS_FIT_STARTS
#define KS_FIT_STARTS 2
#endif
#ifndef KS_CV_SPLITS
#define KS_CV_SPLITS 8
#endif

static double prior[COST_KP__COUNT] = {
    0.8, 0.85, 38.0, 700, 1500, 0.5, 500,  1.0, 3.5, 24,  3.0,
    224, 5e-4, 4.0,  0.9, 1500, 0.5, 10.0, 3.0, 1.0, 0.1, [COST_KP_ALIAS_CLK] = 1e9};

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void row(const char *name, const ks_score *s) {
  if (!s->n) {
    printf("%-10s %6s  (no data)\n", name, "-");
    return;
  }
  printf("%-10s %6d  %7.3f %7.3f  %7.3f %7.3f  %7.3f %7.3f\n", name, s->n, s->eff_geo, s->eff_min,
         s->tau_mean, s->tau_min, s->base_geo, s->base_min);
}

static void json_set(const char *name, const ks_score *s, int last) {
  printf("\"%s\":{\"shapes\":%d,\"top1_geo\":%.4f,\"top1_worst\":%.4f,\"tau_mean\":%.4f,"
         "\"tau_min\":%.4f,\"baseline_geo\":%.4f,\"baseline_worst\":%.4f}%s",
         name, s->n, s->n ? s->eff_geo : 0, s->n ? s->eff_min : 0, s->n ? s->tau_mean : 0,
         s->n ? s->tau_min : 0, s->base_n ? s->base_geo : 0, s->base_n ? s->base_min : 0,
         last ? "" : ",");
}

/* Merge two fold scores into one (geometric means weighted by count). */
static ks_score merge(const ks_score *a, const ks_score *b) {
  ks_score m = {0};
  m.n = a->n + b->n;
  m.eff_geo = exp((a->n * log(a->eff_geo) + b->n * log(b->eff_geo)) / m.n);
  m.eff_min = fmin(a->eff_min, b->eff_min);
  m.tau_mean = (a->n * a->tau_mean + b->n * b->tau_mean) / m.n;
  m.tau_min = fmin(a->tau_min, b->tau_min);
  m.base_n = a->base_n + b->base_n;
  m.base_geo = exp((a->base_n * log(a->base_geo) + b->base_n * log(b->base_geo)) / m.base_n);
  m.base_min = fmin(a->base_min, b->base_min);
  return m;
}

#define KS_MAX_FAM 512

/* 2-fold CV over the fit set on split `split` (ks_split): each fold is
 * fitted from the physical prior with `starts` starts (then, when
 * `families`, its family corrections measured on the same fold) and scored
 * on the other fold; the two scores merged. */
static int cv_split(const cost_hw *hw, const ks_shape *fit, int n_fit, int split, int starts,
                    int families, ks_score *out) {
  ks_shape *fold[2] = {calloc((size_t)n_fit, sizeof(ks_shape)),
                       calloc((size_t)n_fit, sizeof(ks_shape))};
  int *which = calloc((size_t)n_fit, sizeof(int)), nf[2] = {0, 0};
  ks_score cv[2];
  double kp[COST_KP__COUNT];
  if (!fold[0] || !fold[1] || !which) {
    free(fold[0]);
    free(fold[1]);
    free(which);
    return -1;
  }
  ks_split(n_fit, split, which);
  for (int i = 0; i < n_fit; i++) fold[which[i]][nf[which[i]]++] = fit[i];
  for (int f = 0; f < 2; f++) {
    cost_kfamily fam[KS_MAX_FAM];
    memcpy(kp, prior, sizeof kp);
    ks_fit_multi(hw, kp, fold[f], nf[f], 8, starts);
    int nfam = families ? ks_fit_families(hw, kp, fold[f], nf[f], fam, KS_MAX_FAM) : 0;
    cv[1 - f].effs = NULL;
    ks_evaluate(hw, kp, fam, nfam, fold[1 - f], nf[1 - f], &cv[1 - f]);
  }
  *out = merge(&cv[0], &cv[1]);
  free(fold[0]);
  free(fold[1]);
  free(which);
  return 0;
}

/* Append set (n shapes) to the fit set. */
static int append(ks_shape **fit, int *n_fit, const ks_shape *set, int n) {
  if (!n) return 0;
  ks_shape *g = realloc(*fit, (size_t)(*n_fit + n) * sizeof(ks_shape));
  if (!g) return -1;
  memcpy(g + *n_fit, set, (size_t)n * sizeof(ks_shape));
  *fit = g;
  *n_fit += n;
  return 0;
}

/* The shapes of set[0..n) in dtype dt, copied to sel; their count. */
static int select_dtype(const ks_shape *set, int n, int dt, ks_shape *sel) {
  int k = 0;
  for (int i = 0; i < n; i++)
    if (set[i].p.dtype == dt) sel[k++] = set[i];
  return k;
}

/* A held-out set scored with the family corrections (in) and without (an). */
static void eval_held(const cost_hw *hw, const ks_shape *set, int n, ks_score *in, ks_score *an) {
  ks_evaluate(hw, NULL, NULL, -1, set, n, in);
  ks_evaluate(hw, NULL, NULL, 0, set, n, an);
}

int main(int argc, char **argv) {
  const char *src = CDPLAN_SOURCE_DIR;
  int do_fit = 0, verbose = 0, fit_only = 0, ccheck = 0, starts = KS_FIT_STARTS,
      splits = KS_CV_SPLITS;
  int cli = bench_cli(argc, argv,
                      "[--verbose] [--fit | --fit-only] [--compile-check | --compile-regs] "
                      "[--starts N] [--splits N] [SOURCE_TREE]",
                      "--fit --verbose --fit-only --compile-check --compile-regs --starts:1 "
                      "--splits:1",
                      1);
  if (cli >= 0) return cli;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--fit"))
      do_fit = 1;
    else if (!strcmp(argv[i], "--verbose"))
      verbose = 1;
    else if (!strcmp(argv[i], "--fit-only"))
      fit_only = 1;
    else if (!strcmp(argv[i], "--compile-check"))
      ccheck = 1;
    else if (!strcmp(argv[i], "--compile-regs"))
      ccheck = 2;
    else if (!strcmp(argv[i], "--starts") && i + 1 < argc)
      starts = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--splits") && i + 1 < argc)
      splits = atoi(argv[++i]);
    else
      src = argv[i]; /* bench_cli let through only the source tree */
  }
  char path[1024];
  cost_hw hw;
  ks_shape *sh = NULL, *ho = NULL, *f2 = NULL, *f3 = NULL, *f4 = NULL, *h2 = NULL, *h3 = NULL,
           *h4 = NULL, *dh2 = NULL, *dh3 = NULL, *h5 = NULL, *dh4 = NULL, *dts = NULL, *dfit = NULL,
           *dheld = NULL, *fit = NULL, *famset = NULL;
  int n_sh = 0, n_ho = 0, n_f2 = 0, n_f3 = 0, n_f4 = 0, n_h2 = 0, n_h3 = 0, n_h4 = 0, n_dh2 = 0,
      n_dh3 = 0, n_h5 = 0, n_dh4 = 0, n_dts = 0, n_dfit = 0, n_dheld = 0, n_fit = 0, n_famset = 0;
  double kp[COST_KP__COUNT];
  snprintf(path, sizeof path, "%s/data/hardware/h200.json", src);
  if (ks_load_hw(path, &hw)) return 1;
  {
    /* the occupancy register scale is a constant from the compile data
     * (twelfth round), not a prior of the fit: the folds take the default */
    double def[COST_KP__COUNT];
    cost_kparams_resolve(&hw, def);
    prior[COST_KP_REG_OCC] =
        getenv("KS_REG_OCC") ? atof(getenv("KS_REG_OCC")) : def[COST_KP_REG_OCC];
  }
  if (getenv("KS_PRIOR_LATER")) {
    double def[COST_KP__COUNT];
    cost_kparams_resolve(&hw, def);
    prior[COST_KP_SC_L1_KB] = def[COST_KP_SC_L1_KB];
    prior[COST_KP_EPI_SC] = def[COST_KP_EPI_SC];
  }
  if (ccheck) {
    ks_cc_score cc;
    snprintf(path, sizeof path, "%s/data/measurements/h200-compile/compile_info.json", src);
    if (ks_compile_check(&hw, path, ccheck, &cc)) return 1;
    printf("compile check: %d configs, feasibility wrong %d (refused but feasible %d; compiled "
           "but over the accumulator rule %d), shared memory exact %d of %d, spill agrees %d of "
           "%d compiled (compiler spills %d, model %d)\n",
           cc.n, cc.feasible_wrong, cc.refused_feasible, cc.compiled_reg_rule, cc.smem_exact,
           cc.smem_n, cc.spill_agree, cc.compiled, cc.spill_compiler, cc.spill_model);
    return 0;
  }
  if (ks_load_set(src, "h200", 0, &sh, &n_sh) || ks_load_set(src, "h200-fit2", 1, &f2, &n_f2) ||
      ks_load_set(src, "h200-fit3", 1, &f3, &n_f3) ||
      ks_load_set(src, "h200-fit4", 1, &f4, &n_f4) ||
      ks_load_set(src, "h200-heldout2", 1, &h2, &n_h2) ||
      ks_load_set(src, "h200-heldout3", 1, &h3, &n_h3) ||
      ks_load_set(src, "h200-dtypes", 1, &dts, &n_dts) ||
      ks_load_set(src, "h200-dtypes-fit", 1, &dfit, &n_dfit) ||
      ks_load_set(src, "h200-dtypes-held", 1, &dheld, &n_dheld) ||
      ks_load_set(src, "h200-heldout4", 1, &h4, &n_h4) ||
      ks_load_set(src, "h200-dtypes-held2", 1, &dh2, &n_dh2) ||
      ks_load_set(src, "h200-dtypes-held3", 1, &dh3, &n_dh3) ||
      ks_load_set(src, "h200-heldout5", 1, &h5, &n_h5) ||
      ks_load_set(src, "h200-dtypes-held4", 1, &dh4, &n_dh4) ||
      ks_load_set(src, "h200-extra", 1, &ho, &n_ho))
    return 1;
  /* The fit set: the shared sweep plus the fit2, fit3 and fit4 sweeps. */
  if (append(&fit, &n_fit, sh, n_sh) || append(&fit, &n_fit, f2, n_f2) ||
      append(&fit, &n_fit, f3, n_f3) || append(&fit, &n_fit, f4, n_f4))
    return 1;
  /* The family corrections' set: the fit set (2-byte) plus the fp8/tf32
   * fitting sweep (entries are keyed by element size, so the 2-byte ones
   * do not see it). */
  if (append(&famset, &n_famset, fit, n_fit) || append(&famset, &n_famset, dfit, n_dfit)) return 1;
  if (do_fit) {
    cost_kfamily fam[KS_MAX_FAM];
    memcpy(kp, prior, sizeof kp);
    double l = ks_fit_multi(&hw, kp, fit, n_fit, 10, starts);
    printf("fitted on %d shapes (%d starts), mean squared log error %.4f:\n", n_fit, starts, l);
    for (int i = 0; i < COST_KP__COUNT; i++) {
      const char *name;
      cost_kparam_info(i, &name, NULL, NULL, NULL);
      printf("  %-22s %.4g\n", name, kp[i]);
    }
    /* Family corrections under the shipped defaults (kernel_space.c), for
     * costmodel/kernel_family.c. */
    cost_kparams_resolve(&hw, kp);
    int nfam = ks_fit_families(&hw, kp, famset, n_famset, fam, KS_MAX_FAM);
    printf("family corrections under the default parameters (%d families):\n", nfam);
    for (int i = 0; i < nfam; i++)
      printf("    {%d, %d, %d, %d, %d, %d, %d, %.3f},\n", fam[i].elem_bytes, fam[i].block_m,
             fam[i].block_n, fam[i].block_k, fam[i].num_warps, fam[i].a_scalar, fam[i].b_scalar,
             fam[i].log_factor);
  }

  /* 2-fold CV over the fit set: the official split (alternate shapes in
   * file order) and the mean over `splits` shuffled ones (docs/kernels.md). */
  ks_score cvm, cva, in_s, in_f2 = {0}, in_f3 = {0}, in_f4 = {0}, in_fit, in_h2 = {0}, held = {0};
  ks_score a_fit, a_h2 = {0}, a_held = {0}, in_h3 = {0}, a_h3 = {0}, all_ho = {0}, a_all = {0};
  ks_score in_h4 = {0}, a_h4 = {0}, held2_dt[2] = {{0}, {0}}, held3_tf32 = {0}, held4_tf32 = {0},
           in_h5 = {0}, a_h5 = {0};
  ks_score by_dt[2] = {{0}, {0}}, fit_dt[2] = {{0}, {0}}, cv_dt[2] = {{0}, {0}},
           held_dt[2] = {{0}, {0}};
  const int other_dt[2] = {COST_DT_FP8, COST_DT_TF32};
  double avg_geo = 0, avg_min = 0, avg_tau = 0, lo_geo = INFINITY, lo_min = INFINITY;
  if (cv_split(&hw, fit, n_fit, 0, starts, 1, &cvm) ||
      cv_split(&hw, fit, n_fit, 0, starts, 0, &cva))
    return 1;
  for (int s = 1; s <= splits; s++) {
    ks_score c;
    if (cv_split(&hw, fit, n_fit, s, starts, 1, &c)) return 1;
    avg_geo += c.eff_geo / splits;
    avg_min += c.eff_min / splits;
    avg_tau += c.tau_mean / splits;
    lo_geo = fmin(lo_geo, c.eff_geo);
    lo_min = fmin(lo_min, c.eff_min);
    if (verbose) printf("cv split %d: %.3f %.3f %.3f\n", s, c.eff_geo, c.eff_min, c.tau_mean);
  }
  in_s.effs = in_f2.effs = in_f3.effs = in_f4.effs = in_fit.effs = in_h2.effs = held.effs = NULL;
  a_fit.effs = a_h2.effs = a_held.effs = NULL;
  ks_evaluate(&hw, NULL, NULL, -1, sh, n_sh, &in_s);
  if (n_f2) ks_evaluate(&hw, NULL, NULL, -1, f2, n_f2, &in_f2);
  if (n_f3) ks_evaluate(&hw, NULL, NULL, -1, f3, n_f3, &in_f3);
  if (n_f4) ks_evaluate(&hw, NULL, NULL, -1, f4, n_f4, &in_f4);
  ks_evaluate(&hw, NULL, NULL, -1, fit, n_fit, &in_fit);
  ks_evaluate(&hw, NULL, NULL, 0, fit, n_fit, &a_fit);
  if (!fit_only && n_h2) {
    eval_held(&hw, h2, n_h2, &in_h2, &a_h2);
  }
  if (!fit_only && n_ho) {
    eval_held(&hw, ho, n_ho, &held, &a_held);
  }
  if (!fit_only && n_dh3) ks_evaluate(&hw, NULL, NULL, -1, dh3, n_dh3, &held3_tf32);
  if (!fit_only && n_dh4) ks_evaluate(&hw, NULL, NULL, -1, dh4, n_dh4, &held4_tf32);
  if (!fit_only && n_h5) {
    eval_held(&hw, h5, n_h5, &in_h5, &a_h5);
  }
  if (!fit_only && n_h4) {
    eval_held(&hw, h4, n_h4, &in_h4, &a_h4);
  }
  if (!fit_only && n_h3) {
    eval_held(&hw, h3, n_h3, &in_h3, &a_h3);
  }
  for (int d = 0; d < 2; d++) {
    ks_shape *sel = calloc((size_t)(n_dts + n_dfit + n_dheld + n_dh2 + 1), sizeof *sel);
    int k;
    if (!sel) return 1;
    if (!fit_only && (k = select_dtype(dts, n_dts, other_dt[d], sel)))
      ks_evaluate(&hw, NULL, NULL, -1, sel, k, &by_dt[d]);
    if (!fit_only && (k = select_dtype(dheld, n_dheld, other_dt[d], sel)))
      ks_evaluate(&hw, NULL, NULL, -1, sel, k, &held_dt[d]);
    if (!fit_only && (k = select_dtype(dh2, n_dh2, other_dt[d], sel)))
      ks_evaluate(&hw, NULL, NULL, -1, sel, k, &held2_dt[d]);
    if ((k = select_dtype(dfit, n_dfit, other_dt[d], sel))) {
      /* In-sample, and 2-fold CV of the family corrections alone (the
       * analytic parameters stay at their defaults, fitted on 2-byte data). */
      double dkp[COST_KP__COUNT];
      ks_score half[2];
      ks_evaluate(&hw, NULL, NULL, -1, sel, k, &fit_dt[d]);
      cost_kparams_resolve(&hw, dkp);
      ks_shape *fold[2] = {calloc((size_t)k, sizeof *sel), calloc((size_t)k, sizeof *sel)};
      int nf[2] = {0, 0};
      if (!fold[0] || !fold[1]) return 1;
      for (int i = 0; i < k; i++) fold[i % 2][nf[i % 2]++] = sel[i];
      for (int f = 0; f < 2; f++) {
        cost_kfamily fam[KS_MAX_FAM];
        int nfam = ks_fit_families(&hw, dkp, fold[f], nf[f], fam, KS_MAX_FAM);
        half[1 - f].effs = NULL;
        ks_evaluate(&hw, dkp, fam, nfam, fold[1 - f], nf[1 - f], &half[1 - f]);
      }
      cv_dt[d] = merge(&half[0], &half[1]);
      free(fold[0]);
      free(fold[1]);
    }
    free(sel);
  }
  if (!fit_only && n_ho && n_h2 && n_h3) {
    all_ho = merge(&held, &in_h2);
    all_ho = merge(&all_ho, &in_h3);
    a_all = merge(&a_held, &a_h2);
    a_all = merge(&a_all, &a_h3);
    if (n_h4) {
      all_ho = merge(&all_ho, &in_h4);
      a_all = merge(&a_all, &a_h4);
    }
    if (n_h5) {
      all_ho = merge(&all_ho, &in_h5);
      a_all = merge(&a_all, &a_h5);
    }
  }
  if (verbose) {
    ks_detail_print(&hw, sh, n_sh, "shared");
    ks_detail_print(&hw, f2, n_f2, "fit2");
    ks_detail_print(&hw, f3, n_f3, "fit3");
    ks_detail_print(&hw, f4, n_f4, "fit4");
    if (!fit_only) {
      ks_detail_print(&hw, h2, n_h2, "held2");
      ks_detail_print(&hw, h3, n_h3, "held3");
      ks_detail_print(&hw, dts, n_dts, "dtypes");
      ks_detail_print(&hw, dheld, n_dheld, "dt-held");
      ks_detail_print(&hw, h4, n_h4, "held4");
      ks_detail_print(&hw, dh2, n_dh2, "dt-held2");
      ks_detail_print(&hw, dh3, n_dh3, "dt-held3");
      ks_detail_print(&hw, h5, n_h5, "held5");
      ks_detail_print(&hw, dh4, n_dh4, "dt-held4");
      ks_detail_print(&hw, ho, n_ho, "held-out");
    }
  }

  /* Selection time: rank 100 default-space candidates per shared shape. */
  cost_kcfg space[COST_KSPACE_MAX];
  cost_kpred out[COST_KSPACE_MAX];
  int ns = cost_kernel_default_space(&hw, COST_DT_BF16, space, COST_KSPACE_MAX);
  int nc = ns < 100 ? ns : 100, reps = 50, nfeas = 0;
  double t0 = now_s();
  for (int r = 0; r < reps; r++)
    for (int i = 0; i < n_sh; i++) cost_kernel_rank(&hw, &sh[i].p, space, nc, out, &nfeas);
  double sel_ms = (now_s() - t0) / (reps * n_sh) * 1e3;

  printf("kernel selection on H200 Triton sweeps (bf16 + fp16, then fp8 / tf32; chosen among "
         "measured configs)\n");
  printf("%-10s %6s  %7s %7s  %7s %7s  %7s %7s\n", "set", "shapes", "top1", "worst", "tau",
         "tau_min", "fixed", "fixed_w");
  row("shared", &in_s);
  row("fit2", &in_f2);
  row("fit3", &in_f3);
  row("fit4", &in_f4);
  row("fit-all", &in_fit);
  row("cv-2fold", &cvm);
  if (!fit_only) {
    row("held-out", &held);
    row("held-out2", &in_h2);
    row("held-out3", &in_h3);
    row("held-out4", &in_h4);
    row("held-out5", &in_h5);
    row("held-all", &all_ho);
    row("fp8", &by_dt[0]);
    row("tf32", &by_dt[1]);
    row("fp8-held", &held_dt[0]);
    row("tf32-held", &held_dt[1]);
    row("fp8-held2", &held2_dt[0]);
    row("tf32-held2", &held2_dt[1]);
    row("tf32-held3", &held3_tf32);
    row("tf32-held4", &held4_tf32);
  }
  row("fp8-fit", &fit_dt[0]);
  row("fp8-fit-cv", &cv_dt[0]);
  row("tf32-fit", &fit_dt[1]);
  row("tf32-fit-cv", &cv_dt[1]);
  printf("analytic terms only (no family corrections):\n");
  row("fit-all", &a_fit);
  row("cv-2fold", &cva);
  if (!fit_only) {
    row("held-out", &a_held);
    row("held-out2", &a_h2);
    row("held-out3", &a_h3);
    row("held-out4", &a_h4);
    row("held-out5", &a_h5);
    row("held-all", &a_all);
  }
  printf("cv mean over %d shuffled splits (%d starts): top1 %.3f worst %.3f tau %.3f "
         "(lowest: top1 %.3f worst %.3f)\n",
         splits, starts, avg_geo, avg_min, avg_tau, lo_geo, lo_min);
  printf("selection: %.3f ms per shape for %d candidates (default space %d)\n", sel_ms, nc, ns);
  printf("{\"bench\":\"kernel_select\",");
  json_set("shared", &in_s, 0);
  json_set("fit2", &in_f2, 0);
  json_set("fit3", &in_f3, 0);
  json_set("fit4", &in_f4, 0);
  json_set("fit_all", &in_fit, 0);
  if (!fit_only) {
    json_set("held_out2", &in_h2, 0);
    json_set("held_out", &held, 0);
    json_set("held_out3", &in_h3, 0);
    json_set("held_out4", &in_h4, 0);
    json_set("held_out5", &in_h5, 0);
    json_set("held_out_all", &all_ho, 0);
    json_set("fp8", &by_dt[0], 0);
    json_set("tf32", &by_dt[1], 0);
    json_set("fp8_held", &held_dt[0], 0);
    json_set("tf32_held", &held_dt[1], 0);
    json_set("fp8_held2", &held2_dt[0], 0);
    json_set("tf32_held2", &held2_dt[1], 0);
    json_set("tf32_held3", &held3_tf32, 0);
    json_set("tf32_held4", &held4_tf32, 0);
    json_set("fp8_fit", &fit_dt[0], 0);
    json_set("fp8_fit_cv", &cv_dt[0], 0);
    json_set("tf32_fit", &fit_dt[1], 0);
    json_set("tf32_fit_cv", &cv_dt[1], 0);
  }
  json_set("cv_2fold", &cvm, 0);
  json_set("analytic_fit_all", &a_fit, 0);
  json_set("analytic_cv_2fold", &cva, 0);
  if (!fit_only) {
    json_set("analytic_held_out2", &a_h2, 0);
    json_set("analytic_held_out", &a_held, 0);
    json_set("analytic_held_out3", &a_h3, 0);
    json_set("analytic_held_out4", &a_h4, 0);
    json_set("analytic_held_out5", &a_h5, 0);
    json_set("analytic_held_out_all", &a_all, 0);
  }
  printf("\"cv_splits\":%d,\"cv_starts\":%d,\"cv_mean_top1_geo\":%.4f,\"cv_mean_top1_worst\":%.4f,"
         "\"cv_mean_tau\":%.4f,",
         splits, starts, avg_geo, avg_min, avg_tau);
  printf("\"select_ms_100\":%.4f,\"default_space\":%d}\n", sel_ms, ns);
  free(sh);
  free(ho);
  free(f2);
  free(f3);
  free(f4);
  free(h2);
  free(h3);
  free(h4);
  free(dh2);
  free(dh3);
  free(h5);
  free(dh4);
  free(dts);
  free(dfit);
  free(dheld);
  free(famset);
  free(fit);
  return 0;
}
