/* step_valfit.c: the step-level calibration from whole-step validation runs
 * (costmodel/step.h, cost_step_val_fit): step_dlrm_gpu_scale and
 * step_uvm_link_scale by least squares on log step time.
 *
 * The objective is one- or two-dimensional and smooth in log g, log u
 * between the model's max() kinks, so a coordinate-wise golden-section
 * search (Kiefer 1953) on the logs, inside the profile table's bounds,
 * finds its minimum in a few hundred step evaluations: no Jacobian, no
 * scratch. Pure: no I/O, no allocation.
 */
#include <math.h>
#include <string.h>

#include "costmodel/step_int.h"

typedef struct {
  const cost_hw *hw;
  const cost_step_sample *s;
  size_t n;
  double prof[COST_SP__COUNT];
} vf_ctx;

static int has_uvm(const cost_step_sample *s) {
  if (s->w.kind != COST_WL_DLRM) return 0;
  for (size_t i = 0; i < s->w.dlrm.n_tables; i++) {
    int p = s->w.dlrm.tables[i].placement;
    if (p == COST_PLACE_UVM || (p < 0 && s->r.placement == COST_PLACE_UVM)) return 1;
  }
  return 0;
}

/* Sum of squared log errors at (g, u); *used: samples priced. */
static double sse(vf_ctx *c, double g, double u, int *used) {
  double t = 0;
  int k = 0;
  c->prof[COST_SP_DLRM_GPU_SCALE] = g;
  c->prof[COST_SP_UVM_LINK_SCALE] = u;
  for (size_t i = 0; i < c->n; i++) {
    cost_step_result r;
    if (!(c->s[i].step_ms > 0)) continue;
    if (cost_step_p(c->hw, c->prof, &c->s[i].w, &c->s[i].r, &r) || !(r.step_ms > 0)) continue;
    double e = log(r.step_ms / c->s[i].step_ms);
    t += e * e;
    k++;
  }
  if (used) *used = k;
  return t;
}

/* Golden-section search of log v in [log lo, log hi] with the other scale
 * fixed (which: 0 = g, 1 = u). */
static double golden(vf_ctx *c, int which, double g, double u, double lo, double hi) {
  const double R = 0.6180339887498949;
  double a = log(lo), b = log(hi);
  double x1 = b - R * (b - a), x2 = a + R * (b - a);
  double f1 = which ? sse(c, g, exp(x1), NULL) : sse(c, exp(x1), u, NULL);
  double f2 = which ? sse(c, g, exp(x2), NULL) : sse(c, exp(x2), u, NULL);
  for (int it = 0; it < 48 && b - a > 1e-6; it++) {
    if (f1 <= f2) {
      b = x2, x2 = x1, f2 = f1;
      x1 = b - R * (b - a);
      f1 = which ? sse(c, g, exp(x1), NULL) : sse(c, exp(x1), u, NULL);
    } else {
      a = x1, x1 = x2, f1 = f2;
      x2 = a + R * (b - a);
      f2 = which ? sse(c, g, exp(x2), NULL) : sse(c, exp(x2), u, NULL);
    }
  }
  return exp(0.5 * (a + b));
}

/* Whether the scale (which: 0 = g, 1 = u) changes the objective f0 at
 * either bound by more than a rounding error. */
static int moves(vf_ctx *c, int which, double g, double u, double lo, double hi, double f0) {
  double a = which ? sse(c, g, lo, NULL) : sse(c, lo, u, NULL);
  double b = which ? sse(c, g, hi, NULL) : sse(c, hi, u, NULL);
  double tol = 1e-9 * (1.0 + f0);
  return fabs(a - f0) > tol || fabs(b - f0) > tol;
}

int cost_step_val_fit(const cost_hw *hw, const cost_step_sample *s, size_t n, cost_calib *calib,
                      cost_step_val_report *rep) {
  vf_ctx c = {.hw = hw, .s = s, .n = n};
  double glo, ghi, ulo, uhi, g, u;
  int used = 0, n_uvm = 0, n_hbm = 0;
  if (rep) memset(rep, 0, sizeof *rep);
  if (!hw || !calib || (!s && n)) return COST_EINVAL;
  step_profile_resolve(hw, c.prof);
  cost_step_param_info(COST_SP_DLRM_GPU_SCALE, NULL, NULL, &glo, &ghi);
  cost_step_param_info(COST_SP_UVM_LINK_SCALE, NULL, NULL, &ulo, &uhi);
  g = c.prof[COST_SP_DLRM_GPU_SCALE];
  u = c.prof[COST_SP_UVM_LINK_SCALE];
  double before = sse(&c, g, u, &used);
  if (!used) return COST_EINVAL;
  for (size_t i = 0; i < n; i++) {
    if (!(s[i].step_ms > 0) || s[i].w.kind != COST_WL_DLRM) continue;
    if (has_uvm(&s[i]))
      n_uvm++;
    else
      n_hbm++;
  }
  /* g needs a DLRM sample; u one with uvm tables. With uvm rows only, g
   * and u are not separable: u alone is fitted (g kept). A scale that does
   * not move the objective between its bounds (a host-bound step: the GPU's
   * time is hidden) is not informed by the rows and is kept. */
  int fit_g = n_hbm > 0 && moves(&c, 0, g, u, glo, ghi, before);
  int fit_u = n_uvm > 0 && moves(&c, 1, g, u, ulo, uhi, before);
  if (!fit_g && !fit_u) return COST_EINVAL;
  for (int round = 0; round < 6 && (fit_g || fit_u); round++) {
    if (fit_g) g = golden(&c, 0, g, u, glo, ghi);
    if (fit_u) u = golden(&c, 1, g, u, ulo, uhi);
    if (!(fit_g && fit_u)) break;
  }
  double after = sse(&c, g, u, NULL);
  if ((fit_g && cost_calib_set(calib, "step_dlrm_gpu_scale", g)) ||
      (fit_u && cost_calib_set(calib, "step_uvm_link_scale", u)))
    return COST_ENOHW;
  if (rep) {
    rep->n = used;
    rep->n_uvm = n_uvm;
    rep->fitted_g = fit_g;
    rep->fitted_u = fit_u;
    rep->g = g;
    rep->u = u;
    rep->rms_log_before = sqrt(before / used);
    rep->rms_log_after = sqrt(after / used);
  }
  return 0;
}
