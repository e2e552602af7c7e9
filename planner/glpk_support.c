/* glpk_support.c: the only file that includes glpk.h (STYLE habit 11, after
 * igraph's src/internal/glpk_support.c). It turns a solver-neutral
 * plan_milp into a GLPK problem, solves it with every setting explicit
 * (time limit, relative gap, presolve, branching, heuristics), warm-starts
 * the search with a known feasible point, reports incumbent and bound
 * through the progress callback, and maps every failure to our codes.
 *
 * Errors: GLPK reports a broken invariant (a bad index, out of memory) by
 * calling the error hook and would then abort the process. Our hook frees
 * the GLPK environment of this thread and longjmps back to the guard in
 * plan_milp_solve, which returns -SVC_SOLVER with GLPK's last message; no
 * GLPK object created before the error may be touched afterwards.
 * Threads: GLPK keeps its environment in thread-local storage when built
 * with TLS (glp_config("TLS")); the jump buffer is thread-local too. A
 * GLPK without TLS is serialized by one mutex.
 */
#include <glpk.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include "planner/planner_int.h"

typedef struct {
  jmp_buf jb;
  char last[256]; /* GLPK's last terminal line (its error text) */
} guard_state;

static _Thread_local guard_state guard;
static pthread_mutex_t serial = PTHREAD_MUTEX_INITIALIZER;

static void error_hook(void *info) {
  (void)info;
  glp_free_env(); /* everything GLPK allocated on this thread is gone */
  longjmp(guard.jb, 1);
}

static int term_hook(void *info, const char *s) {
  (void)info;
  size_t n = strlen(s);
  while (n && (s[n - 1] == '\n' || s[n - 1] == '\r')) n--;
  if (n) {
    if (n >= sizeof guard.last) n = sizeof guard.last - 1;
    memcpy(guard.last, s, n);
    guard.last[n] = '\0';
    svc_log(SVC_LOG_DEBUG, "glpk: %s", guard.last);
  }
  return 1; /* suppress GLPK's own printing */
}

const char *plan_glpk_strerror(int code) {
  switch (code) {
  case 0:
    return "ok";
  case GLP_EBADB:
    return "invalid initial basis";
  case GLP_ESING:
    return "singular basis matrix";
  case GLP_ECOND:
    return "ill-conditioned basis matrix";
  case GLP_EBOUND:
    return "inconsistent variable bounds";
  case GLP_EFAIL:
    return "solver failure";
  case GLP_EOBJLL:
    return "objective lower limit reached";
  case GLP_EOBJUL:
    return "objective upper limit reached";
  case GLP_EITLIM:
    return "iteration limit exceeded";
  case GLP_ETMLIM:
    return "time limit exceeded";
  case GLP_ENOPFS:
    return "no primal feasible solution";
  case GLP_ENODFS:
    return "no dual feasible solution";
  case GLP_EROOT:
    return "root LP optimum not provided";
  case GLP_ESTOP:
    return "search stopped by the application";
  case GLP_EMIPGAP:
    return "relative MIP gap tolerance reached";
  case GLP_ENOFEAS:
    return "no feasible solution";
  case GLP_ENOCVG:
    return "no convergence";
  case GLP_EINSTAB:
    return "numerical instability";
  case GLP_EDATA:
    return "invalid data";
  case GLP_ERANGE:
    return "result out of range";
  default:
    return "unknown GLPK return code";
  }
}

/* ---- model building (no GLPK) --------------------------------------------- */

void milp_init(plan_milp *m) { memset(m, 0, sizeof *m); }

void milp_dispose(plan_milp *m) {
  if (!m) return;
  free(m->lb), free(m->ub), free(m->obj), free(m->kind);
  free(m->rbnd), free(m->rtype);
  free(m->ia), free(m->ja), free(m->ar);
  memset(m, 0, sizeof *m);
}

static int grow(void **p, size_t elem, int *cap, int need) {
  if (need <= *cap) return 0;
  int nc = *cap ? *cap * 2 : 64;
  while (nc < need) nc *= 2;
  void *q = realloc(*p, (size_t)nc * elem);
  if (!q) return -1;
  *p = q;
  return 0;
}

int milp_col(plan_milp *m, double lb, double ub, double obj, int kind) {
  if (m->oom) return 0;
  if (m->ncols + 1 > m->ccap) {
    int c = m->ccap;
    if (grow((void **)&m->lb, sizeof(double), &c, m->ncols + 1) ||
        (c = m->ccap, grow((void **)&m->ub, sizeof(double), &c, m->ncols + 1)) ||
        (c = m->ccap, grow((void **)&m->obj, sizeof(double), &c, m->ncols + 1)) ||
        (c = m->ccap, grow((void **)&m->kind, sizeof(int), &c, m->ncols + 1))) {
      m->oom = 1;
      return 0;
    }
    m->ccap = c;
  }
  m->lb[m->ncols] = lb, m->ub[m->ncols] = ub, m->obj[m->ncols] = obj, m->kind[m->ncols] = kind;
  return m->ncols++;
}

int milp_row(plan_milp *m, int type, double rhs) {
  if (m->oom) return 0;
  if (m->nrows + 1 > m->rcap) {
    int c = m->rcap;
    if (grow((void **)&m->rbnd, sizeof(double), &c, m->nrows + 1) ||
        (c = m->rcap, grow((void **)&m->rtype, sizeof(int), &c, m->nrows + 1))) {
      m->oom = 1;
      return 0;
    }
    m->rcap = c;
  }
  m->rbnd[m->nrows] = rhs, m->rtype[m->nrows] = type;
  return m->nrows++;
}

void milp_nz(plan_milp *m, int row, int col, double v) {
  if (m->oom || v == 0.0) return;
  if (m->nz + 2 > m->nzcap) {
    size_t nc = m->nzcap ? m->nzcap * 2 : 1024;
    int *ia = realloc(m->ia, nc * sizeof *ia);
    if (ia) m->ia = ia;
    int *ja = realloc(m->ja, nc * sizeof *ja);
    if (ja) m->ja = ja;
    double *ar = realloc(m->ar, nc * sizeof *ar);
    if (ar) m->ar = ar;
    if (!ia || !ja || !ar) {
      m->oom = 1;
      return;
    }
    m->nzcap = nc;
  }
  m->nz++;
  m->ia[m->nz] = row + 1, m->ja[m->nz] = col + 1, m->ar[m->nz] = v;
}

void milp_sol_dispose(milp_sol *s) {
  if (!s) return;
  free(s->x), free(s->lp_x);
  s->x = s->lp_x = NULL;
}

/* ---- solving -------------------------------------------------------------- */

typedef struct {
  const plan_milp *m;
  const milp_opts *o;
  double bound;   /* best proven bound seen */
  int warm_given; /* warm start handed to GLPK */
  int stopped;    /* the progress callback asked to stop */
  int node_hit;   /* the node limit stopped the search */
  long nodes;
  double last_report;
} cb_state;

static void callback(glp_tree *T, void *info) {
  cb_state *s = info;
  int reason = glp_ios_reason(T);
  if (reason == GLP_IHEUR && !s->warm_given && s->o->warm) {
    s->warm_given = 1;
    /* GLPK wants x[1..n]; it checks feasibility itself and ignores a
     * point that is not better than its incumbent. */
    double *x = malloc(((size_t)s->m->ncols + 1) * sizeof *x);
    if (x) {
      memcpy(x + 1, s->o->warm, (size_t)s->m->ncols * sizeof *x);
      x[0] = 0;
      glp_ios_heur_sol(T, x);
      free(x);
    }
  }
  /* work limits: nodes, and simplex iterations counted over the root LP
   * and every node's re-solve (GLPK's counter on the problem object) */
  if (reason == GLP_ISELECT &&
      ((++s->nodes > s->o->node_lim && s->o->node_lim > 0) ||
       (s->o->bb_it_lim > 0 && glp_get_it_cnt(glp_ios_get_prob(T)) > s->o->bb_it_lim))) {
    s->node_hit = 1;
    glp_ios_terminate(T);
  }
  int best = glp_ios_best_node(T);
  if (best) {
    double b = glp_ios_node_bound(T, best);
    if (isfinite(b) && b > s->bound) s->bound = b;
  }
  if (s->o->progress && (reason == GLP_IBINGO || reason == GLP_ISELECT)) {
    double now = svc_now();
    if (reason == GLP_IBINGO || now - s->last_report >= 0.5) {
      s->last_report = now;
      glp_prob *P = glp_ios_get_prob(T);
      double inc = glp_mip_obj_val(P);
      double gap = glp_ios_mip_gap(T);
      if (s->o->progress(s->o->progress_user, inc, s->bound, gap, now - s->o->t0)) {
        s->stopped = 1;
        glp_ios_terminate(T);
      }
    }
  }
}

static glp_prob *build(const plan_milp *m) {
  glp_prob *lp = glp_create_prob();
  glp_set_obj_dir(lp, GLP_MIN);
  if (m->ncols) glp_add_cols(lp, m->ncols);
  if (m->nrows) glp_add_rows(lp, m->nrows);
  for (int j = 0; j < m->ncols; j++) {
    int type = isinf(m->ub[j]) ? GLP_LO : (m->lb[j] == m->ub[j] ? GLP_FX : GLP_DB);
    glp_set_col_bnds(lp, j + 1, type, m->lb[j], isinf(m->ub[j]) ? 0.0 : m->ub[j]);
    glp_set_obj_coef(lp, j + 1, m->obj[j]);
    glp_set_col_kind(lp, j + 1, m->kind[j] == MILP_INT ? GLP_IV : GLP_CV);
  }
  for (int i = 0; i < m->nrows; i++) {
    int t = m->rtype[i] == MILP_UP ? GLP_UP : m->rtype[i] == MILP_LO ? GLP_LO : GLP_FX;
    glp_set_row_bnds(lp, i + 1, t, m->rbnd[i], m->rbnd[i]);
  }
  if (m->nz) glp_load_matrix(lp, (int)m->nz, m->ia, m->ja, m->ar);
  return lp;
}

static int solve_guarded(const plan_milp *m, const milp_opts *o, milp_sol *sol, svc_err *err) {
  glp_prob *volatile lp = NULL;
  volatile int rc = 0;
  cb_state st = {.m = m, .o = o, .bound = -INFINITY};
  guard.last[0] = '\0';
  glp_term_hook(term_hook, NULL);
  glp_error_hook(error_hook, NULL);
  if (setjmp(guard.jb)) {
    /* The hook freed the environment (and lp with it). */
    return svc_err_set(err, SVC_SOLVER, "", "solver error: GLPK: %s",
                       guard.last[0] ? guard.last : "internal error");
  }
  lp = build(m);
  double left = o->time_limit_s - (svc_now() - o->t0);
  if (left < 0.05) left = 0.05;

  double lp0 = svc_now();
  int lr, lst;
  if (o->lp_method == MILP_LP_INTERIOR) {
    glp_iptcp ip;
    glp_init_iptcp(&ip);
    ip.msg_lev = GLP_MSG_OFF;
    lr = glp_interior(lp, &ip);
    lst = glp_ipt_status(lp);
    sol->lp_s = svc_now() - lp0;
    if (lr == 0 && lst == GLP_OPT) { /* no basis to branch from: the LP is the answer */
      sol->status = MILP_NOSOL;
      sol->bound = glp_ipt_obj_val(lp);
      sol->x = malloc(((size_t)m->ncols + 1) * sizeof *sol->x);
      sol->lp_x = malloc(((size_t)m->ncols + 1) * sizeof *sol->lp_x);
      if (!sol->x || !sol->lp_x) {
        rc = svc_err_set(err, SVC_NOMEM, "", NULL);
        goto done;
      }
      for (int j = 0; j < m->ncols; j++) sol->x[j] = sol->lp_x[j] = glp_ipt_col_prim(lp, j + 1);
      goto done;
    }
    if (lst == GLP_NOFEAS || lst == GLP_INFEAS) {
      sol->status = MILP_INFEASIBLE;
      goto done;
    }
    sol->status = MILP_NOSOL;
    sol->bound = -INFINITY;
    goto done;
  }
  glp_smcp sm;
  glp_init_smcp(&sm);
  sm.msg_lev = GLP_MSG_OFF;
  /* primal without presolve keeps the basis for the MIP's root; with the
   * presolver GLPK restores a basis of the original problem */
  sm.presolve = o->lp_method == MILP_LP_DUAL_PRESOLVE ? GLP_ON : GLP_OFF;
  sm.meth = o->lp_method == MILP_LP_PRIMAL || o->lp_method == MILP_LP_PRIMAL_CRASH ? GLP_PRIMAL
                                                                                   : GLP_DUALP;
  if (o->lp_method == MILP_LP_PRIMAL_CRASH || o->lp_method == MILP_LP_DUAL_CRASH) glp_cpx_basis(lp);
  sm.tm_lim = (int)fmin(left * 1000.0, 2e9);
  if (o->it_lim > 0) sm.it_lim = (int)fmin((double)o->it_lim, 2e9);
  lr = glp_simplex(lp, &sm);
  lst = glp_get_status(lp);
  sol->lp_s = svc_now() - lp0;
  sol->lp_iters = glp_get_it_cnt(lp);
  if (lr == GLP_ETMLIM) sol->hit_time = 1;
  if (lr == GLP_EITLIM) sol->hit_work = 1;
  if (lr == 0 && (lst == GLP_NOFEAS || lst == GLP_INFEAS)) {
    sol->status = MILP_INFEASIBLE;
    goto done;
  }
  if (lr != 0 || lst != GLP_OPT) {
    if (lr == GLP_ETMLIM || lr == GLP_EITLIM) { /* no root bound in time */
      sol->status = MILP_NOSOL;
      sol->bound = -INFINITY;
      goto done;
    }
    if (lr == GLP_ENOPFS || lst == GLP_NOFEAS) {
      sol->status = MILP_INFEASIBLE;
      goto done;
    }
    rc = svc_err_set(err, SVC_SOLVER, "", "solver error: LP relaxation: %s (status %d)",
                     plan_glpk_strerror(lr), lst);
    goto done;
  }
  st.bound = glp_get_obj_val(lp);
  /* keep the LP optimum: a caller that rounds can use it when branch and
   * bound finds no integer point in time */
  if (!(sol->x = malloc(((size_t)m->ncols + 1) * sizeof *sol->x))) {
    rc = svc_err_set(err, SVC_NOMEM, "", NULL);
    goto done;
  }
  for (int j = 0; j < m->ncols; j++) sol->x[j] = glp_get_col_prim(lp, j + 1);
  if ((sol->lp_x = malloc(((size_t)m->ncols + 1) * sizeof *sol->lp_x)))
    memcpy(sol->lp_x, sol->x, (size_t)m->ncols * sizeof *sol->x);
  if (o->lp_only) { /* the root LP alone (bench) */
    sol->status = MILP_NOSOL;
    sol->bound = st.bound;
    goto done;
  }

  glp_iocp io;
  glp_init_iocp(&io);
  io.msg_lev = GLP_MSG_OFF;
  io.presolve = o->presolve ? GLP_ON : GLP_OFF;
  io.mip_gap = o->mip_gap > 0 ? o->mip_gap : 1e-4;
  left = o->time_limit_s - (svc_now() - o->t0);
  io.tm_lim = (int)fmin(fmax(left, 0.05) * 1000.0, 2e9);
  io.br_tech = GLP_BR_DTH;  /* Driebeck-Tomlin branching */
  io.bt_tech = GLP_BT_BLB;  /* best local bound: moves the proven bound */
  io.pp_tech = GLP_PP_ROOT; /* preprocessing at the root only */
  io.fp_heur = GLP_OFF;     /* our greedy point is the warm start */
  io.ps_heur = o->ps_heur ? GLP_ON : GLP_OFF;
  if (o->ps_heur) io.ps_tm_lim = (int)fmin(fmax(left, 1) * 500.0, 2e9); /* half the time left */
  io.gmi_cuts = GLP_OFF, io.mir_cuts = GLP_OFF, io.cov_cuts = GLP_OFF, io.clq_cuts = GLP_OFF;
  io.cb_func = callback;
  io.cb_info = &st;
  int ir = glp_intopt(lp, &io);
  int mst = glp_mip_status(lp);
  sol->nodes = st.nodes;
  if (st.node_hit) sol->hit_work = 1;
  if (ir == GLP_ETMLIM) sol->hit_time = 1;
  if (ir != 0 && ir != GLP_ETMLIM && ir != GLP_EMIPGAP && ir != GLP_ESTOP) {
    if (ir == GLP_ENOPFS) {
      sol->status = MILP_INFEASIBLE;
      goto done;
    }
    rc = svc_err_set(err, SVC_SOLVER, "", "solver error: branch and bound: %s",
                     plan_glpk_strerror(ir));
    goto done;
  }
  if (mst == GLP_NOFEAS) {
    sol->status = MILP_INFEASIBLE;
    free(sol->x);
    sol->x = NULL;
    goto done;
  }
  if (mst != GLP_OPT && mst != GLP_FEAS) {
    sol->status = MILP_NOSOL;
    sol->bound = st.bound;
    goto done;
  }
  sol->obj = glp_mip_obj_val(lp);
  sol->status = (ir == 0 && mst == GLP_OPT) ? MILP_OPTIMAL : MILP_FEASIBLE;
  /* A finished search proves its incumbent; a stopped one proves what the
   * open nodes' best bound says. */
  sol->bound = sol->status == MILP_OPTIMAL ? sol->obj : fmin(st.bound, sol->obj);
  if (ir == GLP_EMIPGAP) sol->bound = fmax(st.bound, sol->obj * (1 - io.mip_gap));
  for (int j = 0; j < m->ncols; j++) sol->x[j] = glp_mip_col_val(lp, j + 1);
done:
  glp_delete_prob(lp);
  /* The environment (hooks, memory accounting, the terminal buffer) would
   * live until the thread exits, and the server's worker threads outlive
   * the daemon's own cleanup: freed after every solve, it cannot leak
   * (LeakSanitizer found it at shutdown after plans). The next solve on
   * this thread builds a fresh one. */
  glp_free_env();
  return rc;
}

int plan_milp_solve(const plan_milp *m, const milp_opts *o, milp_sol *sol, svc_err *err) {
  memset(sol, 0, sizeof *sol);
  sol->bound = -INFINITY;
  if (m->oom) return svc_err_set(err, SVC_NOMEM, "", "out of memory building the model");
  int tls = glp_config("TLS") != NULL;
  if (!tls) pthread_mutex_lock(&serial);
  int rc = solve_guarded(m, o, sol, err);
  if (!tls) pthread_mutex_unlock(&serial);
  if (rc) milp_sol_dispose(sol);
  return rc;
}

/* A column index out of range is a GLPK usage error: glp_set_col_bnds
 * calls glp_error, which reaches our hook. */
static int provoke(svc_err *err) {
  glp_prob *volatile lp = NULL;
  guard.last[0] = '\0';
  glp_term_hook(term_hook, NULL);
  glp_error_hook(error_hook, NULL);
  if (setjmp(guard.jb))
    return svc_err_set(err, SVC_SOLVER, "", "solver error: GLPK: %s",
                       guard.last[0] ? guard.last : "internal error");
  lp = glp_create_prob();
  glp_add_cols(lp, 1);
  glp_set_col_bnds(lp, 7, GLP_FX, 0, 0);
  glp_delete_prob(lp);
  glp_free_env();
  return 0;
}

int plan_glpk_selftest(svc_err *err) {
  int tls = glp_config("TLS") != NULL;
  if (!tls) pthread_mutex_lock(&serial);
  int rc = provoke(err);
  if (!tls) pthread_mutex_unlock(&serial);
  return rc;
}
