/* bench/kernel_sweep: read a Triton config sweep (the format of
 * data/measurements/h200/triton_configs.json, written by
 * validate/gpu/runner.py kind kernel_sweep) and score the kernel selector
 * on it. Shared by bench/kernel_select and tests/kernels; file reading
 * lives here, not in costmodel/ (which does no I/O). */
#ifndef CDPLAN_BENCH_KERNEL_SWEEP_H
#define CDPLAN_BENCH_KERNEL_SWEEP_H

#include "costmodel/kernel.h"

#define KS_MAX_CFG 256

typedef struct {
  cost_kproblem p;
  int n;
  cost_kcfg cfg[KS_MAX_CFG];
  double ms[KS_MAX_CFG];
} ks_shape;

/* Every row of the file at path; *out malloc'd (caller frees). Rows with
 * an unknown dtype or no configs are skipped. 0, or -1 with a message on
 * stderr (missing file, bad JSON). */
int ks_load(const char *path, ks_shape **out, int *n);

/* ks_load without the configs whose median time is over max_spread times
 * their fastest timed iteration (min_ms): timings the host's launch path or
 * a hiccup disturbed (data/measurements/h200-awkward/README.md). */
int ks_load_stable(const char *path, double max_spread, ks_shape **out, int *n);

/* ks_load of SRC/data/measurements/SET/triton_configs.json. When optional
 * and the file is absent: 0 with *out NULL and *n 0. */
int ks_load_set(const char *src, const char *set, int optional, ks_shape **out, int *n);

/* cm_load_hw (bench/costmodel_load.h) plus the descriptor's arch and
 * vendor, which the tile-config model needs. 0 or -1. */
int ks_load_hw(const char *path, cost_hw *hw);

typedef struct {
  int n;                     /* shapes scored */
  double eff_geo, eff_min;   /* best measured / measured of the chosen */
  double tau_mean, tau_min;  /* Kendall tau, predicted vs measured, per shape */
  double base_geo, base_min; /* the fixed 128x128x64 (4 warps, 3 stages) config */
  int base_n;                /* shapes where the baseline was measured */
  double *effs;              /* per shape (caller-provided, n entries) or NULL */
} ks_score;

/* Score the model with parameter vector kp (NULL: hw's resolved ones) and
 * family corrections fam[0..nfam) (nfam < 0: hw's built-in table; 0: none)
 * on shapes; the chosen config is the best predicted among those measured. */
void ks_evaluate(const cost_hw *hw, const double *kp, const cost_kfamily *fam, int nfam,
                 const ks_shape *shapes, int n, ks_score *s);
/* Mean squared log error of predicted vs measured over every feasible
 * config the model deems feasible (the others it never chooses),
 * for fitting. */
double ks_loss(const cost_hw *hw, const double *kp, const ks_shape *shapes, int n);
/* Coordinate search on ks_loss from kp (updated in place). */
double ks_fit(const cost_hw *hw, double *kp, const ks_shape *shapes, int n, int rounds);
/* ks_fit over the parameters ids[0..n_ids) only (the others stay). */
double ks_fit_subset(const cost_hw *hw, double *kp, const int *ids, int n_ids,
                     const ks_shape *shapes, int n, int rounds);
/* ks_fit from kp, then starts-1 deterministic restarts from the best point
 * so far with every parameter scaled by a pseudo-random factor in
 * [1/1.5, 1.5] (log-uniform, clamped to its bounds); kp gets the lowest
 * loss found. starts <= 1 is ks_fit. */
double ks_fit_multi(const cost_hw *hw, double *kp, const ks_shape *shapes, int n, int rounds,
                    int starts);
/* Family corrections (costmodel/kernel.h) measured on shapes under kp: per
 * family, sum(w * ln(measured / analytic)) / (sum(w) + KS_FAM_SHRINK) over
 * its feasible configs, w = (best / measured)^KS_FAM_WEIGHT_EXP per shape.
 * Writes up to cap entries sorted by family; returns their count. */
int ks_fit_families(const cost_hw *hw, const double *kp, const ks_shape *shapes, int n,
                    cost_kfamily *out, int cap);

/* Kendall tau of x against y (n pairs; ties count neither way). */
double ks_kendall(const double *x, const double *y, int n);

/* Per shape (one line each, prefixed set): the config the shipped model
 * chose among the measured ones against the best measured. */
void ks_detail_print(const cost_hw *hw, const ks_shape *s, int n, const char *set);

/* Split n shapes into two folds: split 0 alternates them in file order
 * (the official split), split s > 0 a deterministic shuffle (seeded by s)
 * cut in halves. fold[i] gets 0 or 1 per shape. */
void ks_split(int n, int split, int *fold);

/* Triton's compile facts (data/measurements/h200-compile/compile_info.json,
 * written by validate/gpu/compile_info.py) against the model's
 * feasibility, shared memory per block and spill term, under hw's resolved
 * parameters. verbose prints each row the model gets wrong. 0 or -1. */
typedef struct {
  int n;                 /* rows checked */
  int feasible_wrong;    /* compiled but called infeasible, or refused but called feasible */
  int refused_feasible;  /* refused by the compiler, feasible in the model */
  int compiled_reg_rule; /* compiled, ruled out by the model's accumulator rule */
  int smem_n;            /* rows with the compiler's shared bytes (used or required) */
  int smem_exact;        /* ... which the model's equal */
  int compiled;          /* rows that compiled */
  int spill_agree;       /* ... where model (spill factor > 1) and compiler (spills > 0) agree */
  int spill_compiler, spill_model;
} ks_cc_score;
int ks_compile_check(const cost_hw *hw, const char *path, int verbose, ks_cc_score *s);

#endif
