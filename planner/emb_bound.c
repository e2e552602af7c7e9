/* emb_bound.c: the bound with the uniform work split (issue 24).
 *
 * The piece-beside-uniform bound (emb_plan.c, load_possible) puts every
 * piece beside the uniform (row-wise, replicated) work U that the tables
 * without an open piece force, but lets the average-load test pick
 * uniform options freely: a plan may then hold a 56 ms table-row-wise
 * piece beside 4 ms of replicated tables while the bound allowed the piece
 * beside none (heavy 300 x 512 seed 3: answer 61.27 ms = piece + uniform,
 * bound 57.09 ms = piece + fixed). Here the plan's uniform work U* (the sum
 * of its uniform options' per-rank ms) is one number for all ranks, so for
 * U* in [a, b]:
 *   every other piece is at most room = L - fixed - a (it shares its rank
 *   with U* >= a), the uniform options' ms sum to at most b, and the
 *   total work is at most R (L - fixed).
 * A choice of one option per table meeting all three exists only if for
 * every multiplier nu >= 0 (Lagrangian relaxation of the uniform budget,
 * weak duality)
 *   g(nu) = min over choices sum_t [W_t + nu ums_t] - R (L - fixed) - nu b <= 0,
 * the minimum taken table by table. g is concave in nu; its maximum is
 * found by bisection on the sign of the subgradient sum_t ums_t - b. L is
 * impossible when every interval of a cover of [U, L - fixed] has some
 * g(nu) > 0; the cover is refined by halving the intervals not yet shown
 * impossible (depth-limited), which only tightens the relaxation (each
 * half is a smaller set of U*). Any cover is valid, so stopping early
 * (depth, or the work cap) only weakens the bound.
 */
#include <math.h>

#include "planner/planner_int.h"

#define SPLIT_DEPTH 6 /* up to 64 intervals of U* per L */
#define NU_STEPS 14

typedef struct {
  const emb_inst *in;
  double L, mroom, rhs0; /* rhs0 = R (L - fixed) */
  double *work, cap;
} split_ctx;

static double pieces(const emb_inst *in, const emb_opt *e) {
  return e->kind == EK_ITEM ? e->k : e->kind == EK_NODE ? in->G : 0;
}

/* g(nu) for U* in [a, b]; *d: the minimising choice's uniform ms less b. */
static double g_eval(const split_ctx *c, double a, double b, double nu, double *d) {
  const emb_inst *in = c->in;
  double room = (c->L - in->fixed_ms - a) * (1 + 1e-9), sum = 0, us = 0;
  for (size_t k = 0; k < in->nclass; k++) {
    double best = INFINITY, bu = 0, cnt = (double)in->cls_count[k];
    for (int o = 0; o < in->nopt; o++) {
      const emb_opt *e = EOPT(in, in->cls_rep[k], o);
      if (!e->ok) continue;
      double v, u = 0;
      if (e->kind == EK_UNIFORM) {
        if (e->ms > b * (1 + 1e-9) + 1e-12) continue; /* alone above the budget */
        u = e->ms, v = e->ms * (in->R + nu);
      } else {
        if (e->ms > room || e->bytes > c->mroom) continue; /* no rank has room beside U* */
        v = e->ms * pieces(in, e);
      }
      if (v < best) best = v, bu = u;
    }
    if (!isfinite(best)) return INFINITY;
    sum += cnt * best, us += cnt * bu;
  }
  *c->work += (double)in->nclass * in->nopt;
  *d = us - b;
  return sum - c->rhs0 - nu * b;
}

/* 1 when no U* in [a, b] admits a plan of max load L (some g(nu) > 0). */
static int interval_impossible(const split_ctx *c, double a, double b) {
  double lo = 0, hi = INFINITY, nu = 0, d = 0, tol = 1e-9 * c->rhs0;
  for (int it = 0; it < NU_STEPS && *c->work < c->cap; it++) {
    double g = g_eval(c, a, b, nu, &d);
    if (g > tol) return 1;
    if (d <= 0) { /* the uniform budget is slack: a larger nu cannot help */
      hi = nu;
      if (nu == 0) return 0;
    } else {
      lo = nu;
    }
    nu = isfinite(hi) ? 0.5 * (lo + hi) : (nu > 0 ? 4 * nu : c->in->R);
  }
  return 0;
}

static int split(const split_ctx *c, double a, double b, int depth) {
  if (interval_impossible(c, a, b)) return 1;
  if (depth == 0 || *c->work >= c->cap) return 0;
  double m = 0.5 * (a + b);
  return split(c, a, m, depth - 1) && split(c, m, b, depth - 1);
}

int emb_split_possible(const emb_inst *in, double L, double U, double Um, double *work,
                       double cap) {
  split_ctx c = {.in = in,
                 .L = L,
                 .mroom = (in->p->cap_bytes - Um) * (1 + 1e-9),
                 .rhs0 = in->R * (L - in->fixed_ms),
                 .work = work,
                 .cap = cap};
  double top = L - in->fixed_ms;
  if (!(top >= U)) return 0;
  return !split(&c, U, top, SPLIT_DEPTH);
}

/* ---- the split as a choice (stage 2's candidates) ----------------------- */

/* The option per table that the relaxation above picks for U* = Us under
 * the target T: least W + nu ums with every piece at most T - fixed - Us
 * and the smallest nu (bisection) whose uniform ms sum to at most Us.
 * Memory is left to the packing (its HBM diet). Returns the number of
 * option visits, or -1 when no nu meets the budget or a table has no
 * option. */
static double choose(const emb_inst *in, double room, double mroom, double Us, double nu,
                     int *choice) {
  double us = 0;
  for (size_t i = 0; i < in->n; i++) {
    double best = INFINITY, bu = 0;
    int bo = -1;
    for (int o = 0; o < in->nopt; o++) {
      const emb_opt *e = EOPT(in, i, o);
      if (!e->ok) continue;
      double v, u = 0;
      if (e->kind == EK_UNIFORM) {
        if (e->ms > Us) continue;
        u = e->ms, v = e->ms * (in->R + nu);
      } else {
        if (e->ms > room || e->bytes > mroom) continue;
        v = e->ms * pieces(in, e);
      }
      if (v < best) best = v, bu = u, bo = o;
    }
    if (bo < 0) return INFINITY;
    choice[i] = bo, us += bu;
  }
  return us;
}

/* The uniform bytes every rank carries under choice. */
static double uniform_bytes(const emb_inst *in, const int *choice) {
  double um = 0;
  for (size_t i = 0; i < in->n; i++) {
    const emb_opt *e = EOPT(in, i, choice[i]);
    if (e->kind == EK_UNIFORM) um += e->bytes;
  }
  return um;
}

double emb_split_choice(const emb_inst *in, double T, double Us, int *choice) {
  double room = T - in->fixed_ms - Us, visits = 0, per = (double)in->n * in->nopt;
  if (!(room > 0)) return -1;
  /* pieces must fit the HBM beside the uniform bytes: the limit from the
   * last choice's uniform bytes (heavy 10000 x 4096: 104 GB pieces chosen
   * beside 6-40 GB of replicated tables fit no rank) */
  double mroom = in->p->cap_bytes, lo = 0, hi = INFINITY, nu = 0;
  for (int it = 0; it < NU_STEPS + 6; it++) {
    double us = choose(in, room, mroom, Us, nu, choice);
    visits += per;
    if (!isfinite(us)) return -1;
    double m2 = in->p->cap_bytes - uniform_bytes(in, choice);
    if (m2 < mroom) { /* once more beside the uniform bytes this choice has */
      mroom = m2, us = choose(in, room, mroom, Us, nu, choice), visits += per;
      if (!isfinite(us)) return -1;
    }
    if (us <= Us) {
      hi = nu;
      if (nu == 0) return visits;
    } else {
      lo = nu;
    }
    nu = isfinite(hi) ? 0.5 * (lo + hi) : (nu > 0 ? 4 * nu : in->R);
    if (isfinite(hi) && hi - lo < 1e-3 * hi) break;
  }
  if (!isfinite(hi)) return -1;
  if (!isfinite(choose(in, room, mroom, Us, hi, choice))) return -1; /* the budget met */
  return visits + per;
}
