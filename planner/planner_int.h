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

#include <stdint.h>

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
/* What a search phase may spend: work units (inner-loop steps, counted
 * the same on any machine, so the answer does not depend on the CPU share)
 * and a wall-clock deadline (svc_now seconds), the hard cap. */
typedef struct {
  double deadline;
  double work; /* units left */
  int time_hit, work_hit;
  double work0, t_start; /* for the debug log */
  double ils_extra;      /* work an earlier phase left, for the iterated local search */
} emb_budget;
/* Rank loads under construction: ms and HBM bytes per rank, host bytes
 * per node, the capacities (emb_eval.c). emb_host_fill: h from plans. */
typedef struct {
  double *ms, *b;
  double *h; /* host bytes per node */
  double cap, hcap;
} emb_ranks;
int emb_ranks_new(const emb_inst *in, emb_ranks *s);
void emb_ranks_free(emb_ranks *s);
void emb_host_fill(const emb_inst *in, const plan_table_plan *plans, emb_ranks *s);
/* Spend units; 1 when the work or the time is gone (and says which). */
int emb_spend(emb_budget *b, double units);
/* Improve an assignment by moves and swaps of items off the slowest rank,
 * keeping each table's option, within b. */
void emb_local_search(const emb_inst *in, plan_table_plan *plans, emb_budget *b);
/* Re-choose options of the tables on the slowest rank while the maximum
 * drops (splits, host placement), within b. */
void emb_repair_options(const emb_inst *in, plan_table_plan *plans, emb_budget *b);
/* Option choices (emb_choice.c). emb_round_choice: the LP's counts per
 * class and option (column ncol[c * nopt + o] of x, -1 when none) rounded
 * by largest remainder, one option per table; 0 or -1 (no memory).
 * emb_cap_choice: from base (or each table's cheapest total when NULL),
 * every table whose piece cannot fit under T beside the uniform work takes
 * its cheapest-total option whose piece does. emb_cap_choice_fixed: the
 * same with the uniform work the re-chosen tables add counted. */
int emb_round_choice(const emb_inst *in, const int *ncol, const double *x, int *choice);
/* An option's work over all the ranks it touches (ms). */
double emb_total_ms(const emb_inst *in, const emb_opt *e);
void emb_cap_choice(const emb_inst *in, const int *base, double T, int *choice);
void emb_cap_choice_fixed(const emb_inst *in, const int *base, double T, int *choice);
/* Iterated local search (emb_ils.c): up to max_iter perturbations of
 * plans (a few tables moved or swapped, one on the slowest rank), each
 * followed by emb_local_search; plans becomes the best that fits, within
 * b. */
void emb_ils(const emb_inst *in, plan_table_plan *plans, emb_budget *b, int max_iter);
/* Each uniform table re-optioned to each of its other options, local search and a short
 * iterated local search (screen perturbations) from each; the best of them searched deep more,
 * kept when lower; again from there, up to rounds times (emb_ils.c). */
void emb_release_uniform(const emb_inst *in, plan_table_plan *plans, emb_budget *b, int screen,
                         int deep, int rounds);
/* emb_release_uniform with the work b has left (after the bound's second solve), its own
 * end by work not flagged on b. */
void emb_release_stage2(const emb_inst *in, plan_table_plan *plans, emb_budget *b);
/* Simulated annealing over the pieces and lumps of plans, every option kept (emb_anneal.c):
 * cost the summed load above target over the ranks, HBM and host memory kept, at most moves
 * moves (it stops when no rank is above target); plans becomes the least-cost plan seen,
 * searched locally, when its slowest rank is lower and it fits. 1 when plans changed. */
int emb_anneal(const emb_inst *in, plan_table_plan *plans, emb_budget *b, double target, long moves,
               uint64_t seed);
/* A packing for target built by annealing over the non-uniform tables' options and the lumps'
 * nodes, each state packed by best fit (emb_construct.c): plans (fitting memory, maybe above
 * target) from plans' options, the uniform ones kept. 0, or -1 (plans unchanged or partly
 * written: none with memory for it, no memory). */
int emb_construct(const emb_inst *in, plan_table_plan *plans, emb_budget *b, double target,
                  long iters, uint64_t seed);
/* When plans are above bound / 0.98 (bound: the answer's): emb_construct then emb_anneal, a few
 * seeds, with what b has left plus extra units b is not charged for; plans change only to a plan
 * with a lower slowest rank that fits. */
void emb_construct_stage(const emb_inst *in, plan_table_plan *plans, emb_budget *b, double bound,
                         double extra);
/* emb_ils after stage 2 with at most share of b's work0 (what is left of
 * it) plus extra units that b is not charged for (emb_ils.c). */
void emb_ils_stage2(const emb_inst *in, plan_table_plan *plans, emb_budget *b, double share,
                    int max_iter, double extra);
/* Issue 24's target for the proven gap; a plan further from the answer's bound gets the
 * construction stage (emb_construct_stage). */
#define PLAN_GAP_TARGET 0.02
/* Ties: the slowest rank may rise this much (relative) for a tidier plan,
 * well inside the solver's default gap (0.5 %). */
#define PLAN_TIE_TOL 1e-3
/* Tie-breaking with the slowest rank held: re-choose options and ranks to
 * avoid host placement and splits of small tables, then to lower the total
 * work, then splits (emb_eval.c). Returns the number of passes that
 * changed something; stops when b is spent. */
int emb_tidy(const emb_inst *in, plan_table_plan *plans, double cap_ms, emb_budget *b);
/* Pack tables with chosen options (choice[t] = option index) onto ranks,
 * capacity (HBM per GPU, host memory per node) respected. EMB_PACK_PLAIN:
 * LPT on load, -1 when a piece does not fit; EMB_PACK_REPAIR: LPT, a table
 * whose option does not fit takes its option of least total work that
 * does; EMB_PACK_MEMORY: the same, pieces by decreasing memory first.
 * Returns the number of tables repaired (0 with PLAIN), or -1. */
enum { EMB_PACK_PLAIN = 0, EMB_PACK_REPAIR, EMB_PACK_MEMORY };
int emb_pack(const emb_inst *in, const int *choice, plan_table_plan *plans, int mode);

/* Pack tables with chosen options under a target T for the slowest rank
 * (emb_pack.c): first, when the choice needs more than fill (> 0) of all
 * GPUs' HBM, tables move to options of less HBM (choice changed), the
 * least extra work per byte first; then every piece, biggest first, where
 * its load stays under T and its memory fits: on the rank left least full
 * in its fuller dimension (best_fit 0) or on the rank whose load ends
 * highest (best_fit 1); a table whose option fits nowhere takes its option
 * of least total work that does (counted in *repaired), and one that fits
 * nowhere under T goes over it (the least-loaded ranks with room). 0 when
 * everything is placed under T, 1 when placed with some rank over T, -1
 * when not (memory, or b spent). */
int emb_pack_target(const emb_inst *in, int *choice, double T, double fill, int best_fit,
                    plan_table_plan *plans, emb_budget *b, int *repaired);

/* Re-option the biggest tables on the slowest rank to a smaller piece,
 * place them on the least-loaded ranks with room and rebalance by moves
 * and swaps; kept when the maximum drops (emb_pack.c). 1 when plans
 * changed. */
int emb_kick(const emb_inst *in, plan_table_plan *plans, emb_budget *b);

/* Add a uniform option's work (e->ms and e->bytes on every rank, its host
 * bytes x G on every node) to per-rank ms[] and b[] and per-node h[] when
 * every rank stays within cap and every node within hcap: 0, or -1 with
 * nothing changed (emb_eval.c; the placers of emb_eval.c and emb_pack.c). */
int emb_add_uniform(const emb_inst *in, const emb_opt *e, double *ms, double *b, double *h,
                    double cap, double hcap);

/* A table (and one of its options) with a sort key. emb_by_key_desc (for
 * qsort) orders by key, largest first, then by table, then by option: a
 * total order, so every qsort gives the same plans (emb_eval.c). */
typedef struct {
  double key;
  size_t i;
  int o;
} emb_keyed;
int emb_by_key_desc(const void *a, const void *b);

/* max and min for the packing's hot loops: fmax/fmin are libm calls here
 * (NaN rules; 12 % of heavy 10000 x 4096's time, perf, 2026-12-05); the
 * loads and fills they compare are never NaN. */
/* splitmix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number
 * generators", OOPSLA 2014): one 64-bit state, good enough for the searches'
 * choices (emb_ils.c, emb_anneal.c, emb_construct.c). */
static inline uint64_t emb_rng_next(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
/* Uniform in [0, n); 0 when n <= 0. */
static inline int emb_rng_below(uint64_t *s, int n) {
  return n > 0 ? (int)(emb_rng_next(s) % (uint64_t)n) : 0;
}
/* Uniform in [0, 1) from the top 53 bits. */
static inline double emb_rng_unit(uint64_t *s) {
  return (double)(emb_rng_next(s) >> 11) * (1.0 / 9007199254740992.0);
}
static inline double emb_max(double a, double b) { return a > b ? a : b; }
static inline double emb_min(double a, double b) { return a < b ? a : b; }

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
  /* work limits (0 = none): the root LP's simplex iterations and branch and
   * bound's nodes. With them the answer does not depend on the CPU share;
   * time_limit_s stays the hard cap. */
  long it_lim, node_lim;
  long bb_it_lim; /* simplex iterations, root LP and branch and bound together (0 = none) */
  int lp_method;  /* milp_lp_method */
  int lp_only;    /* stop after the root LP */
  int ps_heur;    /* GLPK's proximity search from the warm point (diagnosis only) */
  plan_progress_fn progress;
  void *progress_user;
  double t0; /* svc_now() at the start of the whole solve, for elapsed */
} milp_opts;

/* How the root LP is solved (docs/planner.md "GLPK options" has the
 * figures: the dual simplex is 2-4x faster than the primal on the
 * decomposition's LPs, so it is the default). */
enum {
  MILP_LP_DUAL = 0,      /* dual simplex (falling back to primal), no presolve: the basis is the
                            MIP's root */
  MILP_LP_PRIMAL,        /* primal simplex, no presolve (the default before 2026-12-05) */
  MILP_LP_DUAL_PRESOLVE, /* dual simplex after GLPK's LP presolver */
  MILP_LP_INTERIOR,      /* glp_interior (no basis: no branch and bound after it) */
  MILP_LP_PRIMAL_CRASH,  /* primal simplex from Bixby's crash basis (glp_cpx_basis) */
  MILP_LP_DUAL_CRASH     /* dual simplex (primal where not dual feasible) from the crash basis */
};

typedef struct {
  int status;
  int hit_time, hit_work; /* the wall-clock cap / a work limit ended a phase */
  long lp_iters, nodes;   /* simplex iterations of the root LP, B&B nodes visited */
  double lp_s;            /* seconds in the root LP */
  double *lp_x;           /* ncols, malloc'd: the root LP optimum (or NULL) */
  double obj;             /* incumbent (when FEASIBLE/OPTIMAL) */
  double bound;           /* proven lower bound (minimisation) */
  double *x; /* ncols, malloc'd: the incumbent, or with MILP_NOSOL the LP optimum (or NULL) */
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
                    double *bound, int *status, int *hit_time, svc_err *err);
/* The number of integer columns the exact model would have. */
size_t emb_exact_size(const emb_inst *in);
/* Rank-collapsed MILP (a relaxation: its bound is valid for the full
 * problem) + rounding (of the incumbent and of the LP optimum) + packing
 * (repaired where memory is tight) + local search, within b (its LP
 * iterations and nodes sized from o->work_s). *repaired: the best packing
 * re-optioned some tables to fit. */
int emb_solve_decomposed(const emb_inst *in, double warm_ms, const plan_solve_opts *o, double t0,
                         emb_budget *b, plan_table_plan *plans, int *have_plans, int *repaired,
                         double *bound, int *status, int *s1_time, int *s1_work, svc_err *err);

/* The root LP's algorithm for a model of ncols columns (milp_lp_method). */
int emb_lp_method(const plan_solve_opts *o, int ncols);
/* The decomposition's root LP alone (bench/planner --lp): its optimum,
 * seconds, simplex iterations, size. 0 or a negative code. */
int emb_agg_root_lp(const emb_inst *in, double warm_ms, int lp_method, double time_limit_s,
                    double *obj, double *secs, long *iters, int *rows, int *cols, svc_err *err);
/* The decomposition's LP when it has no integer column, by its
 * Lagrangian dual (emb_lagr.c): a valid lower bound into *bound (the LP
 * optimum up to the bisection's tolerance) and each class's option at the
 * multipliers into choice_cls (nclass entries, memory within capacity);
 * *visits the option visits spent. 0, or -1 (no memory, or no multiplier
 * makes the choice fit: let GLPK decide). */
int emb_lagr_solve(const emb_inst *in, int *choice_cls, double *bound, double *visits);
/* The closed-form bound of an instance (docs/planner.md, Solving, 5). */
double emb_trivial_bound(const emb_inst *in);
/* Can a plan have max load L when every piece sits beside all the uniform
 * work the plan chooses (emb_bound.c)? U, Um: uniform ms and bytes every
 * rank carries at least. 0 when shown impossible; *work grows by the
 * option visits, and at *work >= cap the answer is 1 (not shown). */
int emb_split_possible(const emb_inst *in, double L, double U, double Um, double *work, double cap);
/* The option per table (choice, n entries) of least total work, with the
 * uniform options' ms summing to at most Us and every other piece at most
 * T - fixed - Us (the split bound's relaxation as a candidate for the
 * packing). The option visits it took, or -1 when none meets them. */
double emb_split_choice(const emb_inst *in, double T, double Us, int *choice);
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

/* emb_exact.c: the per-rank MILP from plans, off the clock (diagnosis). */
int emb_exact_improve(const emb_inst *in, plan_table_plan *plans, double warm_ms,
                      double time_limit_s, int ps, double *obj, double *bound, svc_err *err);

#endif
