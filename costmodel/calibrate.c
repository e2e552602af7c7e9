/* calibrate.c: fit the model's physical parameters to measured times.
 *
 * Objective: sum_j w_j * log(pred_j / meas_j)^2, w_j = 1 / n_class(j) so
 * every op class weighs the same however many samples it has. Unknowns are
 * the logs of the parameters (all positive; relative steps), kept inside
 * their bounds by projection. Solver: Levenberg-Marquardt (Marquardt 1963,
 * scaled diagonal damping) with a forward-difference Jacobian; parameters
 * that no sample moves stay at their current values. The model's max()
 * terms make the objective piecewise smooth; LM copes since each step is
 * accepted only when it lowers the objective.
 * Only this file allocates (O(n * params) scratch, freed before return).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "costmodel/costmodel_int.h"

int cost_sample_predict_p(const cost_hw *hw, const double *p, const cost_sample *s,
                          cost_result *out) {
  switch (s->kind) {
  case COST_OP_GEMM:
    return cost_gemm_p(hw, p, &s->u.gemm, out);
  case COST_OP_ELEMENTWISE:
    return cost_elementwise_p(hw, p, &s->u.ew, out);
  case COST_OP_EMBEDDING:
    return cost_embedding_p(hw, p, &s->u.emb, out);
  default:
    cost_result_clear(out);
    return COST_EINVAL;
  }
}

int cost_sample_predict(const cost_hw *hw, const cost_sample *s, cost_result *out) {
  double p[P__COUNT];
  cost_params_resolve(hw, p);
  return cost_sample_predict_p(hw, p, s, out);
}

int cost_sample_class(const cost_sample *s) {
  switch (s->kind) {
  case COST_OP_GEMM:
    return COST_CLASS_GEMM;
  case COST_OP_ELEMENTWISE:
    return COST_CLASS_ELEMENTWISE;
  case COST_OP_EMBEDDING:
    return s->u.emb.pass == COST_EMB_FWD_BWD ? COST_CLASS_EMB_FWD_BWD : COST_CLASS_EMB_FWD;
  default:
    return -1;
  }
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median and p90 (nearest rank) of v[0..n), sorted in place. */
static void med_p90(double *v, size_t n, double *med, double *p90) {
  if (n == 0) {
    *med = *p90 = NAN;
    return;
  }
  qsort(v, n, sizeof *v, cmp_double);
  *med = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  size_t k = (size_t)ceil(0.9 * (double)n);
  *p90 = v[k == 0 ? 0 : k - 1];
}

void cost_error_stats(const cost_hw *hw, const cost_sample *samples, size_t n, double *scratch,
                      double *median, double *p90) {
  double p[P__COUNT];
  cost_params_resolve(hw, p);
  size_t m = 0;
  for (size_t i = 0; i < n; i++) {
    cost_result r;
    if (!(samples[i].ms > 0) || cost_sample_predict_p(hw, p, &samples[i], &r) != 0) continue;
    scratch[m++] = fabs(r.ms / samples[i].ms - 1.0);
  }
  med_p90(scratch, m, median, p90);
}

/* Per-class errors under parameter vector p (into rep fields). */
static void class_errors(const cost_hw *hw, const double *p, const cost_sample *s, size_t n,
                         double *scratch, cost_fit_report *rep, int after) {
  for (int c = 0; c < COST_CLASS__COUNT; c++) {
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
      cost_result r;
      if (cost_sample_class(&s[i]) != c || !(s[i].ms > 0)) continue;
      if (cost_sample_predict_p(hw, p, &s[i], &r) != 0) continue;
      scratch[m++] = fabs(r.ms / s[i].ms - 1.0);
    }
    cost_fit_class *fc = &rep->cls[c];
    const char *nm = cost_class_name(c);
    size_t k = 0;
    for (; nm[k] && k + 1 < sizeof fc->name; k++) fc->name[k] = nm[k];
    fc->name[k] = '\0';
    fc->n = (int)m;
    double med, p90;
    med_p90(scratch, m, &med, &p90);
    if (after) {
      fc->median_after = med;
      fc->p90_after = p90;
    } else {
      fc->median_before = med;
      fc->p90_before = p90;
    }
  }
}

typedef struct {
  const cost_hw *hw;
  const cost_sample *s;
  const int *idx; /* usable samples */
  double *w;      /* class weight x robust (Cauchy) weight */
  size_t n;
} fit_ctx;

/* Cauchy weights for the next LM pass (iteratively reweighted least
 * squares, Holland & Welsch 1977): a sample off by much more than
 * ROBUST_C in log time stops steering the fit, so a few shapes the model
 * does not capture cannot drag the typical case. */
#define ROBUST_C 0.10
static void reweight(fit_ctx *f, const double *p, const double *base) {
  for (size_t j = 0; j < f->n; j++) {
    cost_result res;
    const cost_sample *s = &f->s[f->idx[j]];
    double e = 0;
    if (cost_sample_predict_p(f->hw, p, s, &res) == 0 && res.ms > 0) e = log(res.ms / s->ms);
    f->w[j] = base[j] / (1.0 + (e / ROBUST_C) * (e / ROBUST_C));
  }
}

/* Residuals r[j] = sqrt(w) * log(pred/meas); returns the weighted SSE. */
static double residuals(const fit_ctx *f, const double *p, double *r) {
  double sse = 0;
  for (size_t j = 0; j < f->n; j++) {
    cost_result res;
    const cost_sample *s = &f->s[f->idx[j]];
    double v = 0;
    if (cost_sample_predict_p(f->hw, p, s, &res) == 0 && res.ms > 0)
      v = sqrt(f->w[j]) * log(res.ms / s->ms);
    r[j] = v;
    sse += v * v;
  }
  return sse;
}

/* Solve (A) x = b for symmetric positive definite A (n x n) by Cholesky;
 * returns -1 when A is not positive definite. */
static int chol_solve(double *A, double *b, int n) {
  for (int j = 0; j < n; j++) {
    double d = A[j * n + j];
    for (int k = 0; k < j; k++) d -= A[j * n + k] * A[j * n + k];
    if (!(d > 0)) return -1;
    d = sqrt(d);
    A[j * n + j] = d;
    for (int i = j + 1; i < n; i++) {
      double v = A[i * n + j];
      for (int k = 0; k < j; k++) v -= A[i * n + k] * A[j * n + k];
      A[i * n + j] = v / d;
    }
  }
  for (int i = 0; i < n; i++) {
    double v = b[i];
    for (int k = 0; k < i; k++) v -= A[i * n + k] * b[k];
    b[i] = v / A[i * n + i];
  }
  for (int i = n - 1; i >= 0; i--) {
    double v = b[i];
    for (int k = i + 1; k < n; k++) v -= A[k * n + i] * b[k];
    b[i] = v / A[i * n + i];
  }
  return 0;
}

static double clampd(double v, double lo, double hi) { return v < lo ? lo : (v > hi ? hi : v); }

static double lo_of(int i) { return fmax(cost_param_table[i].lo, 1e-3); }

int cost_calibrate(const cost_hw *hw, const cost_sample *samples, size_t n, cost_calib *out,
                   cost_fit_report *rep) {
  int rc = COST_EINVAL;
  int *idx = NULL;
  double *w = NULL, *base = NULL, *r = NULL, *r2 = NULL, *J = NULL, *scratch = NULL;
  double p[P__COUNT], trial[P__COUNT];
  int act[P__COUNT], na = 0;
  size_t m = 0, cnt[COST_CLASS__COUNT] = {0};
  if (rep) memset(rep, 0, sizeof *rep);
  if (!hw || !out || (!samples && n > 0)) return COST_EINVAL;
  cost_params_resolve(hw, p);
  for (int i = 0; i < P__COUNT; i++) p[i] = clampd(p[i], lo_of(i), cost_param_table[i].hi);

  idx = malloc((n ? n : 1) * sizeof *idx);
  w = malloc((n ? n : 1) * sizeof *w);
  r = malloc((n ? n : 1) * sizeof *r);
  r2 = malloc((n ? n : 1) * sizeof *r2);
  scratch = malloc((n ? n : 1) * sizeof *scratch);
  if (!idx || !w || !r || !r2 || !scratch) goto cleanup;
  for (size_t i = 0; i < n; i++) {
    cost_result res;
    int c = cost_sample_class(&samples[i]);
    if (c < 0 || !(samples[i].ms > 0) || !isfinite(samples[i].ms) ||
        cost_sample_predict_p(hw, p, &samples[i], &res) != 0)
      continue;
    idx[m++] = (int)i;
    cnt[c]++;
  }
  if (rep) {
    rep->n_samples = (int)m;
    rep->n_skipped = (int)(n - m);
    class_errors(hw, p, samples, n, scratch, rep, 0);
  }
  if (m == 0) goto cleanup;
  for (size_t j = 0; j < m; j++) w[j] = 1.0 / (double)cnt[cost_sample_class(&samples[idx[j]])];
  base = malloc(m * sizeof *base);
  if (!base) goto cleanup;
  memcpy(base, w, m * sizeof *w);
  fit_ctx f = {hw, samples, idx, w, m};
  double sse = residuals(&f, p, r), sse0 = sse;

  /* Active parameters: those a 5% change moves some prediction. */
  for (int i = 0; i < P__COUNT; i++) {
    memcpy(trial, p, sizeof p);
    trial[i] = p[i] * 1.05 + 1e-9;
    residuals(&f, trial, r2);
    double d = 0;
    for (size_t j = 0; j < m; j++) d += fabs(r2[j] - r[j]);
    if (d > 1e-9) act[na++] = i;
  }
  J = malloc(m * (size_t)(na ? na : 1) * sizeof *J);
  if (!J) goto cleanup;
  double lambda = 1e-2;
  int it = 0;
  for (int pass = 0; pass < 4 && na > 0; pass++) {
    if (pass > 0) {
      reweight(&f, p, base);
      sse = residuals(&f, p, r);
      lambda = 1e-2;
    }
    for (int pit = 0; pit < 60; pit++, it++) {
      /* Jacobian in log-parameter space, forward differences. */
      for (int a = 0; a < na; a++) {
        int i = act[a];
        memcpy(trial, p, sizeof p);
        double h = 1e-4;
        trial[i] = p[i] * exp(h);
        if (trial[i] > cost_param_table[i].hi) {
          h = -h;
          trial[i] = p[i] * exp(h);
        }
        residuals(&f, trial, r2);
        for (size_t j = 0; j < m; j++) J[j * na + a] = (r2[j] - r[j]) / h;
      }
      double JTJ[P__COUNT * P__COUNT], g[P__COUNT];
      for (int a = 0; a < na; a++) {
        g[a] = 0;
        for (int c = 0; c < na; c++) JTJ[a * na + c] = 0;
      }
      for (size_t j = 0; j < m; j++)
        for (int a = 0; a < na; a++) {
          double ja = J[j * na + a];
          if (ja == 0) continue;
          g[a] += ja * r[j];
          for (int c = 0; c < na; c++) JTJ[a * na + c] += ja * J[j * na + c];
        }
      int improved = 0;
      for (int tries = 0; tries < 12 && !improved; tries++) {
        double A[P__COUNT * P__COUNT], d[P__COUNT];
        for (int a = 0; a < na; a++) {
          for (int c = 0; c < na; c++) A[a * na + c] = JTJ[a * na + c];
          A[a * na + a] += lambda * (JTJ[a * na + a] + 1e-9);
          d[a] = -g[a];
        }
        if (chol_solve(A, d, na) != 0) {
          lambda *= 10;
          continue;
        }
        memcpy(trial, p, sizeof p);
        for (int a = 0; a < na; a++) {
          int i = act[a];
          double step = clampd(d[a], -1.0, 1.0); /* at most e^1 per iteration */
          trial[i] = clampd(p[i] * exp(step), lo_of(i), cost_param_table[i].hi);
        }
        double s2 = residuals(&f, trial, r2);
        if (s2 < sse) {
          memcpy(p, trial, sizeof p);
          memcpy(r, r2, m * sizeof *r);
          improved = sse - s2 > 1e-12 * sse ? 1 : 2;
          sse = s2;
          lambda = fmax(lambda / 3, 1e-7);
        } else {
          lambda *= 4;
        }
      }
      if (improved != 1) break;
    }
  }
  memcpy(w, base, m * sizeof *w);
  sse = residuals(&f, p, r);

  memset(out, 0, sizeof *out);
  out->n = P__COUNT;
  for (int i = 0; i < P__COUNT; i++) {
    size_t k = 0;
    for (; cost_param_table[i].name[k] && k + 1 < sizeof out->names[i]; k++)
      out->names[i][k] = cost_param_table[i].name[k];
    out->names[i][k] = '\0';
    out->values[i] = p[i];
  }
  if (rep) {
    rep->iterations = it;
    double wsum = 0;
    for (size_t j = 0; j < m; j++) wsum += w[j];
    rep->rms_log_before = sqrt(sse0 / wsum);
    rep->rms_log_after = sqrt(sse / wsum);
    class_errors(hw, p, samples, n, scratch, rep, 1);
  }
  rc = 0;
cleanup:
  free(idx);
  free(w);
  free(base);
  free(r);
  free(r2);
  free(J);
  free(scratch);
  return rc;
}

/* ---- Per-architecture fit on published GEMM throughputs ----------------- */

/* log(pred/meas) of row r with parameter id set to v (others as resolved
 * for the row's own descriptor); 0 and *ok = 0 when the model refuses. */
static double arch_log_err(const cost_arch_row *r, int id, double v, int *ok) {
  double p[P__COUNT];
  cost_result res;
  cost_params_resolve(&r->hw, p);
  if (id >= 0) p[id] = v;
  *ok = cost_gemm_p(&r->hw, p, &r->s.u.gemm, &res) == 0 && res.ms > 0;
  return *ok ? log(res.ms / r->s.ms) : 0;
}

/* Cauchy loss of the rows of parameter id at value v. */
static double arch_loss(const cost_arch_row *rows, size_t n, int id, double v) {
  double L = 0;
  for (size_t i = 0; i < n; i++) {
    int ok;
    if (rows[i].s.kind != COST_OP_GEMM || cost_gemm_eff_param(rows[i].s.u.gemm.dtype) != id)
      continue;
    double e = arch_log_err(&rows[i], id, v, &ok) / ROBUST_C;
    if (ok) L += log1p(e * e);
  }
  return L;
}

static double arch_median_err(const cost_arch_row *rows, size_t n, const cost_calib *c,
                              double *scratch) {
  size_t m = 0;
  for (size_t i = 0; i < n; i++) {
    if (rows[i].s.kind != COST_OP_GEMM || !(rows[i].s.ms > 0)) continue;
    int id = cost_gemm_eff_param(rows[i].s.u.gemm.dtype), ok;
    double v = NAN;
    for (int k = 0; c && k < c->n; k++)
      if (!strcmp(c->names[k], cost_param_table[id].name)) v = c->values[k];
    double e = arch_log_err(&rows[i], isnan(v) ? -1 : id, v, &ok);
    if (ok) scratch[m++] = fabs(exp(e) - 1.0);
  }
  double med, p90;
  med_p90(scratch, m, &med, &p90);
  return med;
}

int cost_calibrate_arch(const cost_arch_row *rows, size_t n, cost_calib *out,
                        cost_arch_fit_report *rep) {
  int used[P__COUNT] = {0}, nrows = 0;
  if (rep) memset(rep, 0, sizeof *rep);
  if (!out || (!rows && n > 0)) return COST_EINVAL;
  memset(out, 0, sizeof *out);
  for (size_t i = 0; i < n; i++) {
    int ok;
    if (rows[i].s.kind != COST_OP_GEMM || !(rows[i].s.ms > 0) || !isfinite(rows[i].s.ms)) continue;
    arch_log_err(&rows[i], -1, 0, &ok);
    if (!ok) continue;
    used[cost_gemm_eff_param(rows[i].s.u.gemm.dtype)] = 1;
    nrows++;
  }
  if (nrows == 0) return COST_EINVAL;
  double *scratch = malloc(n * sizeof *scratch);
  if (!scratch) return COST_EINVAL;
  out->per_arch = 1;
  for (int id = 0; id < P__COUNT; id++) {
    if (!used[id]) continue;
    /* Golden-section search on log(eff) over the parameter's bounds: the
     * loss of one scale on log time is unimodal in practice (each row's
     * time falls monotonically with the efficiency). */
    double a = log(lo_of(id)), b = log(cost_param_table[id].hi);
    const double g = 0.5 * (sqrt(5.0) - 1.0);
    double x1 = b - g * (b - a), x2 = a + g * (b - a);
    double f1 = arch_loss(rows, n, id, exp(x1)), f2 = arch_loss(rows, n, id, exp(x2));
    for (int it = 0; it < 80 && b - a > 1e-7; it++) {
      if (f1 <= f2) {
        b = x2, x2 = x1, f2 = f1;
        x1 = b - g * (b - a);
        f1 = arch_loss(rows, n, id, exp(x1));
      } else {
        a = x1, x1 = x2, f1 = f2;
        x2 = a + g * (b - a);
        f2 = arch_loss(rows, n, id, exp(x2));
      }
    }
    size_t k = 0;
    for (; cost_param_table[id].name[k] && k + 1 < sizeof out->names[0]; k++)
      out->names[out->n][k] = cost_param_table[id].name[k];
    out->names[out->n][k] = '\0';
    out->values[out->n++] = exp(0.5 * (a + b));
  }
  if (rep) {
    rep->n_rows = nrows;
    rep->n_params = out->n;
    rep->median_before = arch_median_err(rows, n, NULL, scratch);
    rep->median_after = arch_median_err(rows, n, out, scratch);
  }
  free(scratch);
  return 0;
}

int cost_calib_set(cost_calib *c, const char *name, double v) {
  for (int i = 0; i < c->n && i < COST_MAX_CALIB; i++)
    if (!strcmp(c->names[i], name)) {
      c->values[i] = v;
      return 0;
    }
  if (c->n >= COST_MAX_CALIB) return COST_ENOHW;
  snprintf(c->names[c->n], sizeof c->names[c->n], "%s", name);
  c->values[c->n++] = v;
  return 0;
}

int cost_calib_has(const cost_calib *c, const char *name) {
  for (int i = 0; i < c->n; i++)
    if (!strcmp(c->names[i], name)) return 1;
  return 0;
}

void cost_calib_fill(cost_calib *c, const cost_calib *base) {
  if (!c || !base) return;
  for (int i = 0; i < base->n && i < COST_MAX_CALIB; i++) {
    if (cost_calib_has(c, base->names[i]) || c->n >= COST_MAX_CALIB) continue;
    memcpy(c->names[c->n], base->names[i], sizeof c->names[0]);
    c->values[c->n++] = base->values[i];
  }
}
