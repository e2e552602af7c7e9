/* emb_exact.c: the full per-rank MILP of the embedding problem.
 *
 * Identical tables are one class c with a count n_c, so every variable is
 * an integer count (how many of the class's tables take an option, or sit
 * on a rank):
 *   u[c,o]     uniform options (DP, RW): tables of c taking o
 *   a[c,o,r]   table-wise: tables of c on rank r
 *   z[c,o]     column-wise with k shards: tables of c split k ways
 *   y[c,o,r]   their shards on rank r, sum_r y[c,o,r] = k z[c,o]
 *   w[c,o,nd]  table-row-wise: tables of c on node nd
 *   L          the slowest rank's load
 * min L  s.t.  sum over options of the class's counts = n_c,
 *   for every rank r: fixed + sum u*ms + sum a*ms + sum y*ms + sum w*ms <= L
 *                     sum u*b + sum a*b + sum y*b + sum w*b <= cap.
 * Ranks of a node are interchangeable and so are nodes; the model does not
 * break that symmetry itself (the greedy warm start gives the search a
 * good incumbent at once, and the bound is the LP's until branching moves
 * it). Only small instances come here (plan_solve_opts.exact_max_vars).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "planner/planner_int.h"

/* Column layout: per class, per option, a block of columns. */
typedef struct {
  int *first; /* nclass * nopt: first column of the block, -1 none */
  int *zcol;  /* nclass * nopt: the z column of CW blocks, -1 none */
  int L;
} layout;

size_t emb_exact_size(const emb_inst *in) {
  size_t n = 0;
  for (size_t c = 0; c < in->nclass; c++)
    for (int o = 0; o < in->nopt; o++) {
      const emb_opt *e = EOPT(in, in->cls_rep[c], o);
      if (!e->ok) continue;
      n += e->kind == EK_UNIFORM       ? 1
           : e->kind == EK_NODE        ? (size_t)in->N
           : e->shard == PLAN_SHARD_TW ? (size_t)in->R
                                       : (size_t)in->R + 1;
    }
  return n;
}

static int build(const emb_inst *in, plan_milp *m, layout *ly) {
  size_t no = in->nclass * (size_t)in->nopt;
  ly->first = malloc((no ? no : 1) * sizeof *ly->first);
  ly->zcol = malloc((no ? no : 1) * sizeof *ly->zcol);
  if (!ly->first || !ly->zcol) return -1;
  ly->L = milp_col(m, 0, INFINITY, 1.0, MILP_CONT);
  int cnt_row0 = m->nrows;
  for (size_t c = 0; c < in->nclass; c++) milp_row(m, MILP_FX, (double)in->cls_count[c]);
  int load0 = m->nrows;
  for (int r = 0; r < in->R; r++) {
    int row = milp_row(m, MILP_UP, -in->fixed_ms);
    milp_nz(m, row, ly->L, -1.0);
  }
  int mem0 = m->nrows;
  for (int r = 0; r < in->R; r++) milp_row(m, MILP_UP, in->p->cap_bytes / 1e9);
  for (size_t c = 0; c < in->nclass; c++) {
    double cnt = (double)in->cls_count[c];
    for (int o = 0; o < in->nopt; o++) {
      const emb_opt *e = EOPT(in, in->cls_rep[c], o);
      size_t id = c * (size_t)in->nopt + (size_t)o;
      ly->first[id] = ly->zcol[id] = -1;
      if (!e->ok) continue;
      double gb = e->bytes / 1e9; /* memory rows in GB keep coefficients near 1 */
      if (e->kind == EK_UNIFORM) {
        int col = milp_col(m, 0, cnt, 0, MILP_INT);
        ly->first[id] = col;
        milp_nz(m, cnt_row0 + (int)c, col, 1.0);
        for (int r = 0; r < in->R; r++) {
          milp_nz(m, load0 + r, col, e->ms);
          milp_nz(m, mem0 + r, col, gb);
        }
      } else if (e->kind == EK_NODE) {
        for (int nd = 0; nd < in->N; nd++) {
          int col = milp_col(m, 0, cnt, 0, MILP_INT);
          if (nd == 0) ly->first[id] = col;
          milp_nz(m, cnt_row0 + (int)c, col, 1.0);
          for (int g = 0; g < in->G; g++) {
            milp_nz(m, load0 + nd * in->G + g, col, e->ms);
            milp_nz(m, mem0 + nd * in->G + g, col, gb);
          }
        }
      } else {
        int z = -1, link = -1;
        if (e->shard == PLAN_SHARD_CW) {
          z = milp_col(m, 0, cnt, 0, MILP_INT);
          ly->zcol[id] = z;
          milp_nz(m, cnt_row0 + (int)c, z, 1.0);
          link = milp_row(m, MILP_FX, 0);
          milp_nz(m, link, z, -(double)e->k);
        }
        for (int r = 0; r < in->R; r++) {
          int col = milp_col(m, 0, cnt * e->k, 0, MILP_INT);
          if (r == 0) ly->first[id] = col;
          if (z < 0)
            milp_nz(m, cnt_row0 + (int)c, col, 1.0);
          else
            milp_nz(m, link, col, 1.0);
          milp_nz(m, load0 + r, col, e->ms);
          milp_nz(m, mem0 + r, col, gb);
        }
      }
    }
  }
  return m->oom ? -1 : 0;
}

/* Column values of a set of plans (the warm start). */
static void encode(const emb_inst *in, const layout *ly, const plan_table_plan *plans, double L,
                   double *x, int ncols) {
  memset(x, 0, (size_t)ncols * sizeof *x);
  x[ly->L] = L;
  for (size_t i = 0; i < in->n; i++) {
    const plan_table_plan *pl = &plans[i];
    int o = emb_opt_index(in, pl->shard, pl->place, pl->k);
    size_t id = in->cls_of[i] * (size_t)in->nopt + (size_t)o;
    const emb_opt *e = EOPT(in, i, o);
    int f = ly->first[id];
    if (f < 0) continue;
    if (e->kind == EK_UNIFORM)
      x[f] += 1;
    else if (e->kind == EK_NODE)
      x[f + pl->node] += 1;
    else if (e->shard == PLAN_SHARD_TW)
      x[f + pl->rank] += 1;
    else {
      x[ly->zcol[id]] += 1;
      for (int j = 0; j < e->k; j++) x[f + pl->cw_ranks[j]] += 1;
    }
  }
}

/* Plans from column values: the counts of each class are dealt out to
 * the class's tables in index order. */
static void decode(const emb_inst *in, const layout *ly, const double *x, plan_table_plan *plans) {
  size_t *next = calloc(in->nclass, sizeof *next); /* tables of the class handed out */
  size_t **members = calloc(in->nclass, sizeof *members);
  if (!next || !members) goto cleanup;
  for (size_t c = 0; c < in->nclass; c++)
    if (!(members[c] = malloc(in->cls_count[c] * sizeof **members))) goto cleanup;
  for (size_t i = 0; i < in->n; i++) members[in->cls_of[i]][next[in->cls_of[i]]++] = i;
  memset(next, 0, in->nclass * sizeof *next);
  for (size_t c = 0; c < in->nclass; c++) {
    for (int o = 0; o < in->nopt; o++) {
      size_t id = c * (size_t)in->nopt + (size_t)o;
      int f = ly->first[id];
      if (f < 0) continue;
      const emb_opt *e = EOPT(in, in->cls_rep[c], o);
      plan_table_plan base = {.shard = e->shard, .place = e->place, .k = e->k};
      if (e->kind == EK_UNIFORM) {
        long cnt = lround(x[f]);
        for (long q = 0; q < cnt && next[c] < in->cls_count[c]; q++)
          plans[members[c][next[c]++]] = base;
      } else if (e->kind == EK_NODE) {
        for (int nd = 0; nd < in->N; nd++)
          for (long q = 0, cnt = lround(x[f + nd]); q < cnt && next[c] < in->cls_count[c]; q++) {
            base.node = nd;
            plans[members[c][next[c]++]] = base;
          }
      } else if (e->shard == PLAN_SHARD_TW) {
        for (int r = 0; r < in->R; r++)
          for (long q = 0, cnt = lround(x[f + r]); q < cnt && next[c] < in->cls_count[c]; q++) {
            base.rank = r;
            plans[members[c][next[c]++]] = base;
          }
      } else {
        long ntab = lround(x[ly->zcol[id]]);
        int r = 0;
        long left = ntab > 0 ? lround(x[f]) : 0;
        for (long q = 0; q < ntab && next[c] < in->cls_count[c]; q++) {
          plan_table_plan pl = base;
          for (int j = 0; j < e->k; j++) {
            while (left <= 0 && r + 1 < in->R) left = lround(x[f + ++r]);
            pl.cw_ranks[j] = r;
            left--;
          }
          plans[members[c][next[c]++]] = pl;
        }
      }
    }
  }
cleanup:
  if (members)
    for (size_t c = 0; c < in->nclass; c++) free(members[c]);
  free(members);
  free(next);
}

/* The per-rank MILP warm-started from warm (NULL: cold) under mo (its
 * time limit and options; warm and the work limits are set here: ws
 * seconds of work at the PLAN_*_PER_S rates, < 0 none), its answer
 * decoded into plans. *obj (may be NULL) its incumbent, INFINITY when none. */
static int exact_run(const emb_inst *in, const plan_table_plan *warm, double warm_ms, milp_opts *mo,
                     double ws, plan_table_plan *plans, double *bound, int *status, int *hit_time,
                     double *obj, svc_err *err) {
  plan_milp m;
  layout ly = {0};
  double *wx = NULL;
  milp_sol sol = {0};
  int rc = 0;
  milp_init(&m);
  *status = MILP_NOSOL;
  *bound = 0;
  if (obj) *obj = INFINITY;
  if (build(in, &m, &ly)) {
    rc = svc_err_set(err, SVC_NOMEM, "", "out of memory building the model");
    goto cleanup;
  }
  if (warm) {
    if (!(wx = malloc((size_t)m.ncols * sizeof *wx))) {
      rc = svc_err_set(err, SVC_NOMEM, "", NULL);
      goto cleanup;
    }
    encode(in, &ly, warm, warm_ms, wx, m.ncols);
  }
  mo->warm = wx;
  if (ws >= 0) { /* the same answer under any CPU share; the clock stays the cap */
    double size = (double)m.nrows + m.ncols;
    mo->it_lim = (long)fmax(100, ws * PLAN_LP_ITERS_PER_S);
    mo->node_lim = (long)fmax(10, ws * PLAN_NODE_WORK_PER_S / (size * size));
  }
  if ((rc = plan_milp_solve(&m, mo, &sol, err))) goto cleanup;
  if (hit_time) *hit_time = sol.hit_time;
  svc_log(SVC_LOG_DEBUG, "planner: exact MILP %d x %d: %ld simplex iterations in %.2f s, %ld nodes",
          m.nrows, m.ncols, sol.lp_iters, sol.lp_s, sol.nodes);
  *status = sol.status;
  *bound = isfinite(sol.bound) ? sol.bound : 0;
  if (sol.status == MILP_OPTIMAL || sol.status == MILP_FEASIBLE) {
    if (obj) *obj = sol.obj;
    decode(in, &ly, sol.x, plans);
  }
cleanup:
  mo->warm = NULL;
  milp_sol_dispose(&sol);
  milp_dispose(&m);
  free(ly.first), free(ly.zcol);
  free(wx);
  return rc;
}

int emb_solve_exact(const emb_inst *in, const plan_table_plan *warm, double warm_ms,
                    const plan_solve_opts *o, double t0, double deadline, plan_table_plan *plans,
                    double *bound, int *status, int *hit_time, svc_err *err) {
  milp_opts mo = {.time_limit_s = deadline - t0,
                  .mip_gap = o->mip_gap,
                  .presolve = 0,
                  .progress = o->progress,
                  .progress_user = o->progress_user,
                  .lp_method = emb_lp_method(o, 0),
                  .t0 = t0};
  double ws = o->work_s < 0 ? -1 : o->work_s > 0 ? o->work_s : o->time_limit_s;
  return exact_run(in, warm, warm_ms, &mo, ws, plans, bound, status, hit_time, NULL, err);
}

/* The per-rank MILP warm-started from plans (ps: with GLPK's proximity
 * search from them) for time_limit_s: an off-the-clock check of whether a
 * better plan exists (bench/planner PLAN_EXACT_FROM_PLAN, docs/planner.md
 * "Ninth pass"). *obj the MILP's incumbent (the model's slowest rank,
 * host memory left out), *bound its proven bound, plans its incumbent. */
int emb_exact_improve(const emb_inst *in, plan_table_plan *plans, double warm_ms,
                      double time_limit_s, int ps, double *obj, double *bound, svc_err *err) {
  milp_opts mo = {.time_limit_s = time_limit_s, .ps_heur = ps, .t0 = svc_now()};
  int status;
  return exact_run(in, plans, warm_ms, &mo, -1, plans, bound, &status, NULL, obj, err);
}
