/* emb_agg.c: the decomposition for large instances.
 *
 * Stage 1, a rank-collapsed MILP that is a relaxation of the full model
 * (so its proven bound is a valid bound for the full problem): identical
 * ranks are aggregated, so only how many tables of each class take each
 * option is decided, n[c,o]:
 *   avg load  U + (sum of item/node work) / R <= L - fixed
 *   avg mem   Um + (sum of item/node bytes) / R <= cap
 *   U = sum uniform ms * n, Um = sum uniform bytes * n (every rank pays them)
 * and, for the large classes only (exact "big items"), a binary b[c,o]
 * for "some table of c uses o" with n <= n_c b and
 *   U + piece_ms b <= L - fixed,  Um + piece_bytes b <= cap
 * (whichever rank gets the piece carries all uniform work too). Small
 * classes are continuous (an aggregated knapsack): dropping their
 * integrality only weakens the bound, never invalidates it.
 * Stage 2: round the counts (largest remainder); for the rounding and for
 * choices whose pieces are capped at targets at and below the bound, pack
 * the pieces onto ranks by LPT under capacity, then improve by moves,
 * swaps and option repair; keep the best.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "planner/planner_int.h"

#define MAX_LARGE 400
#define LP_ONLY_CLASSES 1500
#define ILS_ITERS 3000
/* the ILS's share of stage 2's work (heavy 100 x 64 and 100 x 128:
 * 2.3-4.8 % -> 2.3-4.1 %; 20000 perturbations found no more than 3000;
 * on a loaded box all of it took heavy 1000 x 512 from 2.7 to 9.8 s) */
#define ILS_SHARE 0.25
/* Stage 2's work held back for the split bisection (emb_agg_solve). */
#define SPLIT_RESERVE 0.25
/* The share of the work (per second of work_s) stage 2 gains when the
 * root LP needs no simplex (heavy 3000 x 1024 with 1.5x the work: seeds 1
 * and 3 2.94 / 2.63 -> 2.12 / 1.92 %) */
#define STAGE1_TO_STAGE2 0.25
/* the share of the work left after stage 2 that stage 1's MILP gets again
 * for its bound (rebound) */
#define REBOUND_SHARE 0.9
/* ... up to tables x ranks of 3000 x 4096: at 10000 x 4096 a unit costs
 * more time (2x and 4x the work moved seeds 1 and 3 by 0 and 2.4 points)
 * and the wall-clock margin is what keeps the answer work-limited */
#define STAGE2_EXTRA_MAX_SIZE 1.3e7
/* stage 1's share of the time left when the work limits are on and its
 * model is small (rows + columns; the heavy 100-table models are ~2700
 * wide, 300 tables ~8000): there stage 2 is cheap. On the larger models
 * 0.7 starved stage 2 at load ~10 (heavy 1000 x 1024 fell back to the
 * repaired greedy, 24 % gap, 2026-12-05) */
#define STAGE1_CLOCK_SHARE_WORK 0.7
#define STAGE1_SMALL_MODEL 4000

typedef struct {
  int *ncol; /* nclass * nopt, -1 when the option is not ok */
  char *large;
} agg_layout;

static double piece_count(const emb_inst *in, const emb_opt *e) {
  return e->kind == EK_ITEM ? e->k : e->kind == EK_NODE ? in->G : 0;
}

static int cmp_desc(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x > y ? -1 : x < y;
}

/* Classes whose biggest piece is a sizeable share of the greedy's max
 * load or of the capacity; at most MAX_LARGE of them. */
static void mark_large(const emb_inst *in, double warm_ms, char *large) {
  double *key = malloc((in->nclass ? in->nclass : 1) * sizeof *key), thr = 0;
  if (!key) return;
  for (size_t c = 0; c < in->nclass; c++) {
    double k = 0;
    for (int o = 0; o < in->nopt; o++) {
      const emb_opt *e = EOPT(in, in->cls_rep[c], o);
      if (!e->ok || e->kind == EK_UNIFORM) continue;
      double s = fmax(e->ms / warm_ms, e->bytes / in->p->cap_bytes);
      if (s > k) k = s;
    }
    key[c] = k;
  }
  double *sorted = malloc((in->nclass ? in->nclass : 1) * sizeof *sorted);
  if (sorted) {
    memcpy(sorted, key, in->nclass * sizeof *sorted);
    qsort(sorted, in->nclass, sizeof *sorted, cmp_desc);
    if (in->nclass > MAX_LARGE) thr = sorted[MAX_LARGE - 1];
    free(sorted);
  }
  for (size_t c = 0; c < in->nclass; c++) large[c] = key[c] >= 0.02 && key[c] >= thr;
  free(key);
}

/* The root LP's algorithm (docs/planner.md "GLPK options"): measured on
 * the heavy generator's LPs, the dual simplex is 2-5x faster than the
 * primal up to ~20000 columns; above, the primal simplex from Bixby's
 * crash basis is (10000 tables: 4.0 s against 7.8-9.5 s dual, 35.6 s
 * primal). */
int emb_lp_method(const plan_solve_opts *o, int ncols) {
  if (o->lp_method > 0) return o->lp_method - 1;
  return ncols > 20000 ? MILP_LP_PRIMAL_CRASH : MILP_LP_DUAL;
}

static int build(const emb_inst *in, double warm_ms, plan_milp *m, agg_layout *ly, int *Lcol) {
  size_t no = in->nclass * (size_t)in->nopt;
  ly->ncol = malloc((no ? no : 1) * sizeof *ly->ncol);
  ly->large = calloc(in->nclass ? in->nclass : 1, 1);
  if (!ly->ncol || !ly->large) return -1;
  /* big instances: a pure LP (the rounding handles integrality) */
  if (isfinite(warm_ms) && warm_ms > 0 && in->nclass <= LP_ONLY_CLASSES)
    mark_large(in, warm_ms, ly->large);
  double R = in->R, capgb = in->p->cap_bytes / 1e9;
  int L = *Lcol = milp_col(m, 0, INFINITY, 1.0, MILP_CONT);
  int U = milp_col(m, 0, INFINITY, 0, MILP_CONT), Um = milp_col(m, 0, INFINITY, 0, MILP_CONT);
  int urow = milp_row(m, MILP_FX, 0), umrow = milp_row(m, MILP_FX, 0);
  milp_nz(m, urow, U, -1), milp_nz(m, umrow, Um, -1);
  int avg = milp_row(m, MILP_UP, -in->fixed_ms), avgm = milp_row(m, MILP_UP, capgb);
  /* host memory of all nodes together (TB): a relaxation of the per-node limit */
  int avgh = milp_row(m, MILP_UP, in->host_cap * in->N / 1e12);
  milp_nz(m, avg, U, 1), milp_nz(m, avg, L, -1), milp_nz(m, avgm, Um, 1);
  for (size_t c = 0; c < in->nclass; c++) {
    double cnt = (double)in->cls_count[c];
    int crow = milp_row(m, MILP_FX, cnt);
    for (int o = 0; o < in->nopt; o++) {
      const emb_opt *e = EOPT(in, in->cls_rep[c], o);
      size_t id = c * (size_t)in->nopt + (size_t)o;
      ly->ncol[id] = -1;
      if (!e->ok) continue;
      int col = milp_col(m, 0, cnt, 0, ly->large[c] ? MILP_INT : MILP_CONT);
      ly->ncol[id] = col;
      milp_nz(m, crow, col, 1);
      double hpcs = e->kind == EK_UNIFORM ? R : e->kind == EK_NODE ? in->G : e->k;
      milp_nz(m, avgh, col, hpcs * e->host_bytes / 1e12);
      if (e->kind == EK_UNIFORM) {
        milp_nz(m, urow, col, e->ms), milp_nz(m, umrow, col, e->bytes / 1e9);
        continue;
      }
      double pcs = piece_count(in, e);
      milp_nz(m, avg, col, pcs * e->ms / R);
      milp_nz(m, avgm, col, pcs * e->bytes / 1e9 / R);
      if (!ly->large[c]) continue;
      int b = milp_col(m, 0, 1, 0, MILP_INT);
      int link = milp_row(m, MILP_UP, 0);
      milp_nz(m, link, col, 1), milp_nz(m, link, b, -cnt);
      int mx = milp_row(m, MILP_UP, -in->fixed_ms);
      milp_nz(m, mx, U, 1), milp_nz(m, mx, b, e->ms), milp_nz(m, mx, L, -1);
      int mm = milp_row(m, MILP_UP, capgb);
      milp_nz(m, mm, Um, 1), milp_nz(m, mm, b, e->bytes / 1e9);
    }
  }
  return m->oom ? -1 : 0;
}

static double plans_max(const emb_inst *in, const plan_table_plan *plans, int *fits) {
  plan_emb_result r;
  *fits = 0;
  if (emb_eval(in, plans, &r, fits, NULL)) return INFINITY;
  double m = r.max_ms;
  plan_emb_result_dispose(&r);
  return m;
}

/* Improve a packing (moves, option repair, moves) and keep it when it
 * beats *best_ms. */
static void keep_better(const emb_inst *in, plan_table_plan *cp, int rep, emb_budget *b,
                        double *best_ms, plan_table_plan *plans, int *have, int *repaired) {
  emb_local_search(in, cp, b);
  emb_repair_options(in, cp, b);
  emb_local_search(in, cp, b);
  emb_kick(in, cp, b);
  int fits = 0;
  double mx = plans_max(in, cp, &fits);
  if (fits && mx < *best_ms) {
    *best_ms = mx, *have = 1, *repaired = rep > 0;
    memcpy(plans, cp, in->n * sizeof *cp);
  }
}

/* Pack one option choice (plain LPT; when a piece does not fit, with
 * repair; then memory first with repair), improve it, and keep it in best
 * when it beats *best_ms. */
static void try_choice(const emb_inst *in, const int *cc, plan_table_plan *cp, emb_budget *b,
                       double *best_ms, plan_table_plan *plans, int *have, int *repaired) {
  static const int modes[] = {EMB_PACK_PLAIN, EMB_PACK_REPAIR, EMB_PACK_MEMORY};
  for (size_t k = 0; k < sizeof modes / sizeof modes[0]; k++) {
    int rep = emb_pack(in, cc, cp, modes[k]);
    if (emb_spend(b, (double)in->n * in->R / 8)) return;
    if (rep < 0) continue;
    keep_better(in, cp, rep, b, best_ms, plans, have, repaired);
    return; /* the first mode that packs is the one for this choice */
  }
}

/* The HBM a choice needs, all GPUs together, as a share of all their HBM. */
static double hbm_fill(const emb_inst *in, const int *choice) {
  double mem = 0;
  for (size_t i = 0; i < in->n; i++) {
    const emb_opt *e = EOPT(in, i, choice[i]);
    mem += e->bytes * (e->kind == EK_UNIFORM ? in->R : e->kind == EK_NODE ? in->G : e->k);
  }
  return mem / (in->p->cap_bytes * in->R);
}

/* Pack the choice from `from`, re-chosen under T, with T as a hard limit;
 * where it does not pack, with more HBM left free (tight memory). 0 when
 * one packs under T; else the first packing over T is improved and kept
 * when better (1), or none packs (-1). */
static int pack_at(const emb_inst *in, const int *from, int fixed, double T, emb_budget *b, int *cc,
                   plan_table_plan *cp, int *rep, double *best_ms, plan_table_plan *plans,
                   int *have, int *repaired) {
  static const double fill[] = {0, 0.95, 0.85, 0.7};
  int rc = -1;
  for (size_t k = 0; k < sizeof fill / sizeof fill[0] && rc; k++) {
    if (fixed)
      emb_cap_choice_fixed(in, from, T, cc);
    else
      emb_cap_choice(in, from, T, cc);
    if (k > 0 && hbm_fill(in, cc) <= fill[k]) continue; /* no diet: the same packing again */
    int r = emb_pack_target(in, cc, T, fill[k], 0, cp, b, rep);
    if (r != 0 && k == 0) {
      /* best fit where that rule does not pack under T (fill 0: cc as it
       * was); when neither does, the first rule's packing over T again */
      if (!emb_pack_target(in, cc, T, 0, 1, cp, b, rep)) {
        rc = 0;
        break;
      }
      if (b->time_hit || b->work_hit) break;
      if (r == 1) r = emb_pack_target(in, cc, T, 0, 0, cp, b, rep);
    }
    if (r == 1 && rc < 0) { /* over T: improved and kept when better */
      keep_better(in, cp, *rep, b, best_ms, plans, have, repaired);
      rc = 1;
    }
    if (r == 0) rc = 0;
    if (b->time_hit || b->work_hit) break;
  }
  return rc;
}

/* The smallest target T in [B, *best_ms) at which the choice from `from`
 * (re-chosen under T, cap_choice) packs with T as a hard limit, by
 * bisection; every packing found is improved and kept when better. */
static void bisect(const emb_inst *in, const int *from, int fixed, double B, emb_budget *b, int *cc,
                   plan_table_plan *cp, double *best_ms, plan_table_plan *plans, int *have,
                   int *repaired) {
  double lo = B, hi = *best_ms;
  for (int k = 0; k < 4 && !isfinite(hi); k++) { /* no answer yet: find a target that packs */
    double T = B * (1 << (k + 1));
    int rep = 0;
    if (!pack_at(in, from, fixed, T, b, cc, cp, &rep, best_ms, plans, have, repaired)) {
      keep_better(in, cp, rep, b, best_ms, plans, have, repaired);
      hi = fmin(T, *best_ms);
    } else {
      lo = T;
    }
    if (b->time_hit || b->work_hit) return;
  }
  for (int k = 0; k < 12 && isfinite(hi) && hi - lo > 2e-3 * hi; k++) {
    double T = 0.5 * (lo + hi);
    int rep = 0;
    int prc = pack_at(in, from, fixed, T, b, cc, cp, &rep, best_ms, plans, have, repaired);
    svc_log(SVC_LOG_DEBUG, "planner: target %.4f [%.4f, %.4f]: %s, %d repaired, best %.4f", T, lo,
            hi, prc ? "no" : "packs", rep, *best_ms);
    if (!prc) {
      keep_better(in, cp, rep, b, best_ms, plans, have, repaired);
      hi = fmin(T, *best_ms);
    } else {
      lo = T;
    }
    if (b->time_hit || b->work_hit) return;
  }
}

/* Bisection on the target T with the split bound's choices (emb_bound.c)
 * as candidates: for a few levels of uniform work Us (shares of T), the
 * least-work choice whose uniform ms sum to at most Us and whose pieces fit
 * beside it. Where a large piece must sit beside little replicated work
 * (heavy 300 x 512 seed 3: a 56 ms table-row-wise piece beside 4 ms of
 * data-parallel tables), the LP's rounding keeps the uniform tables and
 * the packing cannot go below piece + uniform. */
static void bisect_split(const emb_inst *in, double B, double warm_ms, emb_budget *b, int *cc,
                         int *sc, plan_table_plan *cp, double *best_ms, plan_table_plan *plans,
                         int *have, int *repaired) {
  static const double share[] = {0.2, 0.1, 0.05, 0.02, 0.005};
  /* the three largest pieces of the best plan so far (else of the tables'
   * least-work options): U* just below T - fixed - piece lets that piece
   * sit beside the uniform work (heavy 1000 x 512 seed 3: a 120 ms
   * table-wise piece beside 16.7 ms; 1000 x 1024 seed 2: 5.15 -> 4.70 %) */
  double big[3] = {0, 0, 0};
  for (size_t i = 0; i < in->n; i++) {
    double w = INFINITY, pc = 0;
    if (*have) {
      const emb_opt *e = EOPT(in, i, emb_opt_index(in, plans[i].shard, plans[i].place, plans[i].k));
      pc = e->kind == EK_UNIFORM ? 0 : e->ms;
    } else {
      for (int o = 0; o < in->nopt; o++) {
        const emb_opt *e = EOPT(in, i, o);
        if (e->ok && emb_total_ms(in, e) < w)
          w = emb_total_ms(in, e), pc = e->kind == EK_UNIFORM ? 0 : e->ms;
      }
    }
    for (int j = 0; j < 3; j++)
      if (pc > big[j] * (1 + 1e-6)) {
        double t = big[j];
        big[j] = pc, pc = t;
      } else if (pc >= big[j] * (1 - 1e-6)) {
        break; /* the same piece again */
      }
  }
  double lo = B, hi = isfinite(*best_ms) ? *best_ms : warm_ms; /* no plan yet: the start's */
  for (int k = 0; k < 12 && isfinite(hi) && hi - lo > 2e-3 * hi; k++) {
    double T = 0.5 * (lo + hi), room = T - in->fixed_ms;
    int packed = 0;
    for (size_t q = 0; q < 3 + sizeof share / sizeof share[0] && !packed; q++) {
      double Us = q < 3 ? (room - big[q]) * (1 - 1e-9) : share[q - 3] * room;
      if (!(Us > 0) || (q < 3 && big[q] <= 0)) continue;
      double v = emb_split_choice(in, T, Us, sc);
      if (v < 0) continue;
      if (emb_spend(b, v / 4)) return;
      int rep = 0;
      if (!pack_at(in, sc, 1, T, b, cc, cp, &rep, best_ms, plans, have, repaired)) {
        keep_better(in, cp, rep, b, best_ms, plans, have, repaired);
        packed = 1;
      }
      if (b->time_hit || b->work_hit) return;
    }
    svc_log(SVC_LOG_DEBUG, "planner: split target %.4f [%.4f, %.4f]: %s, best %.4f", T, lo, hi,
            packed ? "packs" : "no", *best_ms);
    /* a packing over T that came out below T: search under it (here only:
     * in bisect above it took heavy 10000 x 4096 seed 1, work-limited,
     * from 9.00 to 9.97 % and moved nothing up to 3000 tables) */
    if (packed || *best_ms < T)
      hi = fmin(T, *best_ms);
    else
      lo = T;
    if (lo >= hi) lo = B; /* an over-T packing came out below lo: search from B again */
  }
}

/* The root LP by emb_lagr_solve when the model has no integer column and
 * the LP method is the default: sol as plan_milp_solve fills it, 1; 0
 * when GLPK is to solve it (integers, a method asked for, or the dual
 * could not show the memory fits). */
static int lagr_root(const emb_inst *in, const plan_milp *m, const agg_layout *ly, int Lcol,
                     const plan_solve_opts *o, milp_sol *sol) {
  for (size_t c = 0; c < in->nclass; c++)
    if (ly->large[c]) return 0;
  if (o->lp_method > 0) return 0;
  int *ch = malloc((in->nclass ? in->nclass : 1) * sizeof *ch);
  double bound = 0, visits = 0, t = svc_now();
  if (!ch || emb_lagr_solve(in, ch, &bound, &visits)) {
    free(ch);
    return 0;
  }
  memset(sol, 0, sizeof *sol);
  sol->x = calloc((size_t)m->ncols, sizeof *sol->x);
  sol->lp_x = calloc((size_t)m->ncols, sizeof *sol->lp_x);
  if (!sol->x || !sol->lp_x) {
    free(ch);
    milp_sol_dispose(sol);
    return 0;
  }
  for (size_t c = 0; c < in->nclass; c++) {
    int col = ly->ncol[c * (size_t)in->nopt + (size_t)ch[c]];
    if (col >= 0) sol->x[col] = (double)in->cls_count[c];
  }
  sol->x[Lcol] = bound;
  memcpy(sol->lp_x, sol->x, (size_t)m->ncols * sizeof *sol->x);
  sol->status = MILP_OPTIMAL, sol->obj = sol->bound = bound, sol->lp_s = svc_now() - t;
  free(ch);
  svc_log(SVC_LOG_DEBUG,
          "planner: decomposition LP by its Lagrangian dual: %.6f, %.3g option visits", bound,
          visits);
  return 1;
}

/* Stage 1's MILP again, for its bound only, with most of the work stage 2
 * left turned into nodes (and iterations); its answer is not rounded, so
 * the incumbent does not change. Options whose one piece (or uniform
 * share) with the fixed work already exceeds the incumbent P are taken
 * out: a plan better than P cannot use them, so min(P, the bound without
 * them) is a bound (pruning by the incumbent, as branch and bound does;
 * the LP relaxation mixed them in at fractions, 25-35 ms table-wise
 * pieces beside a 15.5 ms answer on heavy 100 x 128 seed 1). Heavy 100 x
 * 64 / 128 (2026-12-05): the first solve stopped at its node limit
 * (53-75 nodes) and ended the whole answer at 0.2-0.8 s of 10 s. */
static void rebound(const emb_inst *in, const agg_layout *ly, const plan_milp *m,
                    const milp_opts *mo, double t0, double P, emb_budget *b, double *bound,
                    int *status) {
  if (b->work_hit || b->time_hit || b->work <= 0 || !mo->node_lim || !isfinite(P)) return;
  double now = svc_now(), secs = REBOUND_SHARE * b->work / PLAN_WORK_UNITS_PER_S;
  double size = (double)m->nrows + m->ncols;
  milp_opts o2 = *mo;
  o2.node_lim = (long)(secs * PLAN_NODE_WORK_PER_S / (size * size));
  if (o2.node_lim <= mo->node_lim) return; /* nothing new to learn */
  o2.it_lim = o2.bb_it_lim = mo->bb_it_lim + (long)(secs * PLAN_LP_ITERS_PER_S);
  o2.time_limit_s = (now - t0) + 0.5 * fmax(0, b->deadline - now);
  o2.progress = NULL;
  o2.mip_gap = 1e-4; /* the bound is all it is for */
  plan_milp m2 = *m; /* shares all but the column bounds */
  if (!(m2.ub = malloc((m->ncols ? m->ncols : 1) * sizeof *m2.ub))) return;
  memcpy(m2.ub, m->ub, m->ncols * sizeof *m2.ub);
  int cut = 0;
  for (size_t c = 0; c < in->nclass; c++)
    for (int o = 0; o < in->nopt; o++) {
      int col = ly->ncol[c * (size_t)in->nopt + (size_t)o];
      if (col >= 0 && in->fixed_ms + EOPT(in, in->cls_rep[c], o)->ms > P * (1 + 1e-9))
        m2.ub[col] = 0, cut++;
    }
  milp_sol s2 = {0};
  svc_err e2;
  b->work -= secs * PLAN_WORK_UNITS_PER_S;
  if (!plan_milp_solve(&m2, &o2, &s2, &e2)) {
    /* the nodes it did not need go back (its work is counted as nodes x
     * size^2), for emb_release_stage2 after it */
    if (!s2.hit_time && s2.nodes >= 0 && s2.nodes < o2.node_lim)
      b->work += secs * PLAN_WORK_UNITS_PER_S * (1 - (double)s2.nodes / (double)o2.node_lim);
    double v = s2.status == MILP_INFEASIBLE ? P : isfinite(s2.bound) ? fmin(P, s2.bound) : 0;
    svc_log(SVC_LOG_DEBUG,
            "planner: stage 1 again for the bound, %d options above the incumbent %.6f out: %ld "
            "nodes, status %d, %.6f -> %.6f",
            cut, P, s2.nodes, s2.status, *bound, v);
    if (v > *bound) *bound = v;
    if (s2.status == MILP_OPTIMAL && !cut) *status = MILP_OPTIMAL;
    b->time_hit |= s2.hit_time;
  }
  milp_sol_dispose(&s2);
  free(m2.ub);
}

int emb_solve_decomposed(const emb_inst *in, double warm_ms, const plan_solve_opts *o, double t0,
                         emb_budget *b, plan_table_plan *plans, int *have_plans, int *repaired,
                         double *bound, int *status, int *s1_time, int *s1_work, svc_err *err) {
  plan_milp m;
  agg_layout ly = {0};
  milp_sol sol = {0};
  int *choice[2] = {NULL, NULL}, *cc = NULL, rc = 0, Lcol = 0;
  plan_table_plan *cp = NULL;
  milp_init(&m);
  *have_plans = 0, *repaired = 0, *bound = 0, *status = MILP_NOSOL;
  if (build(in, warm_ms, &m, &ly, &Lcol)) {
    rc = svc_err_set(err, SVC_NOMEM, "", "out of memory building the model");
    goto cleanup;
  }
  /* Stage 1 gets most of the time and of the work; packing is fast. */
  /* Stage 1 gets 40 % of the time and 15 % of the node work: past the
   * root LP, GLPK's nodes on these models are slow (Driebeck-Tomlin
   * branching evaluates tableau rows: 0.5-1 s a node of a 17000-wide model,
   * perf on heavy 1000 x 1024; 0.35 s of an 8066-wide one, 300 x 1024, on
   * this loaded box, 2026-12-05, where the clock then cut them) and move
   * the bound little (the closed-form bounds are higher there), while the
   * packing (stage 2) is where the gap was. */
  /* With the work limits on (the default) the clock is only the cap, so
   * stage 1 may use 0.7 of what is left: at 0.4 its clock cut the heavy
   * 100 x 128 solves (seeds 1, 3) under three busy loops with the bench
   * niced (~6 % of a core, 2026-12-05), though their work fits the limit,
   * and the answer said "time limit". */
  double share =
      o->work_s >= 0 && m.nrows + m.ncols <= STAGE1_SMALL_MODEL ? STAGE1_CLOCK_SHARE_WORK : 0.4;
  double now = svc_now(), budget = (b->deadline - now) * share;
  double ws = o->work_s > 0 ? o->work_s : o->time_limit_s;
  milp_opts mo = {.time_limit_s = (now - t0) + budget,
                  .mip_gap = o->mip_gap * 0.5,
                  .presolve = 0,
                  .progress = o->progress,
                  .progress_user = o->progress_user,
                  .lp_method = emb_lp_method(o, m.ncols),
                  .t0 = t0};
  if (o->work_s >= 0) { /* simplex iterations (root and nodes together) and nodes */
    double size = (double)m.nrows + m.ncols;
    mo.it_lim = mo.bb_it_lim = (long)fmax(100, 0.7 * ws * PLAN_LP_ITERS_PER_S);
    mo.node_lim = (long)fmax(2, 0.15 * ws * PLAN_NODE_WORK_PER_S / (size * size));
  }
  int lagr = lagr_root(in, &m, &ly, Lcol, o, &sol);
  if (lagr) {
    /* no integer column: the LP through its Lagrangian dual (emb_lagr.c),
     * in a fraction of a second where GLPK's simplex took 1.6-3.9 s of the
     * time stage 1 may use; stage 2 gets a share of that as work */
    if (isfinite(b->work) && (double)in->n * in->R <= STAGE2_EXTRA_MAX_SIZE) {
      double extra = STAGE1_TO_STAGE2 * ws * PLAN_WORK_UNITS_PER_S;
      b->work += extra, b->work0 += extra;
    }
  } else if ((rc = plan_milp_solve(&m, &mo, &sol, err))) {
    goto cleanup;
  }
  /* stage 1's own cap is said in the answer; it does not stop stage 2 */
  *s1_time |= sol.hit_time, *s1_work |= sol.hit_work;
  svc_log(SVC_LOG_DEBUG,
          "planner: decomposition LP %d x %d: %ld simplex iterations in %.2f s, %ld nodes, status "
          "%d%s%s",
          m.nrows, m.ncols, sol.lp_iters, sol.lp_s, sol.nodes, sol.status,
          sol.hit_time ? ", time cap" : "", sol.hit_work ? ", work limit" : "");
  *status = sol.status;
  *bound = isfinite(sol.bound) ? sol.bound : 0;
  /* Round the incumbent (when branch and bound found one) and the LP
   * optimum: the incumbent may be a poor point found early, the LP optimum
   * is the relaxation's best mix. */
  const double *base[2] = {NULL, sol.lp_x};
  if (sol.status == MILP_OPTIMAL || sol.status == MILP_FEASIBLE) base[0] = sol.x;
  if (!(cc = malloc((in->n ? in->n : 1) * sizeof *cc)) ||
      !(cp = malloc((in->n ? in->n : 1) * sizeof *cp))) {
    rc = svc_err_set(err, SVC_NOMEM, "", NULL);
    goto cleanup;
  }
  for (int k = 0; k < 2; k++) {
    if (!base[k]) continue;
    if (!(choice[k] = malloc((in->n ? in->n : 1) * sizeof *choice[k]))) {
      rc = svc_err_set(err, SVC_NOMEM, "", NULL);
      goto cleanup;
    }
    if (emb_round_choice(in, ly.ncol, base[k], choice[k]) ||
        (k == 1 && choice[0] && !memcmp(choice[0], choice[1], in->n * sizeof *choice[1])))
      free(choice[k]), choice[k] = NULL; /* no rounding, or the same one twice */
  }
  /* Stage 2, over a few candidate option choices: first each rounding as
   * it is (LPT packing, with repair where memory is tight), then a
   * bisection on the target from each rounding (emb_pack.c: the target a
   * hard limit, HBM left free under tight memory), then fixed targets T
   * around the bound, each rounding (and the cheapest choice per table)
   * with every piece that cannot fit under T re-chosen, packed by LPT; each
   * packing is balanced with its options kept (moves, swaps), re-optioned
   * on the slowest rank, balanced again, and the best is the incumbent.
   * Targets are taken around the better of the decomposition's and the
   * closed-form bound, above it too: where single pieces are large
   * (thousands of GPUs, pieces of hundreds of ms) the optimum lies well
   * above an averaged bound. The bisections come before the fixed targets
   * since they found the better packings (heavy 1000 x 128 seed 2: 171 ->
   * 129 ms) and the work runs out first on the largest instances. */
  static const double target[] = {0,    -0.02, -0.05, -0.1, -0.2, -0.3, -0.5,
                                  0.05, 0.1,   0.2,   0.35, 0.5,  1.0};
  double B = fmax(*bound, emb_trivial_bound(in));
  size_t nt = sizeof target / sizeof target[0];
  double best = INFINITY;
  for (int v = 1; v >= 0; v--)
    if (choice[v]) {
      emb_cap_choice(in, choice[v], INFINITY, cc);
      try_choice(in, cc, cp, b, &best, plans, have_plans, repaired);
    }
  /* both re-choices (cap_choice_fixed, cap_choice): neither wins everywhere
   * (heavy 300 x 512 seed 1: 5.4 against 6.2 %, 100 x 64: 5.7 against 3.6 %) */
  /* the split bisection's share is held back before the roundings'
   * bisections, which spent all the work at heavy 10000 x 4096 (seed 3:
   * its first split target packs by best fit at 1341.5 ms, 2.6 %, where
   * they ended at 1387-1428 ms, 5.7-8.5 %; 2026-12-05) */
  double keep = isfinite(b->work) && b->work > 0 ? SPLIT_RESERVE * b->work : 0;
  b->work -= keep;
  for (int v = 1; v >= 0 && B > 0; v--)
    for (int fixed = 1; fixed >= 0 && choice[v]; fixed--)
      bisect(in, choice[v], fixed, B, b, cc, cp, &best, plans, have_plans, repaired);
  if (B > 0) {
    int *sc = malloc((in->n ? in->n : 1) * sizeof *sc);
    /* the share held back and a quarter of the work left, so that the
     * fixed targets below still run (heavy 3000 x 1024 seed 3: the split
     * spent it all, 3.06 -> 5.64 %) */
    emb_budget sub = *b;
    sub.work = keep + 0.25 * fmax(0, b->work), sub.work0 = sub.work, sub.work_hit = 0;
    if (sc) bisect_split(in, B, warm_ms, &sub, cc, sc, cp, &best, plans, have_plans, repaired);
    if (isfinite(b->work)) b->work -= sub.work0 - sub.work - keep;
    if (b->work > 0 && !sub.work_hit) b->work_hit = 0;
    b->time_hit |= sub.time_hit;
    free(sc);
  } else {
    b->work += keep;
  }
  for (int v = 0; v < 3 && B > 0; v++) {
    const int *from = v < 2 ? choice[v] : NULL;
    if (v < 2 && !from) continue;
    for (size_t q = 0; q < nt && !b->time_hit && !b->work_hit; q++) {
      emb_cap_choice(in, from, B * (1 + target[q]), cc);
      try_choice(in, cc, cp, b, &best, plans, have_plans, repaired);
    }
  }
  if (B > 0) bisect(in, NULL, 1, B, b, cc, cp, &best, plans, have_plans, repaired);
  /* the work left: perturb and search again (emb_ils.c) */
  if (*have_plans) emb_ils_stage2(in, plans, b, ILS_SHARE, ILS_ITERS, b->ils_extra);
  /* the work still left (small models end their search early): stage 1's
   * MILP again with more nodes, for the bound only */
  if (!lagr && *have_plans && isfinite(b->work)) {
    int pf = 0;
    double P = plans_max(in, plans, &pf);
    if (pf) rebound(in, &ly, &m, &mo, t0, P, b, bound, status);
  }
  /* what is left of it (with what the bound's solve did not need): uniform
   * tables re-optioned off every rank (emb_ils.c; after the bound, which
   * so gets the same work as before) */
  if (*have_plans) emb_release_stage2(in, plans, b);
cleanup:
  free(choice[0]), free(choice[1]), free(cc), free(cp);
  milp_sol_dispose(&sol);
  milp_dispose(&m);
  free(ly.ncol), free(ly.large);
  return rc;
}

int emb_agg_root_lp(const emb_inst *in, double warm_ms, int lp_method, double time_limit_s,
                    double *obj, double *secs, long *iters, int *rows, int *cols, svc_err *err) {
  plan_milp m;
  agg_layout ly = {0};
  milp_sol sol = {0};
  int Lcol = 0, rc = 0;
  milp_init(&m);
  if (build(in, warm_ms, &m, &ly, &Lcol)) {
    rc = svc_err_set(err, SVC_NOMEM, "", "out of memory building the model");
    goto cleanup;
  }
  milp_opts mo = {
      .time_limit_s = time_limit_s, .lp_method = lp_method, .lp_only = 1, .t0 = svc_now()};
  if ((rc = plan_milp_solve(&m, &mo, &sol, err))) goto cleanup;
  *obj = sol.bound, *secs = sol.lp_s, *iters = sol.lp_iters, *rows = m.nrows, *cols = m.ncols;
cleanup:
  milp_sol_dispose(&sol);
  milp_dispose(&m);
  free(ly.ncol), free(ly.large);
  return rc;
}
