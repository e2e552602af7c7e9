/* planner internals: the priced option catalogue of an embedding problem,
 * the solver-neutral MILP description that glpk_support.c solves, and the
 * pieces the planner files share. Not for use outside planner/ (the tests
 * and the bench include it to cross-check against brute force).
 *
 * Invariant: every table has the same option list (emb_inst.nopt entries
 * in a fixed order); an option that is not allowed or cannot fit carries
 * ok = 0 and is never chosen.
 */
#ifndef CDPLAN_PLANNER_INT_H
#define CDPLAN_PLANNER_INT_H

#include "planner/planner.h"

/* How an option's work lands on ranks. */
typedef enum {
  EK_UNIFORM = 0, /* the same ms/bytes on every rank (DP, RW) */
  EK_ITEM,        /* k pieces, each on one rank (TW: k = 1, CW: k shards) */
  EK_NODE         /* the same ms/bytes on each rank of one node (TWRW) */
} emb_kind;

typedef struct {
  int shard, place, k, kind;
  double ms;         /* per touched rank (uniform: each rank; item: per shard) */
  double bytes;      /* idem */
  double host_bytes; /* host memory per piece (host placement: rows + optimizer state) */
  int allowed;       /* the request and the cluster allow it (then it is priced) */
  int ok;            /* allowed and each piece fits cap_bytes */
} emb_opt;

typedef struct {
  const plan_emb_problem *p;
  const plan_table *t;
  size_t n;
  int R, G, N; /* ranks, per node, nodes */
  int nopt;
  emb_opt *opt;    /* n * nopt, row-major by table */
  double fixed_ms; /* per-rank constant (collective latency) */
  double host_cap; /* host memory per node (bytes) */
  /* identical tables collapsed: class of each table, one representative
   * and a count per class */
  size_t nclass;
  size_t *cls_of, *cls_rep, *cls_count;
} emb_inst;

#define EOPT(in, t, o) (&(in)->opt[(size_t)(t) * (size_t)(in)->nopt + (size_t)(o)])

int emb_inst_init(emb_inst *in, const plan_emb_problem *p, const plan_table *t, size_t n,
                  svc_err *err);
void emb_inst_dispose(emb_inst *in);
/* The option index of a plan (-1 when not in the catalogue). */
int emb_opt_index(const emb_inst *in, int shard, int place, int k);
/* The minimum per-GPU bytes the tables need under any allowed options
 * (infeasibility messages and a quick check). */
double emb_min_bytes_per_gpu(const emb_inst *in);

/* Evaluate plans into res (arrays allocated here); *fits as in
 * plan_emb_evaluate. */
int emb_eval(const emb_inst *in, const plan_table_plan *plans, plan_emb_result *res, int *fits,
             svc_err *err);
/* Every concrete placement of table t under its feasible options (ranks,
 * nodes, column-wise rank multisets) into out[0..cap): the count, or -1
 * when there are more than cap. For brute-force checks of the solvers. */
int emb_placements(const emb_inst *in, size_t t, plan_table_plan *out, int cap);
int emb_result_alloc(plan_emb_result *r, size_t n, int ranks, svc_err *err);
/* Greedy into plans (n entries); 0, or -SVC_INFEASIBLE when some table fits nowhere. */
int emb_greedy(const emb_inst *in, plan_table_plan *plans, svc_err *err);
/* Memory-first greedy: a feasible start where emb_greedy runs out of HBM. */
int emb_greedy_mem(const emb_inst *in, plan_table_plan *plans, svc_err *err);
/* Improve an assignment by moves and swaps of items off the slowest rank,
 * keeping each table's option; stops at deadline (svc_now seconds). */
void emb_local_search(const emb_inst *in, plan_table_plan *plans, double deadline);
/* Re-choose options of the tables on the slowest rank while the maximum
 * drops (splits, host placement); stops at deadline. */
void emb_repair_options(const emb_inst *in, plan_table_plan *plans, double deadline);
/* Ties: the slowest rank may rise this much (relative) for a tidier plan,
 * well inside the solver's default gap (0.5 %). */
#define PLAN_TIE_TOL 1e-3
/* Tie-breaking with the slowest rank held: re-choose options and ranks to
 * avoid host placement and splits of small tables, then to lower the total
 * work, then splits (emb_eval.c). Returns the number of passes that
 * changed something; stops at deadline. */
int emb_tidy(const emb_inst *in, plan_table_plan *plans, double cap_ms, double deadline);
/* Pack tables with chosen options (choice[t] = option index) onto ranks:
 * LPT on load, capacity respected. 0, or -1 when something does not fit. */
int emb_pack(const emb_inst *in, const int *choice, plan_table_plan *plans);

/* Formatted byte counts for messages: "212 GB". */
void emb_fmt_gb(char *buf, size_t size, double bytes);

/* ---- Solver-neutral MILP ------------------------------------------------- */

enum { MILP_CONT = 0, MILP_INT = 1 };
enum { MILP_UP = 0, MILP_LO, MILP_FX };

typedef struct {
  int ncols, nrows;
  int ccap, rcap;
  double *lb, *ub, *obj;
  int *kind;
  double *rbnd;
  int *rtype;
  size_t nz, nzcap;
  int *ia, *ja; /* 1-based, GLPK style; index 0 unused */
  double *ar;
  int oom;
} plan_milp;

void milp_init(plan_milp *m);
void milp_dispose(plan_milp *m);
int milp_col(plan_milp *m, double lb, double ub, double obj, int kind); /* 0-based index */
int milp_row(plan_milp *m, int type, double rhs);                       /* 0-based index */
void milp_nz(plan_milp *m, int row, int col, double v);

enum { MILP_OPTIMAL = 0, MILP_FEASIBLE, MILP_INFEASIBLE, MILP_NOSOL };

typedef struct {
  double time_limit_s;
  double mip_gap;
  int presolve;       /* GLPK's MIP presolver (off: our LP basis is the root) */
  const double *warm; /* a feasible point (ncols) or NULL */
  plan_progress_fn progress;
  void *progress_user;
  double t0; /* svc_now() at the start of the whole solve, for elapsed */
} milp_opts;

typedef struct {
  int status;
  double obj;   /* incumbent (when FEASIBLE/OPTIMAL) */
  double bound; /* proven lower bound (minimisation) */
  double *x;    /* ncols, malloc'd: the incumbent, or with MILP_NOSOL the LP optimum (or NULL) */
} milp_sol;

/* Solve min obj'x. 0 with sol filled (status says what was found), or
 * -SVC_SOLVER when GLPK failed (its error text in err). */
int plan_milp_solve(const plan_milp *m, const milp_opts *o, milp_sol *sol, svc_err *err);
void milp_sol_dispose(milp_sol *s);
/* Provoke a GLPK error inside the guard (tests of the error path). */
int plan_glpk_selftest(svc_err *err);
/* The message for a GLP_E* return code. */
const char *plan_glpk_strerror(int code);

/* ---- Exact and decomposed models ------------------------------------------ */

/* Full per-rank MILP; warm = greedy plans (may be NULL). Fills plans and
 * *bound; returns 0 / negative code; *status the milp status. */
int emb_solve_exact(const emb_inst *in, const plan_table_plan *warm, double warm_ms,
                    const plan_solve_opts *o, double t0, double deadline, plan_table_plan *plans,
                    double *bound, int *status, svc_err *err);
/* The number of integer columns the exact model would have. */
size_t emb_exact_size(const emb_inst *in);
/* Rank-collapsed MILP (a relaxation: its bound is valid for the full
 * problem) + rounding + packing + local search. */
int emb_solve_decomposed(const emb_inst *in, double warm_ms, const plan_solve_opts *o, double t0,
                         double deadline, plan_table_plan *plans, int *have_plans, double *bound,
                         int *status, svc_err *err);

/* A capacity-free lower bound of the slowest rank's embedding ms. */
double emb_lower_bound(const plan_emb_problem *p, const plan_table *tables, size_t n);

/* ---- The knob search ---------------------------------------------------------- */

typedef struct {
  plan_recipe r;
  plan_dense_cost dense;
  double optimistic; /* score upper bound before solving */
  double greedy;     /* score with the greedy plan, 0 = none */
  double ub;         /* score upper bound after solving */
  int infeasible;
  int solved;
  char reason[384];
} plan_combo;

/* Fill out's changes (one at a time, fixed order, against the baseline)
 * and binding constraints. */
void plan_explain(const plan_request *req, plan_result *out, const plan_combo *c, size_t n);
/* The search alone (no baseline, no explanation) on req within limit_s:
 * the answer into best (dispose it), for re-solves with a constraint
 * relaxed. 0 or a negative code. */
int plan_resolve(const plan_request *req, double limit_s, plan_eval *best);
/* Score of a recipe at step_ms (higher is better; samples/s or samples per USD). */
double plan_score(const plan_request *req, const plan_recipe *r, double step_ms);

#endif
