/* emb_lagr.c: the decomposition's root LP, when it has no integer columns
 * (no class is "large": more than LP_ONLY_CLASSES classes), solved
 * through its Lagrangian dual instead of GLPK's simplex.
 *
 * Without the big-item rows the LP (emb_agg.c, build) is
 *   min L  s.t.  fixed + sum a_co x_co <= L    (average load, ms)
 *                sum m_co x_co <= M            (average HBM, GB)
 *                sum h_co x_co <= H            (host memory, all nodes, TB)
 *                sum_o x_co = n_c, x >= 0,
 * a multiple-choice LP with two coupling rows once L is eliminated.
 * Relaxing them with multipliers (lm, lh) >= 0 gives, for every (lm, lh),
 *   g(lm, lh) = fixed + sum_c n_c min_o (a_co + lm m_co + lh h_co) - lm M - lh H
 * <= the LP optimum (weak duality), with equality at the best multipliers
 * (LP duality; Geoffrion, "Lagrangean relaxation for integer programming",
 * Math. Programming Study 2, 1974, section 3). g is concave; each is found
 * by bisection on the sign of its supergradient (the memory the minimising
 * choice uses minus the capacity), host memory outside, HBM inside.
 * Every g evaluated is a valid bound, so stopping early only weakens it.
 * The choice returned is the minimiser on the feasible side of the last
 * bracket (each table one option: at most two of them differ from an LP
 * vertex's fractional tables, which the rounding would settle anyway).
 *
 * Why: at heavy 10000 x 4096 GLPK's primal simplex took ~3.9 s of the 4 s
 * stage 1 may use on this box (2026-12-05), so the answer ended on the
 * clock and differed by run (9.0-14.9 % gap at 10 s); this takes a fixed
 * number of passes over the options (a work count, not a clock).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "planner/planner_int.h"

#define INNER_STEPS 50
#define OUTER_STEPS 40
#define DOUBLINGS 60 /* 1e-6 * 4^60: far above any ms per GB or per TB */
/* option visits: past this the bisections stop at their feasible end (a
 * weaker but valid bound); ~1 s at 10000 tables on this box */
#define VISITS_CAP 3e8

typedef struct {
  const emb_inst *in;
  double *a, *m, *h; /* per class x option: load ms, HBM GB, host TB (NAN: not ok) */
  double M, H;
  double visits;
  double best; /* the largest g evaluated */
} lagr;

/* One pass: the minimiser of every class at (lm, lh) into ch (may be
 * NULL); the memory and host the choice uses into *um, *uh; g into best. */
static void eval(lagr *q, double lm, double lh, int *ch, double *um, double *uh) {
  const emb_inst *in = q->in;
  double g = in->fixed_ms - lm * q->M - lh * q->H;
  *um = 0, *uh = 0;
  for (size_t c = 0; c < in->nclass; c++) {
    const double *a = q->a + c * (size_t)in->nopt, *m = q->m + c * (size_t)in->nopt,
                 *h = q->h + c * (size_t)in->nopt;
    int bo = -1;
    double bv = INFINITY;
    for (int o = 0; o < in->nopt; o++) {
      if (isnan(a[o])) continue;
      double v = a[o] + lm * m[o] + lh * h[o], tol = bo < 0 ? 0 : 1e-12 * fabs(bv);
      /* ties: the option of less memory (the feasible side) */
      if (bo < 0 || v < bv - tol || (v <= bv + tol && m[o] < m[bo])) bv = v, bo = o;
    }
    double cnt = (double)in->cls_count[c];
    g += cnt * bv;
    *um += cnt * m[bo], *uh += cnt * h[bo];
    if (ch) ch[c] = bo;
  }
  q->visits += (double)in->nclass * in->nopt;
  if (g > q->best) q->best = g;
}

/* The HBM multiplier for a given lh: the smallest lm whose minimiser fits
 * M (bisection), its choice into ch; *uh its host memory. -1 when no lm
 * fits (the LP is infeasible or nearly). */
static int inner(lagr *q, double lh, int *ch, double *uh) {
  double um, lo = 0, hi;
  eval(q, 0, lh, ch, &um, uh);
  if (um <= q->M) return 0;
  /* a scale for lm: ms per GB across the options */
  hi = 1e-6;
  for (int k = 0; k < DOUBLINGS; k++, hi *= 4) {
    eval(q, hi, lh, ch, &um, uh);
    if (um <= q->M) break;
    lo = hi;
  }
  if (um > q->M) return -1;
  for (int k = 0; k < INNER_STEPS && hi - lo > 1e-12 * hi && q->visits < VISITS_CAP; k++) {
    double mid = 0.5 * (lo + hi), um2, uh2;
    eval(q, mid, lh, NULL, &um2, &uh2);
    if (um2 <= q->M)
      hi = mid;
    else
      lo = mid;
  }
  eval(q, hi, lh, ch, &um, uh);
  return 0;
}

int emb_lagr_solve(const emb_inst *in, int *choice_cls, double *bound, double *visits) {
  lagr q = {.in = in, .best = -INFINITY};
  size_t no = in->nclass * (size_t)in->nopt;
  int rc = -1;
  q.a = malloc((no ? no : 1) * sizeof *q.a);
  q.m = malloc((no ? no : 1) * sizeof *q.m);
  q.h = malloc((no ? no : 1) * sizeof *q.h);
  if (!q.a || !q.m || !q.h) goto cleanup;
  /* the coefficients of emb_agg.c's build, uniform work through U, Um */
  double R = in->R;
  q.M = in->p->cap_bytes / 1e9, q.H = in->host_cap * in->N / 1e12;
  for (size_t c = 0; c < in->nclass; c++) {
    int any = 0;
    for (int o = 0; o < in->nopt; o++) {
      const emb_opt *e = EOPT(in, in->cls_rep[c], o);
      size_t id = c * (size_t)in->nopt + (size_t)o;
      if (!e->ok) {
        q.a[id] = q.m[id] = q.h[id] = NAN;
        continue;
      }
      any = 1;
      double pcs = e->kind == EK_ITEM ? e->k : e->kind == EK_NODE ? in->G : 0;
      double hpcs = e->kind == EK_UNIFORM ? R : pcs;
      q.h[id] = hpcs * e->host_bytes / 1e12;
      if (e->kind == EK_UNIFORM)
        q.a[id] = e->ms, q.m[id] = e->bytes / 1e9;
      else
        q.a[id] = pcs * e->ms / R, q.m[id] = pcs * e->bytes / 1e9 / R;
    }
    if (!any) goto cleanup; /* a class with no option: GLPK says infeasible */
  }
  double uh;
  if (inner(&q, 0, choice_cls, &uh)) goto cleanup;
  if (uh > q.H) { /* host memory binds too: bisection on lh outside */
    svc_log(SVC_LOG_DEBUG, "planner: Lagrangian root LP: host memory binds");
    double lo = 0, hi = 1e-6;
    int ok = 0;
    for (int k = 0; k < DOUBLINGS && !ok; k++) {
      if (inner(&q, hi, choice_cls, &uh)) goto cleanup;
      if (uh <= q.H)
        ok = 1;
      else
        lo = hi, hi *= 4;
    }
    if (!ok) goto cleanup;
    for (int k = 0; k < OUTER_STEPS && hi - lo > 1e-12 * hi && q.visits < VISITS_CAP; k++) {
      double mid = 0.5 * (lo + hi);
      if (inner(&q, mid, NULL, &uh)) goto cleanup;
      if (uh <= q.H)
        hi = mid;
      else
        lo = mid;
    }
    if (inner(&q, hi, choice_cls, &uh)) goto cleanup;
  }
  *bound = q.best;
  rc = 0;
cleanup:
  if (visits) *visits = q.visits;
  free(q.a), free(q.m), free(q.h);
  return rc;
}
