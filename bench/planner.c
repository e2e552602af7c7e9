/* bench/planner: the embedding sharding/placement solver on generated
 * instances. For each size it prints the solve time, the proven gap and
 * the objective (the slowest rank's embedding ms per step) against the
 * TorchRec-style greedy on the same cost model; tiny instances are checked
 * against brute force; memory-tight instances with a few large tables
 * measure the gain over greedy. Ends with one JSON line.
 *
 * Generator: rows log-uniform-squared over 1e3..1e9 (most tables small, a
 * heavy tail, as in the Criteo/DLRM and TorchRec benchmark datasets),
 * pooling 1..100 with the same skew, dims 32/64/128/256 (64 most common),
 * fp16 rows, row-wise Adagrad; HBM for embeddings = 70% of usable (the
 * dense part takes the rest). Descriptors from data/hardware/NAME.json.
 *
 * The heavy, memory-tight generator (issue 24; --heavy): seeded; h200;
 * fp16 rows; row-wise Adagrad; batch 4096 per GPU; 0.7 of usable HBM for
 * the embeddings; rows log-uniform 1e3..1e9; dims 32/64/128/256/512 with
 * weights .15/.3/.3/.15/.1; pooling log-uniform 1..100; plus max(2,
 * tables/100) tables of 1e9..4e9 rows (log-uniform) at dim 128; host
 * memory per node from the descriptor (host_memory_bytes_per_node). Each
 * instance runs in its own process (fork) so that its peak RSS is its own.
 *
 * Usage: planner [--quick] [--time-limit S] [--case HW TABLES GPUS]
 *        planner --heavy [--lp] [--time-limit S] [--tables 100,300] [--gpus 8,64]
 *                [--seeds 1,2,3]
 * --lp: the decomposition's root LP only, under each GLPK option
 * (PLAN_LP_METHODS=0..4 picks some); PLAN_WORK_S, PLAN_LP_METHOD set the
 * solve's options for --heavy.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/costmodel_load.h"
#include "planner/planner.h"
#include "bench_cli.h"

static uint64_t rng = 88172645463325252ULL;

static double urand(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (double)(rng >> 11) / 9007199254740992.0;
}

static void gen_tables(plan_table *t, size_t n) {
  static const int dims[] = {32, 64, 64, 64, 128, 128, 256};
  for (size_t i = 0; i < n; i++) {
    double u = urand(), v = urand();
    snprintf(t[i].name, sizeof t[i].name, "t%zu", i);
    t[i].rows = (int64_t)exp(log(1e3) + (log(1e9) - log(1e3)) * u * u);
    t[i].pooling = fmax(1, round(exp(log(100.0) * v * v)));
    t[i].dim = dims[(int)(urand() * 7) % 7];
  }
}

static int load_hw(const char *name, cost_hw *hw) {
  char path[256];
  snprintf(path, sizeof path, "%s/data/hardware/%s.json", CDPLAN_SOURCE_DIR, name);
  return cm_load_hw(path, hw);
}

static void problem(plan_emb_problem *p, const cost_hw *hw, int gpus, int64_t batch, double cap) {
  memset(p, 0, sizeof *p);
  p->hw = *hw;
  p->gpus_per_node = gpus < 8 ? gpus : 8;
  p->nodes = gpus / p->gpus_per_node;
  p->batch_per_gpu = batch;
  p->emb_dtype = COST_DT_FP16;
  p->act_bytes = 2;
  p->sparse_opt = PLAN_SOPT_ROWWISE_ADAGRAD;
  p->cap_bytes = cap;
  p->allow_host = 1;
  p->cw_max = 4;
}

typedef struct {
  const char *hw;
  int tables, gpus;
} size_case;

static double worst_gap_1000 = 0, worst_time_1000 = 0, worst_gap_5000 = 0, worst_time_5000 = 0;
static int worse_than_greedy = 0;

static void run_size(const size_case *c, double tl) {
  cost_hw hw;
  plan_emb_problem p;
  plan_emb_result r;
  svc_err err;
  plan_table *t = calloc((size_t)c->tables, sizeof *t);
  if (!t || load_hw(c->hw, &hw)) {
    free(t);
    return;
  }
  gen_tables(t, (size_t)c->tables);
  problem(&p, &hw, c->gpus, 4096, 0.7 * hw.hbm_usable_bytes);
  plan_solve_opts o = {.time_limit_s = tl, .mip_gap = 0.005};
  if (getenv("PLAN_WORK_S")) o.work_s = atof(getenv("PLAN_WORK_S"));
  if (getenv("PLAN_LP_METHOD")) o.lp_method = atoi(getenv("PLAN_LP_METHOD"));
  int rc = plan_emb_solve(&p, t, (size_t)c->tables, &o, &r, &err);
  if (rc) {
    printf("| %-8s | %5d | %5d | error: %s |\n", c->hw, c->tables, c->gpus, err.message);
    free(t);
    return;
  }
  const char *m = plan_method_name(r.method);
  double vs = isfinite(r.greedy_ms) ? r.greedy_ms / r.max_ms : INFINITY;
  printf("| %-8s | %5d | %5d | %-10s | %7.2f | %6.3f%% | %9.3f | %9.3f | %6.3fx |\n", c->hw,
         c->tables, c->gpus, m, r.solve_s, r.gap * 100, r.max_ms, r.greedy_ms, vs);
  if (r.max_ms > r.greedy_ms + 1e-9) worse_than_greedy++;
  if (c->tables == 1000 && c->gpus == 128) {
    worst_gap_1000 = fmax(worst_gap_1000, r.gap);
    worst_time_1000 = fmax(worst_time_1000, r.solve_s);
  }
  if (c->tables == 5000 && c->gpus == 1024) {
    worst_gap_5000 = fmax(worst_gap_5000, r.gap);
    worst_time_5000 = fmax(worst_time_5000, r.solve_s);
  }
  plan_emb_result_dispose(&r);
  free(t);
}

/* ---- heavy, memory-tight (issue 24) ---------------------------------------- */

static uint64_t hrng;

static double hrand(void) { /* splitmix64 */
  uint64_t z = (hrng += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  return (double)(z >> 11) / 9007199254740992.0;
}

static double log_uniform(double lo, double hi) {
  return exp(log(lo) + (log(hi) - log(lo)) * hrand());
}

/* n ordinary tables, then max(2, n/100) huge ones; *total set. */
static plan_table *gen_heavy(int n, int seed, size_t *total) {
  static const int dims[] = {32, 64, 128, 256, 512};
  static const double w[] = {.15, .3, .3, .15, .1};
  size_t big = (size_t)(n / 100 > 2 ? n / 100 : 2), all = (size_t)n + big;
  plan_table *t = calloc(all, sizeof *t);
  if (!t) return NULL;
  hrng = 0x5EED0000ULL + (uint64_t)seed;
  for (size_t i = 0; i < all; i++) {
    snprintf(t[i].name, sizeof t[i].name, "t%zu", i);
    if (i < (size_t)n) {
      t[i].rows = (int64_t)log_uniform(1e3, 1e9);
      double u = hrand(), acc = 0;
      int d = 0;
      while (d < 4 && u >= (acc += w[d])) d++;
      t[i].dim = dims[d];
    } else {
      t[i].rows = (int64_t)log_uniform(1e9, 4e9);
      t[i].dim = 128;
    }
    t[i].pooling = log_uniform(1, 100);
  }
  *total = all;
  return t;
}

/* Does the instance fit HBM + host memory at all? Every table's rows and
 * row-wise Adagrad state live either in HBM or in host memory behind an
 * HBM cache of cache_ratio of them: the least HBM needed is the total
 * minus (1 - ratio) x what host memory can take (output buffers left out). */
static double heavy_need_ratio(const plan_table *t, size_t n, const plan_emb_problem *p) {
  double tot = 0;
  for (size_t i = 0; i < n; i++) tot += (double)t[i].rows * ((double)t[i].dim * 2 + 4);
  double host = p->nodes * (p->hw.host_mem_per_node > 0 ? p->hw.host_mem_per_node : 2e12);
  double hbm = tot - (1 - PLAN_DEFAULT_CACHE_RATIO) * fmin(host, tot);
  return hbm / (p->cap_bytes * p->gpus_per_node * p->nodes);
}

/* PLAN_DIAG: where the gap of an answer comes from. The answer's mean
 * rank load against its max (packing) and against the bound (option
 * choice or bound), its HBM and host use, the bound's parts. */
static void diag(const plan_emb_problem *p, const plan_table *t, size_t n,
                 const plan_emb_result *r) {
  svc_err err;
  double fixed = 0, trivial = 0;
  plan_emb_cost *c = calloc(n, sizeof *c);
  if (!c || plan_emb_costs(p, t, n, r->tables, c, &fixed, &trivial, &err)) {
    free(c);
    return;
  }
  double mean = 0, bmean = 0, bmax = 0;
  for (int k = 0; k < r->ranks; k++) {
    mean += r->rank_ms[k] / r->ranks, bmean += r->rank_bytes[k] / r->ranks;
    bmax = fmax(bmax, r->rank_bytes[k]);
  }
  double unif = fixed;
  int cnt[PLAN_SHARD__COUNT][2] = {{0}};
  for (size_t i = 0; i < n; i++) {
    const plan_table_plan *pl = &r->tables[i];
    if (c[i].spread == PLAN_SPREAD_EVERY_RANK) unif += c[i].ms;
    cnt[pl->shard][pl->place]++;
  }
  printf("  diag: max %.3f mean %.3f (max/mean %.3f) bound %.3f (mean/bound %.3f) uniform %.3f; "
         "trivial %.3f; HBM mean %.2f max %.2f of cap;",
         r->max_ms, mean, r->max_ms / mean, r->bound_ms, mean / r->bound_ms, unif, trivial,
         bmean / p->cap_bytes, bmax / p->cap_bytes);
  for (int s = 0; s < PLAN_SHARD__COUNT; s++)
    for (int pl = 0; pl < 2; pl++)
      if (cnt[s][pl]) printf(" %s%s %d", plan_shard_name(s), pl ? "/host" : "", cnt[s][pl]);
  printf("\n");
  int top = 0;
  for (int k = 1; k < r->ranks; k++)
    if (r->rank_ms[k] > r->rank_ms[top]) top = k;
  printf("  top rank %d: %.3f ms, %.2f of cap; pieces:", top, r->rank_ms[top],
         r->rank_bytes[top] / p->cap_bytes);
  int shown = 0;
  for (size_t i = 0; i < n && shown < 12; i++) {
    const plan_table_plan *pl = &r->tables[i];
    int on = c[i].spread == PLAN_SPREAD_PIECES ? (pl->shard == PLAN_SHARD_TW ? pl->rank == top : 0)
             : c[i].spread == PLAN_SPREAD_NODE ? pl->node == top / p->gpus_per_node
                                               : 0;
    for (int j = 0; pl->shard == PLAN_SHARD_CW && j < pl->k; j++) on |= pl->cw_ranks[j] == top;
    if (!on || c[i].ms < 0.02 * r->max_ms) continue;
    printf(" [t%zu %lldx%lld p%.0f %s%s%d %.2fms %.2fGB min %.2f]", i, (long long)t[i].rows,
           (long long)t[i].dim, t[i].pooling, plan_shard_name(pl->shard), pl->place ? "/host" : "",
           pl->k, c[i].ms, c[i].bytes / 1e9, c[i].min_ms);
    shown++;
  }
  printf("\n");
  /* How many ranks sit near the top: one rank or a crowd. */
  int over[4] = {0};
  static const double fr[4] = {0.99, 0.98, 0.96, 0.95};
  for (int k = 0; k < r->ranks; k++)
    for (int j = 0; j < 4; j++) over[j] += r->rank_ms[k] >= fr[j] * r->max_ms;
  printf("  ranks >= 0.99/0.98/0.96/0.95 of max: %d %d %d %d\n", over[0], over[1], over[2],
         over[3]);
  /* The ranks well below the top: what holds them back (HBM full?). */
  int lo = 0, lofull = 0;
  double lobytes = 0, loms = 0;
  for (int k = 0; k < r->ranks; k++)
    if (r->rank_ms[k] < 0.95 * r->max_ms) {
      lo++, loms += r->rank_ms[k], lobytes += r->rank_bytes[k] / p->cap_bytes;
      lofull += r->rank_bytes[k] >= 0.97 * p->cap_bytes;
    }
  if (lo)
    printf("  ranks < 0.95 of max: %d, mean %.1f ms, mean HBM %.2f of cap, %d at >= 0.97 of cap\n",
           lo, loms / lo, lobytes / lo, lofull);
  free(c);
}

static void heavy_one(const cost_hw *hw, int tables, int gpus, int seed, double tl) {
  size_t n = 0;
  plan_table *t = gen_heavy(tables, seed, &n);
  plan_emb_problem p;
  plan_emb_result r;
  svc_err err;
  if (!t) return;
  problem(&p, hw, gpus, 4096, 0.7 * hw->hbm_usable_bytes);
  double need = heavy_need_ratio(t, n, &p);
  plan_solve_opts o = {.time_limit_s = tl, .mip_gap = 0.005};
  if (getenv("PLAN_WORK_S")) o.work_s = atof(getenv("PLAN_WORK_S"));
  if (getenv("PLAN_LP_METHOD")) o.lp_method = atoi(getenv("PLAN_LP_METHOD"));
  if (getenv("PLAN_METHOD")) o.method = atoi(getenv("PLAN_METHOD")); /* diagnosis: plan_method */
  double t0 = svc_now();
  int rc = plan_emb_solve(&p, t, n, &o, &r, &err);
  double wall = svc_now() - t0;
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  if (rc) {
    printf("| %5d | %4d | %d | %5.2f | error | %6.2f | | | | | %5.0f | %s |\n", tables, gpus, seed,
           need, wall, ru.ru_maxrss / 1024.0, err.message);
  } else {
    double vs = isfinite(r.greedy_ms) ? r.greedy_ms / r.max_ms : INFINITY;
    printf(
        "| %5d | %4d | %d | %5.2f | %s | %6.2f | %6.2f%% | %9.3f | %9.3f | %6.3fx | %5.0f | %s |\n",
        tables, gpus, seed, need, plan_method_name(r.method), wall, r.gap * 100, r.max_ms,
        r.greedy_ms, vs, ru.ru_maxrss / 1024.0, r.timed_out ? "time limit" : "");
    if (getenv("PLAN_DIAG")) diag(&p, t, n, &r);
    if (getenv("PLAN_DUMP")) plan_emb_dump(&p, t, n, r.tables, r.max_ms, getenv("PLAN_DUMP"));
    if (getenv("PLAN_LOAD")) { /* docs/planner.md "Eleventh pass": a plan built offline */
      plan_table_plan *lp = calloc(n, sizeof *lp);
      plan_emb_result lr;
      int fits = 0;
      if (lp && !plan_emb_load(&p, t, n, lp, getenv("PLAN_LOAD")) &&
          !plan_emb_evaluate(&p, t, n, lp, &lr, &fits, &err)) {
        printf("  loaded plan %s: slowest rank %.4f ms, fits %d; gap to the bound %.4f: %.2f%%\n",
               getenv("PLAN_LOAD"), lr.max_ms, fits, r.bound_ms,
               100 * (lr.max_ms - r.bound_ms) / lr.max_ms);
        plan_emb_result_dispose(&lr);
      } else
        printf("  loaded plan %s: not read or not priced\n", getenv("PLAN_LOAD"));
      free(lp);
    }
    if (getenv("PLAN_EXACT_FROM_PLAN")) { /* docs/planner.md "Ninth pass": seconds */
      plan_emb_exact_check_info ec;
      double ts = svc_now();
      if (!plan_emb_exact_check(&p, t, n, r.tables, r.max_ms, atof(getenv("PLAN_EXACT_FROM_PLAN")),
                                1, &ec, &err))
        printf("  exact MILP from the plan, proximity search: incumbent %.4f (evaluated %.4f, "
               "fits %d), bound %.4f, in %.1f s; plan %.4f\n",
               ec.model_ms, ec.max_ms, ec.fits, ec.bound_ms, svc_now() - ts, r.max_ms);
      else
        printf("  exact check: %s\n", err.message);
    }
    if (getenv("PLAN_NODEBOUND")) { /* docs/planner.md "Ninth pass": seconds for GLPK */
      double nb = 0, ni = INFINITY, ts = svc_now();
      if (!plan_emb_node_bound(&p, t, n, atof(getenv("PLAN_NODEBOUND")), 0, &nb, &ni, &err))
        printf("  node bound %.4f (incumbent %.4f) in %.1f s; plan %.4f, its gap to it %.2f%%\n",
               nb, ni, svc_now() - ts, r.max_ms, 100 * (r.max_ms - nb) / r.max_ms);
      else
        printf("  node bound: %s\n", err.message);
    }
    plan_emb_result_dispose(&r);
  }
  fflush(stdout);
  free(t);
}

/* The decomposition's root LP under each GLPK option (issue 24, docs/planner.md). */
static void lp_one(const cost_hw *hw, int tables, int gpus, int seed, double tl) {
  static const char *const names[] = {"dual",
                                      "primal",
                                      "dual+presolve",
                                      "interior",
                                      "primal from crash basis",
                                      "dual from crash basis"};
  size_t n = 0;
  plan_table *t = gen_heavy(tables, seed, &n);
  plan_emb_problem p;
  svc_err err;
  if (!t) return;
  problem(&p, hw, gpus, 4096, 0.7 * hw->hbm_usable_bytes);
  const char *only = getenv("PLAN_LP_METHODS"); /* e.g. "013" */
  for (int m = 0; m < 6; m++) {
    plan_emb_lp_info lp;
    if (only && !strchr(only, '0' + m)) continue;
    int rc = plan_emb_root_lp(&p, t, n, m, tl, &lp, &err);
    if (rc == -SVC_BAD_FIELD) break; /* the instance itself: nothing to solve */
    printf("| %5d | %4d | %d | %d x %d | %s | %s | %.2f | %ld | %.4f |\n", tables, gpus, seed,
           lp.rows, lp.cols, names[m], rc ? err.message : "ok", lp.seconds, lp.iterations,
           lp.objective);
    fflush(stdout);
  }
  free(t);
}

static int parse_list(const char *s, int *v, int cap) {
  int n = 0;
  while (s && *s && n < cap) {
    v[n++] = atoi(s);
    s = strchr(s, ',');
    if (s) s++;
  }
  return n;
}

static int run_heavy(int argc, char **argv, double tl, int lp) {
  int tv[8] = {100, 300, 1000, 3000, 10000}, gv[8] = {8, 64, 128, 512, 1024, 4096},
      sv[8] = {1, 2, 3};
  int nt = 5, ng = 6, ns = 3;
  cost_hw hw;
  for (int i = 1; i + 1 < argc; i++) {
    if (!strcmp(argv[i], "--tables")) nt = parse_list(argv[i + 1], tv, 8);
    if (!strcmp(argv[i], "--gpus")) ng = parse_list(argv[i + 1], gv, 8);
    if (!strcmp(argv[i], "--seeds")) ns = parse_list(argv[i + 1], sv, 8);
  }
  if (load_hw("h200", &hw)) return 1;
  printf("heavy generator, h200, time limit %.0f s; need = least HBM needed (host memory %.1f TB "
         "per node used first) / HBM for embeddings (> 1: does not fit)\n\n",
         tl, (hw.host_mem_per_node > 0 ? hw.host_mem_per_node : 2e12) / 1e12);
  if (lp) {
    printf(
        "| tables | GPUs | seed | rows x cols | root LP | status | s | iterations | optimum |\n");
    printf("|---:|---:|---:|---|---|---|---:|---:|---:|\n");
  } else {
    printf("| tables | GPUs | seed | need | method | wall s | gap | max rank ms | greedy ms | "
           "greedy/ours | RSS MB | limit |\n");
    printf("|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---|\n");
  }
  fflush(stdout);
  for (int a = 0; a < nt; a++)
    for (int b = 0; b < ng; b++)
      for (int c = 0; c < ns; c++) {
        pid_t pid = fork();
        if (pid == 0) {
          if (lp)
            lp_one(&hw, tv[a], gv[b], sv[c], tl);
          else
            heavy_one(&hw, tv[a], gv[b], sv[c], tl);
          _exit(0);
        }
        int st = 0;
        if (pid > 0) waitpid(pid, &st, 0);
      }
  return 0;
}

/* ---- tiny: brute force ------------------------------------------------------ */

static int run_tiny(int count) {
  cost_hw hw;
  int equal = 0;
  if (load_hw("h200", &hw)) return 0;
  for (int k = 0; k < count; k++) {
    plan_table t[4];
    plan_emb_problem p;
    svc_err err;
    plan_emb_result r;
    double bf = INFINITY;
    gen_tables(t, 4);
    problem(&p, &hw, 3, 2048, (2 + 20 * urand()) * 1e9);
    p.gpus_per_node = 3, p.nodes = 1, p.cw_max = 2;
    int brc = plan_emb_brute_force(&p, t, 4, 128, &bf, &err);
    if (brc == -SVC_TOO_LARGE)
      bf = INFINITY; /* counted as no fit, as before */
    else if (brc)
      continue;
    plan_solve_opts o = {.method = PLAN_METHOD_EXACT, .time_limit_s = 10, .mip_gap = 1e-9};
    int rc = plan_emb_solve(&p, t, 4, &o, &r, &err);
    if ((rc == -SVC_INFEASIBLE && !isfinite(bf)) || (!rc && fabs(r.max_ms - bf) <= 1e-6 * bf))
      equal++;
    if (!rc) plan_emb_result_dispose(&r);
  }
  return equal;
}

/* ---- memory-tight: a few large tables -------------------------------------- */

static double run_tight(int count, double tl, int *greedy_fail, int *n_ok) {
  cost_hw hw;
  double sum = 0;
  *greedy_fail = 0, *n_ok = 0;
  if (load_hw("h100-sxm", &hw)) return 0;
  for (int k = 0; k < count; k++) {
    plan_table t[24];
    plan_emb_problem p;
    plan_emb_result r;
    svc_err err;
    int n = 8 + (int)(urand() * 12), large = 3 + (int)(urand() * 3);
    gen_tables(t, (size_t)n);
    double cap = 40e9;
    for (int i = 0; i < large; i++) { /* 30..85% of one GPU's embedding HBM */
      t[i].dim = 128;
      t[i].rows = (int64_t)((0.3 + 0.55 * urand()) * cap / (128 * 2 + 4));
      t[i].pooling = 5 + (int)(urand() * 40);
    }
    problem(&p, &hw, 8, 4096, cap);
    p.allow_host = 1;
    plan_solve_opts o = {.time_limit_s = tl, .mip_gap = 1e-4};
    if (plan_emb_solve(&p, t, (size_t)n, &o, &r, &err)) continue;
    (*n_ok)++;
    if (!isfinite(r.greedy_ms))
      (*greedy_fail)++;
    else
      sum += r.greedy_ms / r.max_ms - 1;
    plan_emb_result_dispose(&r);
  }
  int scored = *n_ok - *greedy_fail;
  return scored > 0 ? sum / scored : 0;
}

int main(int argc, char **argv) {
  int cli =
      bench_cli(argc, argv,
                "[--quick] [--time-limit S] [--case HW TABLES GPUS]\n"
                "       planner_bench --heavy [--lp] [--time-limit S] [--tables 100,300] "
                "[--gpus 8,64] [--seeds 1,2,3]",
                "--quick --heavy --lp --time-limit:1 --case:3 --tables:1 --gpus:1 --seeds:1", 0);
  if (cli >= 0) return cli;
  int quick = 0;
  double tl5000 = 60, tl1000 = 5;
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "--heavy")) {
      double tl = 10;
      for (int j = 1; j + 1 < argc; j++)
        if (!strcmp(argv[j], "--time-limit")) tl = atof(argv[j + 1]);
      svc_log_threshold = getenv("CDPLAN_DEBUG") ? SVC_LOG_DEBUG : SVC_LOG_WARN;
      int lp = 0;
      for (int j = 1; j < argc; j++) lp |= !strcmp(argv[j], "--lp");
      return run_heavy(argc, argv, tl, lp);
    }
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--quick")) quick = 1;
    if (!strcmp(argv[i], "--case") && i + 3 < argc) { /* --case HW TABLES GPUS: one size only */
      size_case one = {argv[i + 1], atoi(argv[i + 2]), atoi(argv[i + 3])};
      svc_log_threshold = getenv("CDPLAN_DEBUG") ? SVC_LOG_DEBUG : SVC_LOG_WARN;
      run_size(&one, one.tables >= 5000 ? tl5000 : tl1000);
      return 0;
    }
    if (!strcmp(argv[i], "--time-limit") && i + 1 < argc) tl5000 = tl1000 = atof(argv[++i]);
  }
  svc_log_threshold = SVC_LOG_WARN;
  static const size_case sizes[] = {
      {"h100-sxm", 10, 8},     {"h200", 100, 16},    {"mi350x", 500, 64},
      {"b200", 1000, 128},     {"h200", 1000, 128},  {"mi350x", 1000, 128},
      {"h100-sxm", 1000, 128}, {"b200", 5000, 1024}, {"mi350x", 5000, 1024},
  };
  size_t ns = sizeof sizes / sizeof sizes[0];
  if (quick) ns = 7;
  printf(
      "| hw | tables | GPUs | method | solve s | gap | max rank ms | greedy ms | greedy/ours |\n");
  printf("|---|---:|---:|---|---:|---:|---:|---:|---:|\n");
  for (size_t i = 0; i < ns; i++) run_size(&sizes[i], sizes[i].tables >= 5000 ? tl5000 : tl1000);
  int tiny = quick ? 10 : 40;
  int equal = run_tiny(tiny);
  int gfail = 0, ok = 0, tight_n = quick ? 8 : 30;
  double tight = run_tight(tight_n, 5, &gfail, &ok);
  printf("\ntiny (4 tables x 3 GPUs): %d/%d equal to brute force\n", equal, tiny);
  printf("memory-tight, few large tables (%d solved of %d): %.1f%% faster than greedy on "
         "average; greedy found no fit on %d\n",
         ok, tight_n, tight * 100, gfail);
  printf("never worse than greedy: %s\n", worse_than_greedy ? "NO" : "yes");
  printf("{\"bench\":\"planner\",\"tiny_equal\":%d,\"tiny\":%d,\"t1000x128_max_s\":%.2f,"
         "\"t1000x128_max_gap\":%.4f,\"t5000x1024_max_s\":%.2f,\"t5000x1024_max_gap\":%.4f,"
         "\"tight_gain_mean\":%.4f,\"tight_greedy_nofit\":%d,\"worse_than_greedy\":%d}\n",
         equal, tiny, worst_time_1000, worst_gap_1000, worst_time_5000, worst_gap_5000, tight,
         gfail, worse_than_greedy);
  return 0;
}
