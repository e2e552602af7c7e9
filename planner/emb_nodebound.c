/* planner/emb_nodebound.c: a node-collapsed relaxation of the embedding
 * problem, a lower bound for diagnosis (bench/planner PLAN_NODEBOUND,
 * docs/planner.md "Ninth pass"); the solver does not use it.
 *
 * The rank-collapsed model of emb_agg.c sees the table-row-wise pieces
 * (the same ms on each of a node's G ranks) as averages. Here they are
 * integers per node, and the rank-level pieces are counted per node:
 *   u[c,o]      uniform options: tables of class c taking o
 *   w[c,o,nd]   table-row-wise: tables of c on node nd
 *   a[c,o,nd]   table-wise tables / column-wise shards of c on node nd
 *   z[c,o]      column-wise tables of c, sum_nd a = k z
 *   y[c,o,nd]   binary: node nd holds at least one piece of (c,o)
 *   P[nd]       the largest rank-level piece on node nd
 * min L s.t. per node: G (fixed + U + W_nd) + A_nd <= G L (its ranks'
 * loads summed), G (Ub + Wb_nd) + Ab_nd <= G cap (HBM summed), and the
 * rank holding the node's largest piece carries it beside the uniform and
 * node work: fixed + U + W_nd + P_nd <= L, P_nd >= p y[c,o,nd],
 * a[c,o,nd] <= n_c k y[c,o,nd]; and for each rank-level option, the rank
 * holding its piece carries it beside U: fixed + U + p sum_nd a / (n_c k)
 * <= L. Every plan gives a point of this model
 * (nodes' sums of its rank rows; its slowest rank bounds each node's
 * largest piece), so its optimum, and any proven bound of its branch and
 * bound, is a lower bound of the plan's slowest rank. Nodes are
 * interchangeable, so W_nd >= W_nd+1 is imposed (any plan's nodes can be
 * renumbered so). Host memory and the distinct ranks of column-wise
 * shards are left out, which only weakens it.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "planner/planner_int.h"

static int build(const emb_inst *in, plan_milp *m) {
  int G = in->G, N = in->N;
  int L = milp_col(m, 0, INFINITY, 1.0, MILP_CONT);
  int U = milp_col(m, 0, INFINITY, 0, MILP_CONT); /* uniform ms per rank */
  int Ub = milp_col(m, 0, INFINITY, 0, MILP_CONT);
  int cnt0 = m->nrows;
  for (size_t c = 0; c < in->nclass; c++) milp_row(m, MILP_FX, (double)in->cls_count[c]);
  int udef = milp_row(m, MILP_FX, 0), ubdef = milp_row(m, MILP_FX, 0);
  milp_nz(m, udef, U, -1.0), milp_nz(m, ubdef, Ub, -1.0);
  int W0 = m->ncols;
  for (int nd = 0; nd < N; nd++) milp_col(m, 0, INFINITY, 0, MILP_CONT); /* W_nd */
  int P0 = m->ncols;
  for (int nd = 0; nd < N; nd++) milp_col(m, 0, INFINITY, 0, MILP_CONT); /* P_nd */
  int wdef0 = m->nrows, load0, mem0;
  for (int nd = 0; nd < N; nd++) milp_nz(m, milp_row(m, MILP_FX, 0), W0 + nd, -1.0);
  load0 = m->nrows;
  for (int nd = 0; nd < N; nd++) {
    int r = milp_row(m, MILP_UP, -G * in->fixed_ms);
    milp_nz(m, r, L, -G), milp_nz(m, r, U, G), milp_nz(m, r, W0 + nd, G);
  }
  mem0 = m->nrows;
  for (int nd = 0; nd < N; nd++) {
    int r = milp_row(m, MILP_UP, G * in->p->cap_bytes / 1e9);
    milp_nz(m, r, Ub, G);
  }
  for (int nd = 0; nd < N; nd++) {
    int r = milp_row(m, MILP_UP, -in->fixed_ms);
    milp_nz(m, r, L, -1.0), milp_nz(m, r, U, 1.0), milp_nz(m, r, W0 + nd, 1.0);
    milp_nz(m, r, P0 + nd, 1.0);
  }
  for (int nd = 0; nd + 1 < N; nd++) { /* symmetry: W_nd >= W_nd+1 */
    int r = milp_row(m, MILP_LO, 0);
    milp_nz(m, r, W0 + nd, 1.0), milp_nz(m, r, W0 + nd + 1, -1.0);
  }
  for (size_t c = 0; c < in->nclass; c++) {
    double cnt = (double)in->cls_count[c];
    for (int o = 0; o < in->nopt; o++) {
      const emb_opt *e = EOPT(in, in->cls_rep[c], o);
      if (!e->ok) continue;
      double gb = e->bytes / 1e9;
      if (e->kind == EK_UNIFORM) {
        int col = milp_col(m, 0, cnt, 0, MILP_INT);
        milp_nz(m, cnt0 + (int)c, col, 1.0);
        milp_nz(m, udef, col, e->ms), milp_nz(m, ubdef, col, gb);
      } else if (e->kind == EK_NODE) {
        for (int nd = 0; nd < N; nd++) {
          int col = milp_col(m, 0, cnt, 0, MILP_INT);
          milp_nz(m, cnt0 + (int)c, col, 1.0);
          milp_nz(m, wdef0 + nd, col, e->ms);
          milp_nz(m, mem0 + nd, col, G * gb);
        }
      } else {
        int link = -1;
        if (e->k > 1) {
          int z = milp_col(m, 0, cnt, 0, MILP_INT);
          milp_nz(m, cnt0 + (int)c, z, 1.0);
          link = milp_row(m, MILP_FX, 0);
          milp_nz(m, link, z, -(double)e->k);
        }
        /* the rank holding any piece of (c,o) carries it beside U:
         * fixed + U + p min(1, sum_nd a) <= L, with sum_nd a / (n_c k) <= min(1, .) */
        int any = milp_row(m, MILP_UP, -in->fixed_ms);
        milp_nz(m, any, L, -1.0), milp_nz(m, any, U, 1.0);
        for (int nd = 0; nd < N; nd++) {
          double ub = cnt * e->k;
          int a = milp_col(m, 0, ub, 0, MILP_INT);
          int y = milp_col(m, 0, 1, 0, MILP_INT);
          milp_nz(m, link >= 0 ? link : cnt0 + (int)c, a, 1.0);
          milp_nz(m, any, a, e->ms / ub);
          milp_nz(m, load0 + nd, a, e->ms);
          milp_nz(m, mem0 + nd, a, gb);
          int r = milp_row(m, MILP_UP, 0); /* a <= ub y */
          milp_nz(m, r, a, 1.0), milp_nz(m, r, y, -ub);
          r = milp_row(m, MILP_UP, 0); /* p y <= P_nd */
          milp_nz(m, r, y, e->ms), milp_nz(m, r, P0 + nd, -1.0);
        }
      }
    }
  }
  return m->oom ? -1 : 0;
}

int plan_emb_node_bound(const plan_emb_problem *p, const plan_table *tables, size_t n,
                        double time_limit_s, long node_lim, double *bound, double *incumbent,
                        svc_err *err) {
  emb_inst in;
  plan_milp m;
  milp_sol sol = {0};
  int rc;
  *bound = 0, *incumbent = INFINITY;
  if ((rc = emb_inst_init(&in, p, tables, n, err))) return rc;
  milp_init(&m);
  if (build(&in, &m)) {
    rc = svc_err_set(err, SVC_NOMEM, "", "out of memory building the model");
    goto cleanup;
  }
  milp_opts mo = {.time_limit_s = time_limit_s, .node_lim = node_lim, .t0 = svc_now()};
  if ((rc = plan_milp_solve(&m, &mo, &sol, err))) goto cleanup;
  svc_log(SVC_LOG_DEBUG, "planner: node bound %d x %d: %ld nodes, status %d", m.nrows, m.ncols,
          sol.nodes, sol.status);
  if (sol.status == MILP_INFEASIBLE)
    *bound = INFINITY;
  else if (isfinite(sol.bound))
    *bound = sol.bound;
  if (sol.status == MILP_OPTIMAL || sol.status == MILP_FEASIBLE) *incumbent = sol.obj;
cleanup:
  milp_sol_dispose(&sol);
  milp_dispose(&m);
  emb_inst_dispose(&in);
  return rc;
}

int plan_emb_exact_check(const plan_emb_problem *p, const plan_table *tables, size_t n,
                         const plan_table_plan *from, double from_ms, double time_limit_s,
                         int proximity, plan_emb_exact_check_info *out, svc_err *err) {
  emb_inst in;
  plan_table_plan *pl = NULL;
  plan_emb_result r;
  int rc, fits = 0;
  memset(out, 0, sizeof *out);
  out->max_ms = out->model_ms = INFINITY;
  if ((rc = emb_inst_init(&in, p, tables, n, err))) return rc;
  if (!(pl = malloc(n * sizeof *pl))) {
    rc = svc_err_set(err, SVC_NOMEM, "", NULL);
    goto cleanup;
  }
  memcpy(pl, from, n * sizeof *pl);
  if ((rc = emb_exact_improve(&in, pl, from_ms, time_limit_s, proximity, &out->model_ms,
                              &out->bound_ms, err)))
    goto cleanup;
  if (isfinite(out->model_ms) && !(rc = emb_eval(&in, pl, &r, &fits, err))) {
    out->max_ms = r.max_ms;
    out->fits = fits;
    plan_emb_result_dispose(&r);
  }
cleanup:
  free(pl);
  emb_inst_dispose(&in);
  return rc;
}
