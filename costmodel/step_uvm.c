/* step_uvm.c: the fit of the uvm (host-mapped table) terms from the
 * runner's uvm_embedding_bag microbenchmark (cost_uvm_fit, see step.h):
 * one-dimensional golden-section searches (in log space, within each
 * parameter's bounds) of the sum of squared log errors. First the forward
 * rows, by coordinate descent over the read efficiency, the translation
 * miss cost and its reach; then the forward + backward rows for the update
 * efficiency, the rest held. Only rows that the uvm terms dominate take
 * part (select_rows): the others are bound by the host issuing the ops or
 * by the GPU-side sort, which these parameters cannot explain.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "costmodel/step_int.h"

#define LINK_SHARE 0.5

typedef struct {
  const cost_hw *hw;
  const cost_uvm_sample *s;
  size_t n;
  const char *use; /* per row: 1 when it enters the fit of the current pass */
  int pass;        /* 0: fwd, 1: fwd_bwd */
} ufit;

static double meas(const cost_uvm_sample *s, int pass) { return pass ? s->fwd_bwd_ms : s->fwd_ms; }

static double pred(const cost_hw *hw, const double *prof, const cost_uvm_sample *s, int pass) {
  double f, fb;
  if (cost_uvm_bag_p(hw, prof, s, &f, &fb)) return NAN;
  return pass ? fb : f;
}

static double loss(const ufit *u, double *prof) {
  double sum = 0;
  for (size_t i = 0; i < u->n; i++) {
    if (!u->use[i]) continue;
    double e = log(pred(u->hw, prof, &u->s[i], u->pass) / meas(&u->s[i], u->pass));
    sum += isfinite(e) ? e * e : 1e6;
  }
  return sum;
}

static void golden(const ufit *u, double *prof, int id) {
  double lo, hi;
  cost_step_param_info(id, NULL, NULL, &lo, &hi);
  double a = log(fmax(lo, 1e-3)), b = log(hi), g = 0.5 * (sqrt(5.0) - 1.0);
  for (int it = 0; it < 60; it++) {
    double x1 = b - g * (b - a), x2 = a + g * (b - a);
    prof[id] = exp(x1);
    double f1 = loss(u, prof);
    prof[id] = exp(x2);
    double f2 = loss(u, prof);
    if (f1 < f2)
      b = x2;
    else
      a = x1;
  }
  prof[id] = exp(0.5 * (a + b));
}

/* Rows of this pass measured and link-bound: the prediction without the
 * uvm terms (link 1000x faster, no translation misses) is at most
 * LINK_SHARE of the measured time. Returns the count. */
static int select_rows(ufit *u, char *use, const double *prof) {
  double fast[COST_SP__COUNT];
  memcpy(fast, prof, sizeof fast);
  fast[COST_SP_UVM_READ_EFF] = fast[COST_SP_UVM_UPDATE_EFF] = 1000.0;
  fast[COST_SP_UVM_WALK_NS] = 0;
  int k = 0;
  for (size_t i = 0; i < u->n; i++) {
    const cost_uvm_sample *s = &u->s[i];
    double m = meas(s, u->pass), rest = pred(u->hw, fast, s, u->pass);
    use[i] = m > 0 && isfinite(rest) && rest <= LINK_SHARE * m;
    k += use[i];
  }
  return k;
}

static void errors(const ufit *u, const double *prof, int pass, double *med, double *mx) {
  double *e = malloc((u->n + 1) * sizeof *e);
  int k = 0;
  *med = NAN, *mx = 0;
  if (!e) return;
  for (size_t i = 0; i < u->n; i++) {
    double m = meas(&u->s[i], pass), p = pred(u->hw, prof, &u->s[i], pass);
    if (!(m > 0) || !isfinite(p)) continue;
    e[k] = fabs(p / m - 1);
    *mx = fmax(*mx, e[k++]);
  }
  *med = step_median(e, k);
  free(e);
}

int cost_uvm_fit(const cost_hw *hw, const cost_uvm_sample *s, size_t n, cost_calib *calib,
                 cost_uvm_fit_report *rep) {
  if (!hw || !s || !calib || n == 0) return COST_EINVAL;
  if (!(hw->host_link_bw > 0)) return COST_ENOHW;
  double def[COST_SP__COUNT], prof[COST_SP__COUNT];
  cost_hw base = *hw;
  base.calib.n = 0; /* start from the defaults, as every fit does */
  step_profile_resolve(&base, def);
  step_profile_resolve(hw, prof); /* the op models' calibration stays in use */
  prof[COST_SP_UVM_READ_EFF] = def[COST_SP_UVM_READ_EFF];
  prof[COST_SP_UVM_UPDATE_EFF] = def[COST_SP_UVM_UPDATE_EFF];
  char *use = calloc(n, 1);
  if (!use) return COST_ENOHW;
  ufit u = {.hw = hw, .s = s, .n = n, .use = use};
  int k[2];
  double before[2][2];
  for (int pass = 0; pass < 2; pass++) errors(&u, prof, pass, &before[pass][0], &before[pass][1]);
  for (int pass = 0; pass < 2; pass++) {
    u.pass = pass;
    k[pass] = select_rows(&u, use, prof);
    if (!k[pass]) continue;
    if (pass) {
      golden(&u, prof, COST_SP_UVM_UPDATE_EFF);
      continue;
    }
    /* the link rate and the translation floor: for each reach on a log
     * grid (64 MB .. 64 GB, 8 points per octave), coordinate descent of the
     * rate and the miss cost; the reach with the least loss wins (a
     * search over the reach itself is flat wherever no table outgrows it) */
    double best = INFINITY, keep[COST_SP__COUNT];
    for (int g = 0; g <= 80; g++) {
      prof[COST_SP_UVM_REACH_MB] = 64.0 * pow(2.0, g / 8.0);
      for (int cyc = 0; cyc < 4; cyc++) {
        golden(&u, prof, COST_SP_UVM_READ_EFF);
        golden(&u, prof, COST_SP_UVM_WALK_NS);
      }
      double l = loss(&u, prof);
      if (l < best) best = l, memcpy(keep, prof, sizeof keep);
    }
    memcpy(prof, keep, sizeof keep);
  }
  free(use);
  if (!k[0] && !k[1]) return COST_EINVAL;
  if (rep) {
    memset(rep, 0, sizeof *rep);
    rep->n_fwd = k[0], rep->n_fwd_bwd = k[1];
    memcpy(rep->values, prof, sizeof rep->values);
    for (int pass = 0; pass < 2; pass++) {
      rep->median_err_before[pass] = before[pass][0];
      errors(&u, prof, pass, &rep->median_err_after[pass], &rep->max_err_after[pass]);
    }
  }
  static const int ids[2][3] = {{COST_SP_UVM_READ_EFF, COST_SP_UVM_WALK_NS, COST_SP_UVM_REACH_MB},
                                {COST_SP_UVM_UPDATE_EFF, -1, -1}};
  const char *name;
  int rc = 0;
  for (int pass = 0; pass < 2 && !rc; pass++)
    for (int j = 0; j < 3 && !rc && k[pass]; j++) {
      if (ids[pass][j] < 0) continue;
      cost_step_param_info(ids[pass][j], &name, NULL, NULL, NULL);
      rc = cost_calib_set(calib, name, prof[ids[pass][j]]);
    }
  return rc;
}
