/* planner: the co-design planner. From plain structs (hardware, cluster,
 * embedding tables, a dense-part cost function, the knobs the request
 * allows) it chooses the global recipe (batch, precisions, checkpointing,
 * DDP/FSDP, padding, GPU count) and the embedding sharding and placement
 * that maximise throughput (or minimise cost per sample), and explains
 * the choice against a baseline. GLPK is used by planner/glpk_support.c
 * only; nothing here touches SQLite or JSON.
 *
 * Two layers:
 *  - plan_emb_*: the embedding sharding/placement problem for one fixed
 *    global recipe: a min-max MILP (the step waits for the slowest rank)
 *    under HBM capacity, solved exactly on small instances and by
 *    decomposition (rank-collapsed MILP bound + packing) on large ones,
 *    always warm-started from / never worse than the TorchRec-style greedy.
 *  - plan_run / plan_compare: an enumeration over the few global knob
 *    combinations with the embedding problem inside, pruned by bounds.
 *
 * Thread safety: every function is reentrant; GLPK runs with its
 * thread-local environment (or serialized where GLPK lacks TLS).
 * Ownership: results own their arrays; release them with _dispose.
 */
#ifndef CDPLAN_PLANNER_H
#define CDPLAN_PLANNER_H

#include <stddef.h>
#include <stdint.h>

#include "common/common.h"
#include "costmodel/costmodel.h"
#include "costmodel/step.h"

#define PLAN_MAX_CW 8       /* column-wise shards per table, at most */
#define PLAN_MAX_CHOICES 16 /* values per knob */
#define PLAN_MAX_CHANGES 16
/* TorchRec's MIN_CW_DIM (torchrec/distributed/planner/constants.py): no
 * column-wise shard is narrower. */
#define PLAN_MIN_CW_DIM 128
/* Tables under this many rows are neither split nor placed in host memory
 * unless that lowers the step (emb_tidy). */
#define PLAN_SMALL_TABLE_ROWS 1000

/* Sharding types, in TorchRec's names (plan_shard_name). */
typedef enum {
  PLAN_SHARD_DP = 0, /* data_parallel: replicated on every rank */
  PLAN_SHARD_TW,     /* table_wise: whole table on one rank */
  PLAN_SHARD_RW,     /* row_wise: rows split over all ranks */
  PLAN_SHARD_CW,     /* column_wise: dim/k wide shards, each on one rank */
  PLAN_SHARD_TWRW,   /* table_row_wise: rows split over the ranks of one node */
  PLAN_SHARD__COUNT
} plan_shard;

/* Where the table lives: HBM (compute kernel "fused"), or host memory
 * behind an HBM cache ("fused_uvm_caching"). */
typedef enum { PLAN_PLACE_HBM = 0, PLAN_PLACE_HOST, PLAN_PLACE__COUNT } plan_place;

/* The sparse optimizer, in the cost model's values (cost_optimizer), so
 * that nothing translates between the two. */
typedef enum {
  PLAN_SOPT_SGD = COST_OPT_SGD,
  PLAN_SOPT_ROWWISE_ADAGRAD = COST_OPT_ROWWISE_ADAGRAD, /* one fp32 per row */
  PLAN_SOPT_ADAGRAD = COST_OPT_ADAGRAD,                 /* one fp32 per element */
  PLAN_SOPT_ADAM = COST_OPT_ADAM                        /* two fp32 per element */
} plan_sparse_opt;
typedef enum { PLAN_OBJ_THROUGHPUT = 0, PLAN_OBJ_COST } plan_objective;

const char *plan_shard_name(int shard); /* "table_wise" */
int plan_shard_parse(const char *name); /* -1 when unknown */
/* How host-placed tables are served: behind an HBM cache (TorchRec's
 * fused_uvm_caching), by the CPU (plain PyTorch), or by GPU kernels reading
 * pinned host memory in place (fused_uvm; the runner's uvm tables). */
typedef enum {
  PLAN_HOST_UVM_CACHE = 0,
  PLAN_HOST_CPU,
  PLAN_HOST_UVM,
  PLAN_HOST__COUNT
} plan_host_mode;
/* "uvm_caching" | "cpu" | "uvm" -> plan_host_mode; -1 when unknown */
int plan_host_mode_parse(const char *name);

/* "fused" | "fused_uvm_caching" | "cpu" | "fused_uvm" (by host mode) */
const char *plan_place_kernel(int place, int host_mode);

/* Defaults for host-placed tables (documented in docs/planner.md). */
#define PLAN_DEFAULT_HOST_BW 5.0e10  /* bytes/s: PCIe Gen5 x16, ~50 GB/s effective */
#define PLAN_DEFAULT_CACHE_RATIO 0.2 /* TorchRec's default cache_load_factor */
/* Host memory per node for host-placed tables when neither the cluster nor
 * the descriptor says: 2 TB, the system memory of an 8-GPU DGX H100/H200
 * (NVIDIA DGX H100 and DGX H200 datasheets). */
#define PLAN_DEFAULT_HOST_MEM 2.0e12

typedef struct {
  char name[64];
  int64_t rows, dim;
  double pooling; /* mean lookups per sample, > 0 */
} plan_table;

/* One embedding sharding/placement problem (a fixed global recipe). */
typedef struct {
  cost_hw hw;
  int gpus_per_node, nodes;
  int64_t batch_per_gpu;
  int emb_dtype;      /* cost_dtype of table rows */
  double act_bytes;   /* bytes per element of pooled outputs and their grads */
  int sparse_opt;     /* plan_sparse_opt */
  double cap_bytes;   /* HBM per GPU left for the embeddings */
  double host_bw;     /* 0 = PLAN_DEFAULT_HOST_BW */
  double cache_ratio; /* 0 = PLAN_DEFAULT_CACHE_RATIO */
  /* host memory per node for the rows (and sparse optimizer state) of
   * host-placed tables; 0 = hw.host_mem_per_node, else PLAN_DEFAULT_HOST_MEM */
  double host_cap_bytes;
  unsigned shard_mask; /* bit (1u << plan_shard) allowed; 0 = all */
  int allow_host;      /* host placement allowed */
  int cw_max;          /* largest column-wise split (2..8; 0 = 4) */
  /* plan_host_mode: PLAN_HOST_CPU, a host-placed table stays in CPU memory
   * and its lookups, backward and SGD run on the CPU; PLAN_HOST_UVM, GPU
   * kernels read and update it in place over the host link (both priced by
   * the step model, cost_step_host_table_ms); PLAN_HOST_UVM_CACHE,
   * TorchRec's UVM cache. */
  int host_mode;
} plan_emb_problem;

/* One table's plan. ranks: TW uses rank; CW uses cw_ranks[0..k); TWRW uses
 * node; DP and RW use every rank. */
typedef struct {
  int shard; /* plan_shard */
  int place; /* plan_place */
  int k;     /* CW shards (1 otherwise) */
  int rank;
  int node;
  int cw_ranks[PLAN_MAX_CW];
} plan_table_plan;

/* Progress of a long solve; returning non-zero stops it (the incumbent is
 * kept). Called from the solving thread. */
typedef int (*plan_progress_fn)(void *user, double incumbent_ms, double bound_ms, double gap,
                                double elapsed_s);

typedef enum {
  PLAN_METHOD_AUTO = 0,
  PLAN_METHOD_EXACT,             /* the full per-rank MILP */
  PLAN_METHOD_DECOMPOSED,        /* rank-collapsed MILP bound + packing */
  PLAN_METHOD_GREEDY,            /* the baseline only */
  PLAN_METHOD_DECOMPOSED_REPAIR, /* answer: the decomposition's rounding, some tables re-optioned
                                    to pack (tight memory) */
  PLAN_METHOD_MEMORY_FIRST,      /* answer: the memory-first packing (no rounding packed better) */
  PLAN_METHOD_GREEDY_LOCAL       /* answer: the greedy improved by option repair and moves */
} plan_method;

/* What ended a solve: nothing (finished or proven), its work limit (the
 * same answer on any machine), or the wall clock (the answer may differ
 * with the CPU share). */
typedef enum { PLAN_LIMIT_NONE = 0, PLAN_LIMIT_WORK, PLAN_LIMIT_TIME } plan_limit;
const char *plan_limit_name(int limit); /* "none" | "work" | "time" */

/* Work per second of time limit, from rates measured on one core of the
 * 2-core build machine (2026-12-05, docs/planner.md "Deterministic
 * limits") and set at or below them, so that the work limit, not the
 * clock, mostly ends a solve there. */
/* heuristic inner-loop steps: 1.75e8-2.8e8 measured in the decomposition's
 * packing and local search (heavy 3000 x 512 and 3000 x 1024, nice'd on
 * one core of this box under load 4-16, 2026-12-05; 4e7 before) */
#define PLAN_WORK_UNITS_PER_S 1.0e8
#define PLAN_LP_ITERS_PER_S                                                                        \
  1500.0 /* GLPK simplex iterations, root LP and B&B re-solves                                     \
            (1300-4500/s measured on the root LPs) */
#define PLAN_NODE_WORK_PER_S                                                                       \
  3.6e8 /* GLPK B&B nodes x (rows + columns)^2 (0.2 ms a node of a                                 \
           277-wide model, 4-11 ms of a 2700-wide one) */

/* "exact", "decomposed", "greedy", ... (the answer's method) */
const char *plan_method_name(int method);

typedef struct {
  double time_limit_s; /* whole call; <= 0 = 10 s */
  double mip_gap;      /* relative gap to stop at; <= 0 = 0.005 */
  int method;          /* plan_method */
  int exact_max_vars;  /* AUTO: exact model when it has at most this many integer vars (0 = 4000) */
  plan_progress_fn progress;
  void *progress_user;
  int tidy; /* GREEDY: still break ties (emb_tidy); the other methods always do */
  /* The work limits (heuristic steps, LP iterations, B&B nodes) are sized
   * from work_s seconds at the PLAN_*_PER_S rates (0 = time_limit_s);
   * time_limit_s stays the hard cap. < 0: no work limits (wall clock only). */
  double work_s;
  /* the root LP's algorithm: 0 = by size (its Lagrangian dual when the
   * model has no integer column, emb_lagr.c; else the dual simplex, the
   * primal from a crash basis above 20000 columns), else 1 + a
   * milp_lp_method (bench: always GLPK) */
  int lp_method;
} plan_solve_opts;

typedef struct {
  size_t n_tables;
  plan_table_plan *tables; /* n_tables */
  int ranks;
  double *rank_ms;    /* per-rank embedding load (lookups + communication) */
  double *rank_bytes; /* per-rank HBM used by embeddings */
  double max_ms;      /* the objective: the slowest rank */
  double bound_ms;    /* proven lower bound on max_ms */
  double gap;         /* (max_ms - bound_ms) / max_ms */
  double greedy_ms;   /* the greedy baseline's max (INFINITY when it found no fit) */
  int method;         /* what produced the answer (plan_method; GREEDY when greedy won) */
  int optimal;        /* gap within mip_gap */
  int timed_out;
  int limit; /* plan_limit: what ended the search */
  double solve_s;
} plan_emb_result;

/* Solve. 0, or -SVC_INFEASIBLE with err naming the constraint (e.g. "the
 * tables need at least 212 GB per GPU; 141 GB usable"), -SVC_SOLVER, or
 * -SVC_BAD_FIELD for an invalid problem. */
int plan_emb_solve(const plan_emb_problem *p, const plan_table *tables, size_t n,
                   const plan_solve_opts *opts, plan_emb_result *out, svc_err *err);
/* The TorchRec-style greedy alone (sort by cost, least-loaded rank that
 * fits). Same return codes. */
int plan_emb_greedy(const plan_emb_problem *p, const plan_table *tables, size_t n,
                    plan_emb_result *out, svc_err *err);
/* Price a given assignment: fills out (bound_ms = gap = 0); *fits tells
 * whether every rank is within cap_bytes. -SVC_BAD_FIELD when a plan
 * names an option the problem does not allow or a rank out of range. */
int plan_emb_evaluate(const plan_emb_problem *p, const plan_table *tables, size_t n,
                      const plan_table_plan *plans, plan_emb_result *out, int *fits, svc_err *err);
void plan_emb_result_dispose(plan_emb_result *r);

/* ---- Checks and diagnostics (planner/emb_check.c) --------------------------
 * For tests and benchmarks that cross-check the solver from outside. */

#define PLAN_BRUTE_MAX_TABLES 8
/* The least slowest-rank ms over every assignment of n tables (each over
 * every placement of every option that fits) into *best, INFINITY when
 * none fits. 0; -SVC_TOO_LARGE when a table has more than cap placements;
 * -SVC_BAD_FIELD past PLAN_BRUTE_MAX_TABLES tables; the problem's own
 * errors as plan_emb_evaluate. */
int plan_emb_brute_force(const plan_emb_problem *p, const plan_table *tables, size_t n, int cap,
                         double *best, svc_err *err);

/* The decomposition's root LP alone, warm-started from the greedy as the
 * solver is (bench/planner --lp): lp_method as plan_solve_opts.lp_method
 * less one (0 dual, 1 primal, 2 dual+presolve, 3 interior, 4 primal and 5
 * dual from a crash basis). */
typedef struct {
  double objective, seconds;
  long iterations;
  int rows, cols;
} plan_emb_lp_info;
int plan_emb_root_lp(const plan_emb_problem *p, const plan_table *tables, size_t n, int lp_method,
                     double time_limit_s, plan_emb_lp_info *out, svc_err *err);

/* A node-collapsed relaxation (planner/emb_nodebound.c, docs/planner.md
 * "Ninth pass"): table-row-wise tables as integers per node, rank-level
 * pieces counted per node, each node's largest piece beside its uniform
 * and node work; solved by GLPK within time_limit_s and node_lim (0: none).
 * *bound is its proven lower bound of the slowest rank (INFINITY when it
 * has no solution), *incumbent its own optimum (not a plan; INFINITY when
 * none was found). For diagnosis; the solver does not use it. */
int plan_emb_node_bound(const plan_emb_problem *p, const plan_table *tables, size_t n,
                        double time_limit_s, long node_lim, double *bound, double *incumbent,
                        svc_err *err);

/* The exact per-rank MILP (emb_exact.c) warm-started from a plan, for
 * time_limit_s, with GLPK's proximity search from it when proximity is
 * set: does a better plan exist? model_ms is the MILP's incumbent (host
 * memory left out), max_ms and fits the incumbent evaluated as any plan,
 * bound_ms the MILP's proven bound. For diagnosis (bench/planner
 * PLAN_EXACT_FROM_PLAN); the solver does not use it. */
typedef struct {
  double model_ms, max_ms, bound_ms;
  int fits;
} plan_emb_exact_check_info;
int plan_emb_exact_check(const plan_emb_problem *p, const plan_table *tables, size_t n,
                         const plan_table_plan *from, double from_ms, double time_limit_s,
                         int proximity, plan_emb_exact_check_info *out, svc_err *err);

/* How a table's option lays its work on ranks. */
typedef enum {
  PLAN_SPREAD_EVERY_RANK = 0, /* the same ms/bytes on every rank (DP, RW) */
  PLAN_SPREAD_PIECES,         /* k pieces on one rank each (TW: 1, CW: k) */
  PLAN_SPREAD_NODE            /* the same ms/bytes on each rank of one node (TWRW) */
} plan_spread;
/* What a table's planned option costs, as the solver prices it. */
typedef struct {
  double ms, bytes; /* per touched rank (per piece for PLAN_SPREAD_PIECES) */
  double min_ms;    /* the least ms of the table's options that fit (INFINITY: none) */
  int spread;       /* plan_spread */
} plan_emb_cost;
/* The priced instance (every allowed option of every table) and a plan
 * written to path as text, for offline study (bench/planner PLAN_DUMP,
 * docs/planner.md "Tenth pass"). 0 or -1. */
int plan_emb_dump(const plan_emb_problem *p, const plan_table *tables, size_t n,
                  const plan_table_plan *plans, double max_ms, const char *path);
/* The plan lines (P) of such a file into plans[0..n) (bench/planner PLAN_LOAD, docs/planner.md
 * "Eleventh pass": a plan built offline, priced by plan_emb_evaluate). 0 or -1 (no file, a line
 * out of range or an option not in the catalogue). */
int plan_emb_load(const plan_emb_problem *p, const plan_table *tables, size_t n,
                  plan_table_plan *plans, const char *path);
/* out[i] for plans[i] (caller's n entries); *fixed_ms the per-rank
 * constant (collective latency), *trivial_ms the closed-form lower bound
 * (docs/planner.md, Solving, 5). -SVC_BAD_FIELD when a plan is not one of
 * its table's options. */
int plan_emb_costs(const plan_emb_problem *p, const plan_table *tables, size_t n,
                   const plan_table_plan *plans, plan_emb_cost *out, double *fixed_ms,
                   double *trivial_ms, svc_err *err);

/* ---- The global recipe --------------------------------------------------- */

typedef struct {
  int gpus_per_node, nodes;
  int64_t batch_per_gpu;
  int dense_dtype;   /* cost_dtype */
  int emb_dtype;     /* cost_dtype */
  int checkpointing; /* cost_ckpt: none, selective, full */
  int fsdp;          /* 0 DDP, 1 FSDP for the dense part */
  int pad;           /* dims padded to alignment / tile multiples */
} plan_recipe;

/* The dense part (everything but the embedding tables) under a recipe. */
typedef struct {
  double ms;    /* step time of the dense part incl. its communication */
  double bytes; /* peak HBM per GPU: weights, gradients, optimizer, activations, workspace */
  double weights_bytes, grads_bytes, optim_bytes, act_bytes, workspace_bytes;
  /* where the time goes (0 when the dense fn does not say): exposed
   * communication, and the time the GPU idles while the framework
   * dispatches (the step model's overhead component) with the kernel count */
  double comm_ms, overhead_ms;
  int64_t kernels;
} plan_dense_cost;

/* Prices the dense part. The api plugs in the step model; planner/dense.c
 * provides plan_dense_step over the step model. */
typedef int (*plan_dense_fn)(void *user, const cost_hw *hw, const plan_recipe *r,
                             plan_dense_cost *out, svc_err *err);

/* The dense part priced by the step model (costmodel/step.h): the
 * workload with its tables replaced by one negligible data-parallel table
 * of the same count and dim, so that cost_step prices the MLPs, the
 * interaction, the dense optimizer, DDP/FSDP communication, activations
 * and workspace; the embedding work is what plan_emb_* adds. user = const
 * plan_step_dense *. */
typedef struct {
  cost_workload w;  /* kind COST_WL_DLRM; w.dlrm.tables borrowed */
  cost_recipe base; /* framework and the fields plan_recipe does not set */
} plan_step_dense;

int plan_dense_step(void *user, const cost_hw *hw, const plan_recipe *r, plan_dense_cost *out,
                    svc_err *err);
/* The pad multiple for a dtype on hw: the matrix instruction's n (8..128). */
int64_t plan_pad_multiple(const cost_hw *hw, int dtype);

/* What the request lets the planner turn. A knob with one value is fixed. */
typedef struct {
  int n_batch;
  int64_t batch[PLAN_MAX_CHOICES]; /* batch per GPU values */
  int64_t global_batch;            /* > 0: batch_per_gpu = global / gpus (overrides batch) */
  int n_dense_dtype, dense_dtype[PLAN_MAX_CHOICES];
  int n_emb_dtype, emb_dtype[PLAN_MAX_CHOICES];
  int n_ckpt, ckpt[3];
  int n_fsdp, fsdp[2];
  int n_pad, pad[2];
  int n_nodes, nodes[PLAN_MAX_CHOICES]; /* node counts (objective cost) */
  unsigned shard_mask;
  int allow_host;
  int keep_baseline_sharding; /* the embedding plan stays the baseline's greedy */
} plan_knobs;

typedef struct {
  cost_hw hw;
  int gpus_per_node; /* of the cluster */
  const plan_table *tables;
  size_t n_tables;
  int sparse_opt;
  double host_bw, cache_ratio;
  int host_mode;         /* plan_host_mode of host-placed tables, see plan_emb_problem */
  double price_per_hour; /* USD per GPU-hour (cost objective), 0 = the descriptor's */
  plan_recipe baseline;
  /* The baseline's own table sharding (the request's baseline.sharding):
   * its greedy plan (none given to plan_run) uses only these types, with
   * host placement as baseline_allow_host says; 0 = any type and placement
   * the knobs allow. */
  unsigned baseline_shard_mask;
  int baseline_allow_host;
  plan_knobs knobs;
  int objective; /* plan_objective */
  plan_dense_fn dense;
  void *dense_user;
  plan_solve_opts solve;
} plan_request;

/* A full evaluation of one recipe + embedding plan. */
typedef struct {
  plan_recipe recipe;
  plan_dense_cost dense;
  plan_emb_result emb;
  int fits;       /* peak memory within hbm_usable_bytes */
  double step_ms; /* dense + slowest rank's embedding work */
  double samples_per_s;
  double usd_per_msample; /* 0 when no price */
  double peak_bytes;      /* the fullest GPU */
} plan_eval;

typedef struct {
  char knob[24]; /* "dense_precision", "batch_per_gpu", ..., "embedding_plan" */
  char from[96], to[96];
  double samples_per_s; /* after applying this change (0 when it does not fit alone) */
  double gain;          /* ratio against the state before it; 0 = not feasible alone */
  char note[128];
  /* the change alters what training computes (global batch, dense compute
   * below 16 bits, table rows below 16 bits): why, in one line */
  int affects_convergence;
  char why[128];
} plan_change;

typedef struct {
  plan_eval best;
  plan_eval baseline; /* baseline recipe with the greedy (or given) embedding plan */
  int baseline_fits;
  char baseline_reason[384];
  double gap;        /* the embedding MILP's proven gap for the chosen recipe */
  double global_gap; /* the search's: against every combination's bound */
  int n_changes;
  plan_change changes[PLAN_MAX_CHANGES];
  int n_binding;
  char binding[8][200];
  /* what bounds the step: host dispatch, communication, memory */
  int n_bound;
  char bound[4][200];
  int combos, combos_pruned, combos_infeasible;
  /* plan_limit over the whole search: TIME when the clock cut bounding,
   * the greedy pass, the MILP pass or any solve (the answer may then
   * differ with the CPU share); else WORK when a work limit ended one */
  int limit;
  double solve_s;
} plan_result;

/* Plan. baseline_plans (may be NULL) is the baseline's embedding plan
 * (compare's direct port); NULL = greedy on the baseline recipe. */
int plan_run(const plan_request *req, const plan_table_plan *baseline_plans, plan_result *out,
             svc_err *err);
void plan_result_dispose(plan_result *r);
void plan_eval_dispose(plan_eval *e);

/* Evaluate one recipe on req's hardware: the dense fn + the embedding plan
 * (plans NULL: greedy). */
int plan_evaluate(const plan_request *req, const plan_recipe *r, const plan_table_plan *plans,
                  plan_eval *out, svc_err *err);

#endif
