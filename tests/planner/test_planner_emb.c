/* The embedding sharding/placement solver: exact answers equal brute force
 * over every assignment on tiny instances, infeasible requests name the
 * constraint, the answer is never worse than the greedy, a time-limited
 * solve returns its incumbent with a proven gap, and GLPK failures come
 * back as SVC_SOLVER instead of aborting. */
#include <math.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/planner/planner_fixture.h"

/* ---- brute force ---------------------------------------------------------- */

#define MAXP 512

/* planner/emb_check.c's brute force (every placement of every option that
 * fits, every assignment): INFINITY when nothing fits. */
static double brute_force(const plan_emb_problem *p, const plan_table *t, size_t n) {
  double best = NAN;
  svc_err err;
  assert_int_equal(plan_emb_brute_force(p, t, n, MAXP, &best, &err), 0);
  return best;
}

static void random_tables(plan_table *t, size_t n, uint64_t *seed) {
  for (size_t i = 0; i < n; i++) {
    memset(&t[i], 0, sizeof t[i]);
    snprintf(t[i].name, sizeof t[i].name, "t%zu", i);
    t[i].rows = (int64_t)pow(10, 4 + 4.5 * fx_rand(seed)); /* 1e4 .. 3e8 */
    t[i].dim = fx_rand(seed) < 0.5 ? 64 : 128;
    t[i].pooling = 1 + floor(fx_rand(seed) * 40);
  }
}

static void check_exact(int gpn, int nodes, size_t n, double cap_gb, uint64_t seed) {
  plan_emb_problem p;
  plan_table t[8];
  plan_emb_result r;
  svc_err err;
  fx_problem(&p, gpn, nodes, cap_gb);
  random_tables(t, n, &seed);
  double bf = brute_force(&p, t, n);
  plan_solve_opts o = {.method = PLAN_METHOD_EXACT, .time_limit_s = 20, .mip_gap = 1e-9};
  int rc = plan_emb_solve(&p, t, n, &o, &r, &err);
  if (!isfinite(bf)) {
    assert_int_equal(rc, -SVC_INFEASIBLE);
  } else {
    assert_int_equal(rc, 0);
    assert_true(fabs(r.max_ms - bf) <= 1e-6 * bf);
    assert_true(r.gap <= 1e-6);
    assert_true(r.max_ms <= r.greedy_ms + 1e-12);
    plan_emb_result_dispose(&r);
  }
}

static void test_planner_emb__exact_equals_brute_force(void **state) {
  (void)state;
  /* 3 ranks in one node, 4 tables; loose, tight and very tight memory */
  check_exact(3, 1, 4, 400, 1);
  check_exact(3, 1, 4, 30, 2);
  check_exact(3, 1, 4, 8, 3);
  check_exact(2, 1, 4, 5, 4);
  check_exact(1, 3, 3, 20, 5);
  check_exact(3, 1, 3, 2, 6);
}

static void test_planner_emb__exact_equals_brute_force_table_row_wise(void **state) {
  (void)state;
  check_exact(2, 2, 3, 50, 11);
  check_exact(2, 2, 3, 6, 12);
}

static void test_planner_emb__infeasible_names_the_constraint(void **state) {
  (void)state;
  plan_emb_problem p;
  plan_table t[3] = {
      {"huge_a", 2000000000, 128, 10}, {"huge_b", 2000000000, 128, 10}, {"small", 1000, 64, 1}};
  plan_emb_result r;
  svc_err err;
  fx_problem(&p, 8, 1, 141);
  p.allow_host = 0;
  int rc = plan_emb_solve(&p, t, 3, NULL, &r, &err);
  assert_int_equal(rc, -SVC_INFEASIBLE);
  assert_int_equal(err.code, SVC_INFEASIBLE);
  assert_non_null(strstr(err.message, "GB per GPU"));
  assert_non_null(strstr(err.message, "141 GB usable"));
  /* table-wise only: one table cannot fit one GPU */
  p.shard_mask = 1u << PLAN_SHARD_TW;
  rc = plan_emb_solve(&p, t, 3, NULL, &r, &err);
  assert_int_equal(rc, -SVC_INFEASIBLE);
  assert_non_null(strstr(err.message, "huge_a"));
  /* host placement allowed, but 2 TB of host memory per node (the
   * default) cannot take both 1 TB tables with their Adagrad state, and
   * one of them does not fit the 8 GPUs' HBM: the answer names both */
  p.allow_host = 1;
  p.shard_mask = 0;
  rc = plan_emb_solve(&p, t, 3, NULL, &r, &err);
  assert_int_equal(rc, -SVC_INFEASIBLE);
  assert_non_null(strstr(err.message, "host memory"));
  assert_non_null(strstr(err.message, "2000 GB per node"));
  /* 4 TB of host memory per node: it fits, and every host byte is counted */
  p.host_cap_bytes = 4e12;
  assert_int_equal(plan_emb_solve(&p, t, 3, NULL, &r, &err), 0);
  plan_emb_result_dispose(&r);
}

/* Plain PyTorch keeps a host table on the CPU: the plan prices its CPU
 * work with the step model's host path (far above TorchRec's UVM cache
 * misses for a large table) and keeps none of its rows in HBM. */
static void test_planner_emb__eager_host_tables_run_on_the_cpu(void **state) {
  (void)state;
  plan_emb_problem p;
  plan_table t[1] = {{"big", 50000000, 128, 2}};
  plan_table_plan host = {.shard = PLAN_SHARD_TW, .place = PLAN_PLACE_HOST, .k = 1, .rank = 0};
  plan_emb_result uvm, cpu;
  svc_err err;
  int fits;
  fx_problem(&p, 1, 1, 141);
  p.batch_per_gpu = 32768;
  p.sparse_opt = PLAN_SOPT_SGD;
  assert_int_equal(plan_emb_evaluate(&p, t, 1, &host, &uvm, &fits, &err), 0);
  p.host_mode = PLAN_HOST_CPU;
  assert_int_equal(plan_emb_evaluate(&p, t, 1, &host, &cpu, &fits, &err), 0);
  cost_dlrm d = {0};
  cost_recipe r;
  cost_recipe_init(&r);
  r.framework = COST_FW_PYTORCH_EAGER;
  double extra;
  assert_int_equal(
      cost_step_host_table_ms(&p.hw, &d, &r, COST_PLACE_HOST, 50000000, 128, 32768, 2, &extra), 0);
  print_message("host table: UVM %.2f ms, CPU %.2f ms (step model extra %.2f ms)\n", uvm.max_ms,
                cpu.max_ms, extra);
  assert_true(extra > 1.0);
  assert_true(cpu.max_ms > 2 * uvm.max_ms);
  assert_true(cpu.max_ms >= extra);
  /* GPU kernels on pinned host memory (host_tables "uvm"): priced by the
   * step model's uvm path, between HBM and the CPU, no rows in HBM */
  plan_emb_result mapped, hbm;
  plan_table_plan in_hbm = host;
  in_hbm.place = PLAN_PLACE_HBM;
  p.host_mode = PLAN_HOST_UVM;
  assert_int_equal(plan_emb_evaluate(&p, t, 1, &host, &mapped, &fits, &err), 0);
  assert_int_equal(plan_emb_evaluate(&p, t, 1, &in_hbm, &hbm, &fits, &err), 0);
  double ux;
  assert_int_equal(
      cost_step_host_table_ms(&p.hw, &d, &r, COST_PLACE_UVM, 50000000, 128, 32768, 2, &ux), 0);
  print_message("uvm table %.2f ms (extra %.2f), HBM %.2f ms\n", mapped.max_ms, ux, hbm.max_ms);
  assert_true(ux > 0 && ux < extra);
  assert_true(mapped.max_ms > hbm.max_ms && mapped.max_ms < cpu.max_ms);
  assert_true(fabs(mapped.max_ms - hbm.max_ms - ux) < 0.05 * ux + 1e-3);
  /* without a host link figure the uvm path is refused, not guessed */
  p.hw.host_link_bw = 0;
  assert_int_equal(
      cost_step_host_table_ms(&p.hw, &d, &r, COST_PLACE_UVM, 50000000, 128, 32768, 2, &ux),
      COST_ENOHW);
  plan_emb_result_dispose(&mapped);
  plan_emb_result_dispose(&hbm);
  plan_emb_result_dispose(&uvm);
  plan_emb_result_dispose(&cpu);
}

static void test_planner_emb__never_worse_than_greedy(void **state) {
  (void)state;
  uint64_t seed = 42;
  for (int k = 0; k < 4; k++) {
    plan_emb_problem p;
    plan_table t[60];
    plan_emb_result r;
    svc_err err;
    size_t n = 20 + (size_t)(fx_rand(&seed) * 40);
    fx_problem(&p, 8, 1 + k % 2, k < 2 ? 80 : 40);
    p.cw_max = 4;
    random_tables(t, n, &seed);
    plan_solve_opts o = {.time_limit_s = 2};
    int rc = plan_emb_solve(&p, t, n, &o, &r, &err);
    if (rc) print_error("instance %d: %s\n", k, err.message);
    assert_int_equal(rc, 0);
    assert_true(r.max_ms <= r.greedy_ms + 1e-12);
    assert_true(r.bound_ms <= r.max_ms + 1e-12);
    assert_true(r.gap >= 0 && r.gap < 1);
    int fits = 0;
    plan_emb_result again;
    assert_int_equal(plan_emb_evaluate(&p, t, n, r.tables, &again, &fits, &err), 0);
    assert_true(fits);
    assert_true(fabs(again.max_ms - r.max_ms) < 1e-9);
    plan_emb_result_dispose(&again);
    plan_emb_result_dispose(&r);
  }
}

static void test_planner_emb__time_limit_returns_incumbent_with_gap(void **state) {
  (void)state;
  uint64_t seed = 7;
  plan_emb_problem p;
  plan_table t[80];
  plan_emb_result r;
  svc_err err;
  fx_problem(&p, 8, 2, 40);
  p.cw_max = 4;
  random_tables(t, 80, &seed);
  plan_solve_opts o = {.method = PLAN_METHOD_EXACT, .time_limit_s = 0.5, .mip_gap = 1e-9};
  double t0 = svc_now();
  assert_int_equal(plan_emb_solve(&p, t, 80, &o, &r, &err), 0);
  double took = svc_now() - t0;
  /* Unlimited, this exact solve to a 1e-9 gap runs for minutes; the margin
   * covers model build and GLPK's time checks, also under ASan on 2 cores. */
  assert_true(took < 0.5 + 10.0);
  assert_true(r.gap >= 0);
  assert_true(r.bound_ms > 0 && r.bound_ms <= r.max_ms);
  assert_true(r.max_ms <= r.greedy_ms + 1e-12);
  plan_emb_result_dispose(&r);
}

static void test_planner_emb__identical_tables_collapse(void **state) {
  (void)state;
  plan_emb_problem p;
  plan_table t[24];
  emb_inst in;
  svc_err err;
  plan_emb_result r;
  for (int i = 0; i < 24; i++) t[i] = (plan_table){"same", 1000000, 64, 20};
  t[23].rows = 5000000;
  fx_problem(&p, 4, 1, 40);
  assert_int_equal(emb_inst_init(&in, &p, t, 24, &err), 0);
  assert_int_equal(in.nclass, 2);
  emb_inst_dispose(&in);
  plan_solve_opts o = {.method = PLAN_METHOD_EXACT, .time_limit_s = 5};
  assert_int_equal(plan_emb_solve(&p, t, 24, &o, &r, &err), 0);
  assert_true(r.max_ms <= r.greedy_ms + 1e-12);
  plan_emb_result_dispose(&r);
}

static void test_planner_emb__glpk_error_becomes_solver_error(void **state) {
  (void)state;
  svc_err err;
  svc_err_clear(&err);
  assert_int_equal(plan_glpk_selftest(&err), -SVC_SOLVER);
  assert_int_equal(err.code, SVC_SOLVER);
  assert_non_null(strstr(err.message, "GLPK"));
  assert_string_equal(plan_glpk_strerror(0x09), "time limit exceeded");
  /* GLPK's environment is rebuilt: the next solve works */
  plan_emb_problem p;
  plan_table t[2] = {{"a", 100000, 64, 4}, {"b", 200000, 64, 8}};
  plan_emb_result r;
  fx_problem(&p, 2, 1, 100);
  plan_solve_opts o = {.method = PLAN_METHOD_EXACT};
  assert_int_equal(plan_emb_solve(&p, t, 2, &o, &r, &err), 0);
  plan_emb_result_dispose(&r);
}

static void test_planner_emb__decomposed_bound_is_valid(void **state) {
  (void)state;
  uint64_t seed = 99;
  plan_emb_problem p;
  plan_table t[4];
  plan_emb_result r;
  svc_err err;
  fx_problem(&p, 3, 1, 10);
  random_tables(t, 4, &seed);
  double bf = brute_force(&p, t, 4);
  plan_solve_opts o = {.method = PLAN_METHOD_DECOMPOSED, .time_limit_s = 5};
  assert_int_equal(plan_emb_solve(&p, t, 4, &o, &r, &err), 0);
  assert_true(r.bound_ms <= bf * (1 + 1e-9));
  assert_true(r.max_ms >= bf * (1 - 1e-9));
  plan_emb_result_dispose(&r);
}

/* TorchRec's MIN_CW_DIM is a hard rule: a dim-128 table has no column-wise
 * option, a dim-256 one only k = 2; the solver, asked for up to 8 shards
 * with column-wise as the only split, never returns a narrower shard. */
static void test_planner_emb__no_column_wise_shard_under_128(void **state) {
  (void)state;
  plan_emb_problem p;
  fx_problem(&p, 8, 1, 141);
  p.cw_max = 8;
  p.allow_host = 0;
  p.shard_mask = (1u << PLAN_SHARD_TW) | (1u << PLAN_SHARD_CW);
  plan_table t[6];
  static const int64_t dims[6] = {128, 256, 512, 1024, 128, 256};
  for (int i = 0; i < 6; i++) {
    snprintf(t[i].name, sizeof t[i].name, "t%d", i);
    t[i].rows = 20000000, t[i].dim = dims[i], t[i].pooling = i < 4 ? 80 : 2;
  }
  emb_inst in;
  svc_err err;
  assert_int_equal(emb_inst_init(&in, &p, t, 6, &err), 0);
  for (size_t i = 0; i < 6; i++)
    for (int o = 0; o < in.nopt; o++) {
      const emb_opt *e = EOPT(&in, i, o);
      if (e->shard == PLAN_SHARD_CW && e->ok) assert_true(t[i].dim / e->k >= PLAN_MIN_CW_DIM);
    }
  emb_inst_dispose(&in);
  plan_emb_result r;
  plan_solve_opts o = {.time_limit_s = 2};
  assert_int_equal(plan_emb_solve(&p, t, 6, &o, &r, &err), 0);
  int cw = 0;
  for (size_t i = 0; i < 6; i++)
    if (r.tables[i].shard == PLAN_SHARD_CW) {
      cw++;
      assert_true(t[i].dim / r.tables[i].k >= PLAN_MIN_CW_DIM);
    }
  assert_true(cw > 0); /* the heavy wide tables are split: the rule is what limits k */
  plan_emb_result_dispose(&r);
}

/* 1 when table i of plans cannot leave host memory / its split with the
 * rest held: every table-wise (any rank) or replicated HBM alternative
 * raises the slowest rank or does not fit. */
static int needed_here(const emb_inst *in, const plan_table_plan *plans, size_t i, double max_ms) {
  plan_table_plan alt[16];
  memcpy(alt, plans, in->n * sizeof *alt);
  for (int r = -1; r < in->R; r++) {
    memset(&alt[i], 0, sizeof alt[i]);
    alt[i].shard = r < 0 ? PLAN_SHARD_DP : PLAN_SHARD_TW, alt[i].k = 1, alt[i].rank = r < 0 ? 0 : r;
    int o = emb_opt_index(in, alt[i].shard, PLAN_PLACE_HBM, 1);
    if (o < 0 || !EOPT(in, i, o)->ok) continue;
    plan_emb_result e;
    int fits = 0;
    assert_int_equal(emb_eval(in, alt, &e, &fits, NULL), 0);
    int better = fits && e.max_ms <= max_ms * (1 + PLAN_TIE_TOL);
    plan_emb_result_dispose(&e);
    if (better) return 0;
  }
  return 1;
}

/* With HBM to spare no table goes to host memory, and a table under 1,000
 * rows stays split only where no unsplit placement (table-wise on any
 * rank, or replicated) holds the slowest rank with the other tables where
 * they are: a small table's pooled output can be worth splitting when the
 * ranks are nearly balanced. The tie-break removes the rest. */
static void test_planner_emb__no_needless_host_or_small_splits(void **state) {
  (void)state;
  uint64_t seed = 7;
  int splits_kept = 0;
  for (int inst = 0; inst < 8; inst++) {
    plan_emb_problem p;
    int nodes = inst % 2 ? 2 : 1;
    fx_problem(&p, 8 / nodes, nodes, 141);
    p.cw_max = 4;
    plan_table t[14];
    for (int i = 0; i < 14; i++) {
      snprintf(t[i].name, sizeof t[i].name, "t%d", i);
      int small = i >= 4;
      t[i].rows =
          small ? 3 + (int64_t)(fx_rand(&seed) * 996) : (int64_t)(1e6 + fx_rand(&seed) * 3e7);
      t[i].dim = fx_rand(&seed) < 0.5 ? 128 : 256;
      t[i].pooling = small ? 1 + floor(fx_rand(&seed) * 4) : 10 + floor(fx_rand(&seed) * 60);
    }
    emb_inst in;
    svc_err err;
    assert_int_equal(emb_inst_init(&in, &p, t, 14, &err), 0);
    for (int method = PLAN_METHOD_EXACT; method <= PLAN_METHOD_DECOMPOSED; method++) {
      plan_emb_result r, g;
      /* work sized from 1 s, the wall clock a loose cap: a loaded machine
       * gets the same plans (a 1 s wall limit failed once at load 14) */
      plan_solve_opts o = {.time_limit_s = 30, .work_s = 1, .method = method};
      assert_int_equal(plan_emb_solve(&p, t, 14, &o, &r, &err), 0);
      assert_int_equal(plan_emb_greedy(&p, t, 14, &g, &err), 0);
      assert_true(r.max_ms <= g.max_ms * (1 + 1e-9));
      for (size_t i = 0; i < 14; i++) {
        const plan_table_plan *pl = &r.tables[i];
        assert_int_equal(pl->place, PLAN_PLACE_HBM);
        if (t[i].rows >= PLAN_SMALL_TABLE_ROWS || pl->shard == PLAN_SHARD_TW ||
            pl->shard == PLAN_SHARD_DP)
          continue;
        assert_true(needed_here(&in, r.tables, i, r.max_ms));
        splits_kept++;
      }
      plan_emb_result_dispose(&r), plan_emb_result_dispose(&g);
    }
    emb_inst_dispose(&in);
  }
  fprintf(stderr, "small-table splits kept because they hold the maximum: %d\n", splits_kept);
}

/* Where HBM is short, host placement stays: it is what makes the tables fit. */
static void test_planner_emb__host_placement_kept_when_it_matters(void **state) {
  (void)state;
  plan_emb_problem p;
  fx_problem(&p, 8, 1, 20);
  plan_table t[3] = {{"huge", 400000000, 128, 5}, {"mid", 20000000, 128, 10}, {"tiny", 36, 128, 2}};
  plan_emb_result r;
  svc_err err;
  plan_solve_opts o = {.time_limit_s = 1};
  assert_int_equal(plan_emb_solve(&p, t, 3, &o, &r, &err), 0);
  assert_int_equal(r.tables[2].place, PLAN_PLACE_HBM);
  int host = 0;
  for (int i = 0; i < 3; i++) host += r.tables[i].place == PLAN_PLACE_HOST;
  p.allow_host = 0;
  plan_emb_result h;
  int rc = plan_emb_solve(&p, t, 3, &o, &h, &err);
  assert_true(host > 0);
  assert_true(rc == -SVC_INFEASIBLE || h.max_ms > r.max_ms * (1 + 1e-9));
  if (!rc) plan_emb_result_dispose(&h);
  plan_emb_result_dispose(&r);
}

/* Host memory is bounded per node: many large tables that do not fit HBM
 * go to host memory only up to host_cap_bytes on each node; the answer's
 * host bytes per node (rows + row-wise Adagrad state of the host-placed
 * shards) stay within it, and a cap below what the tables need is a 422
 * naming host memory. */
static void test_planner_emb__host_memory_is_bounded_per_node(void **state) {
  (void)state;
  plan_emb_problem p;
  plan_table t[16];
  plan_emb_result r;
  svc_err err;
  emb_inst in;
  fx_problem(&p, 8, 2, 40); /* 16 GPUs x 40 GB */
  p.batch_per_gpu = 512;    /* small output buffers: the rows decide */
  for (int i = 0; i < 16; i++) {
    snprintf(t[i].name, sizeof t[i].name, "big%d", i);
    t[i].rows = 100000000, t[i].dim = 128, t[i].pooling = 4; /* fp32: 51.6 GB with Adagrad */
  }
  p.host_cap_bytes = 500e9;
  plan_solve_opts o = {.time_limit_s = 20, .work_s = 2};
  int rc0 = plan_emb_solve(&p, t, 16, &o, &r, &err);
  if (rc0) print_message("%s\n", err.message);
  assert_int_equal(rc0, 0);
  assert_int_equal(emb_inst_init(&in, &p, t, 16, &err), 0);
  double node_host[2] = {0, 0};
  int on_host = 0;
  for (size_t i = 0; i < 16; i++) {
    const plan_table_plan *pl = &r.tables[i];
    const emb_opt *e = EOPT(&in, i, emb_opt_index(&in, pl->shard, pl->place, pl->k));
    on_host += pl->place == PLAN_PLACE_HOST;
    if (e->kind == EK_UNIFORM)
      node_host[0] += e->host_bytes * 8, node_host[1] += e->host_bytes * 8;
    else if (e->kind == EK_NODE)
      node_host[pl->node] += e->host_bytes * 8;
    else
      for (int j = 0; j < e->k; j++)
        node_host[(pl->shard == PLAN_SHARD_TW ? pl->rank : pl->cw_ranks[j]) / 8] += e->host_bytes;
  }
  assert_true(on_host > 0);
  assert_true(node_host[0] <= 500e9 * (1 + 1e-9) && node_host[1] <= 500e9 * (1 + 1e-9));
  emb_inst_dispose(&in);
  plan_emb_result_dispose(&r);
  /* 826 GB of tables, 640 GB of HBM: 50 GB of host memory per node is too little */
  p.host_cap_bytes = 50e9;
  assert_int_equal(plan_emb_solve(&p, t, 16, &o, &r, &err), -SVC_INFEASIBLE);
  assert_non_null(strstr(err.message, "host memory"));
}

/* A tiny random instance (4 tables, shape {gpus per node, nodes}, 2-32 GB
 * of HBM, column-wise up to 2 shards) and its brute-force optimum. */
static double tiny_instance(plan_emb_problem *p, plan_table *t, const int shape[2], uint64_t *s2) {
  fx_problem(p, shape[0], shape[1], 2 + 30 * fx_rand(s2));
  p->cw_max = 2;
  random_tables(t, 4, s2);
  return brute_force(p, t, 4);
}

/* Every proven bound (the closed forms, the piece-beside-uniform bound,
 * the MILP's) is at most the brute-force optimum, over tiny instances of
 * each solver path, with and without nodes (uniform work beside pieces). */
static void test_planner_emb__bounds_never_exceed_brute_force(void **state) {
  (void)state;
  static const int shapes[][2] = {{3, 1}, {2, 2}};
  for (uint64_t seed = 1; seed <= 12; seed++)
    for (int sh = 0; sh < 2; sh++)
      for (int meth = PLAN_METHOD_EXACT; meth <= PLAN_METHOD_DECOMPOSED; meth++) {
        uint64_t s2 = seed * 7919 + (uint64_t)sh;
        plan_emb_problem p;
        plan_table t[4];
        plan_emb_result r;
        svc_err err;
        double bf = tiny_instance(&p, t, shapes[sh], &s2);
        plan_solve_opts o = {.method = meth, .time_limit_s = 5};
        int rc = plan_emb_solve(&p, t, 4, &o, &r, &err);
        if (rc) {
          assert_int_equal(rc, -SVC_INFEASIBLE);
          continue;
        }
        if (!(r.bound_ms <= bf * (1 + 1e-9)) || !(r.max_ms >= bf * (1 - 1e-9)))
          fail_msg("seed %llu shape %d method %d: bound %.6f, brute force %.6f, answer %.6f",
                   (unsigned long long)seed, sh, meth, r.bound_ms, bf, r.max_ms);
        plan_emb_result_dispose(&r);
      }
}

/* The node-collapsed relaxation (emb_nodebound.c) never exceeds the
 * brute-force optimum, with one node and with several, and it is not
 * trivial: it reaches the optimum on some instances. */
static void test_planner_emb__node_bound_never_exceeds_brute_force(void **state) {
  (void)state;
  static const int shapes[][2] = {{3, 1}, {2, 2}, {1, 3}, {2, 3}};
  int tight = 0, tried = 0;
  for (uint64_t seed = 1; seed <= 12; seed++)
    for (int sh = 0; sh < 4; sh++) {
      uint64_t s2 = seed * 15485863 + (uint64_t)sh;
      plan_emb_problem p;
      plan_table t[4];
      svc_err err;
      double bf = tiny_instance(&p, t, shapes[sh], &s2), nb = 0, ni = 0;
      assert_int_equal(plan_emb_node_bound(&p, t, 4, 20, 0, &nb, &ni, &err), 0);
      if (!isfinite(bf)) continue;
      tried++;
      if (!(nb <= bf * (1 + 1e-6)))
        fail_msg("seed %llu shape %d: node bound %.6f, brute force %.6f", (unsigned long long)seed,
                 sh, nb, bf);
      tight += nb >= bf * (1 - 1e-6);
    }
  print_message("node bound: %d of %d at the brute-force optimum\n", tight, tried);
  assert_true(tried >= 30);
  assert_true(tight > 0);
}

/* The split bound (emb_bound.c) never calls the brute-force optimum
 * impossible (with U = Um = 0, valid lower bounds of any plan's uniform
 * work), and it does call loads just below the optimum impossible on some
 * instances (it is not a test that always passes). */
static void test_planner_emb__split_bound_never_cuts_the_optimum(void **state) {
  (void)state;
  static const int shapes[][2] = {{3, 1}, {2, 2}, {4, 1}};
  int cut = 0, tried = 0;
  for (uint64_t seed = 1; seed <= 20; seed++)
    for (int sh = 0; sh < 3; sh++) {
      uint64_t s2 = seed * 104729 + (uint64_t)sh;
      plan_emb_problem p;
      plan_table t[4];
      emb_inst in;
      svc_err err;
      double bf = tiny_instance(&p, t, shapes[sh], &s2), w = 0;
      assert_int_equal(emb_inst_init(&in, &p, t, 4, &err), 0);
      if (isfinite(bf)) {
        tried++;
        if (!emb_split_possible(&in, bf * (1 + 1e-9), 0, 0, &w, INFINITY))
          fail_msg("seed %llu shape %d: optimum %.6f called impossible", (unsigned long long)seed,
                   sh, bf);
        cut += !emb_split_possible(&in, bf * (1 - 1e-3), 0, 0, &w, INFINITY);
      }
      emb_inst_dispose(&in);
    }
  print_message("split bound: %d of %d optima within 0.1 %% of the bound\n", cut, tried);
  assert_true(tried >= 30);
  assert_true(cut > 0);
}

static void heavy_tables(plan_table *t, size_t n, uint64_t *seed) {
  static const int dims[] = {32, 64, 128, 256, 512};
  for (size_t i = 0; i < n; i++) {
    snprintf(t[i].name, sizeof t[i].name, "t%zu", i);
    t[i].rows = (int64_t)exp(log(1e3) + (log(1e9) - log(1e3)) * fx_rand(seed));
    t[i].dim = dims[(int)(fx_rand(seed) * 5) % 5];
    t[i].pooling = exp(log(100.0) * fx_rand(seed));
  }
}

/* The work limit, not the clock, ends the solve by default, so the answer
 * does not depend on the CPU share: the same plan with three busy loops
 * competing for the two cores as on an idle machine. */
static void test_planner_emb__same_plan_under_busy_loops(void **state) {
  (void)state;
  enum { N = 300 };
  static plan_table t[N];
  uint64_t seed = 2024;
  plan_emb_problem p;
  plan_emb_result idle, busy;
  svc_err err;
  heavy_tables(t, N, &seed);
  fx_problem(&p, 8, 8, 60);
  plan_solve_opts o = {.method = PLAN_METHOD_DECOMPOSED, .time_limit_s = 60, .work_s = 1};
  assert_int_equal(plan_emb_solve(&p, t, N, &o, &idle, &err), 0);
  assert_int_not_equal(idle.limit, PLAN_LIMIT_TIME);
  pid_t kids[3];
  for (int k = 0; k < 3; k++) {
    kids[k] = fork();
    assert_true(kids[k] >= 0);
    if (kids[k] == 0) {
      volatile unsigned long spin = 0;
      alarm(120); /* never outlive a broken test */
      for (;;) spin++;
    }
  }
  int rc = plan_emb_solve(&p, t, N, &o, &busy, &err);
  for (int k = 0; k < 3; k++) kill(kids[k], SIGKILL), waitpid(kids[k], NULL, 0);
  assert_int_equal(rc, 0);
  print_message("idle %.2f s, busy %.2f s, %s, limit %s, max %.4f ms, gap %.2f%%\n", idle.solve_s,
                busy.solve_s, plan_method_name(busy.method), plan_limit_name(busy.limit),
                busy.max_ms, busy.gap * 100);
  assert_int_not_equal(busy.limit, PLAN_LIMIT_TIME);
  assert_int_equal(busy.method, idle.method);
  assert_true(busy.max_ms == idle.max_ms);
  assert_true(busy.bound_ms == idle.bound_ms);
  assert_memory_equal(busy.tables, idle.tables, N * sizeof *busy.tables);
  plan_emb_result_dispose(&idle);
  plan_emb_result_dispose(&busy);
}

/* The packing to a target (emb_pack.c), by either rule (L-infinity, best
 * fit): an answer of 0 is a plan whose
 * slowest rank is within T and whose every GPU and node holds its memory;
 * 1 (over T) still holds the memory. Over random heavy-like instances,
 * tight and loose HBM, with and without the HBM diet, targets from the
 * closed-form bound up. Then the kick (re-option the slowest rank's
 * biggest tables, rebalance) on each packing: it says it changed the plan
 * exactly when the maximum dropped, never raises it, keeps the memory, and
 * lowers some. */
static void test_planner_emb__target_packing_keeps_target_and_memory(void **state) {
  (void)state;
  enum { N = 60 };
  static plan_table t[N];
  static const int shapes[][2] = {{4, 1}, {4, 3}, {8, 2}};
  int packed = 0, over = 0, kicked = 0, lowered = 0, bf_packed = 0;
  for (uint64_t seed = 1; seed <= 6; seed++)
    for (int sh = 0; sh < 3; sh++) {
      uint64_t s2 = seed * 104729 + (uint64_t)sh;
      plan_emb_problem p;
      emb_inst in;
      svc_err err;
      heavy_tables(t, N, &s2);
      for (size_t i = 0; i < N; i++) t[i].rows = t[i].rows / 30 + 1000; /* 1e3 .. 3e7 */
      fx_problem(&p, shapes[sh][0], shapes[sh][1], 4 + 40 * fx_rand(&s2));
      p.host_cap_bytes = 100e9;
      assert_int_equal(emb_inst_init(&in, &p, t, N, &err), 0);
      double B = emb_trivial_bound(&in);
      int choice[N];
      plan_table_plan plans[N];
      fx_cheapest(&in, N, choice); /* each table's cheapest total work */
      static const double mult[] = {1.0, 1.05, 1.2, 1.5, 3.0};
      static const double fill[] = {0, 0.9, 0.7};
      for (size_t k = 0; k < 5; k++)
        for (size_t f = 0; f < 6; f++) {
          int cc[N], rep = 0, bf = f >= 3; /* the L-infinity rule, then best fit */
          memcpy(cc, choice, sizeof cc);
          emb_budget b = {.deadline = INFINITY, .work = INFINITY};
          double T = B * mult[k];
          int rc = emb_pack_target(&in, cc, T, fill[f % 3], bf, plans, &b, &rep);
          if (rc < 0) continue;
          plan_emb_result r;
          int fits = 0;
          assert_int_equal(emb_eval(&in, plans, &r, &fits, &err), 0);
          if (!fits)
            fail_msg("seed %llu shape %d T %.4f fill %.2f best fit %d: memory exceeded",
                     (unsigned long long)seed, sh, T, fill[f % 3], bf);
          if (rc == 0 && r.max_ms > T * (1 + 1e-9))
            fail_msg("seed %llu shape %d best fit %d: max %.6f over the target %.6f",
                     (unsigned long long)seed, sh, bf, r.max_ms, T);
          packed += rc == 0, over += rc == 1, bf_packed += rc == 0 && bf;
          /* the kick (re-option + rebalance) never raises the maximum nor
           * breaks memory */
          emb_budget kb = {.deadline = INFINITY, .work = INFINITY};
          plan_emb_result r2;
          int f2 = 0;
          kicked += emb_kick(&in, plans, &kb);
          assert_int_equal(emb_eval(&in, plans, &r2, &f2, &err), 0);
          if (!f2 || r2.max_ms > r.max_ms * (1 + 1e-12))
            fail_msg("seed %llu shape %d: kick %.6f -> %.6f, fits %d", (unsigned long long)seed, sh,
                     r.max_ms, r2.max_ms, f2);
          lowered += r2.max_ms < r.max_ms * (1 - 1e-9);
          plan_emb_result_dispose(&r2);
          plan_emb_result_dispose(&r);
        }
      emb_inst_dispose(&in);
    }
  print_message("%d packed under the target (%d by best fit), %d over it; the kick lowered %d of "
                "them\n",
                packed, bf_packed, over, lowered);
  assert_true(packed > 0 && over > 0 && bf_packed > 0);
  assert_int_equal(kicked, lowered);
  assert_true(lowered > 0);
}

/* The decomposition's LP through its Lagrangian dual (emb_lagr.c, used
 * where the LP has no integer column) equals GLPK's simplex on the same LP
 * (emb_agg_root_lp with no large class) and never exceeds it, over heavy-
 * like instances whose HBM and host memory range from loose to binding;
 * its choice fits the average HBM. */
static void test_planner_emb__lagrangian_lp_equals_simplex(void **state) {
  (void)state;
  enum { N = 120 };
  static plan_table t[N];
  static const int shapes[][2] = {{4, 2}, {8, 4}};
  int solved = 0, tight = 0;
  for (uint64_t seed = 1; seed <= 8; seed++)
    for (int sh = 0; sh < 2; sh++) {
      uint64_t s2 = seed * 7919 + (uint64_t)sh;
      plan_emb_problem p;
      emb_inst in;
      svc_err err;
      heavy_tables(t, N, &s2);
      for (size_t i = 0; i < N; i++) t[i].rows = t[i].rows / 10 + 1000;
      fx_problem(&p, shapes[sh][0], shapes[sh][1], 2 + 60 * fx_rand(&s2));
      p.host_cap_bytes = 20e9 + 400e9 * fx_rand(&s2);
      assert_int_equal(emb_inst_init(&in, &p, t, N, &err), 0);
      int ch[N];
      double lag = 0, visits = 0, free_lag = 0, glpk = 0, secs = 0;
      long iters = 0;
      int rows = 0, cols = 0;
      if (emb_lagr_solve(&in, ch, &lag, &visits) == 0) {
        assert_int_equal(emb_agg_root_lp(&in, INFINITY, MILP_LP_DUAL, 60, &glpk, &secs, &iters,
                                         &rows, &cols, &err),
                         0);
        assert_true(lag <= glpk + 1e-7 * fabs(glpk));
        assert_true(lag >= glpk - 1e-6 * fabs(glpk));
        double mem = 0;
        for (size_t c = 0; c < in.nclass; c++) {
          const emb_opt *e = EOPT(&in, in.cls_rep[c], ch[c]);
          double pcs = e->kind == EK_UNIFORM ? in.R : e->kind == EK_NODE ? in.G : e->k;
          mem += (double)in.cls_count[c] * pcs * e->bytes / in.R;
        }
        assert_true(mem <= p.cap_bytes * (1 + 1e-9));
        /* the same LP with room everywhere: a lower optimum means memory bound here */
        double cap = p.cap_bytes, hc = in.host_cap;
        in.host_cap = 1e18;
        for (size_t k = 0; k < in.n * (size_t)in.nopt; k++) in.opt[k].ok = in.opt[k].allowed;
        p.cap_bytes = 1e18;
        assert_int_equal(emb_lagr_solve(&in, ch, &free_lag, &visits), 0);
        p.cap_bytes = cap, in.host_cap = hc;
        tight += free_lag < lag * (1 - 1e-6);
        solved++;
      }
      emb_inst_dispose(&in);
    }
  print_message("%d of 16 solved, memory binding in %d\n", solved, tight);
  assert_true(solved >= 8);
  assert_true(tight >= 3);
}

/* The iterated local search (emb_ils.c) and the node moves of local
 * search: from each table's least-work option packed by LPT and searched,
 * the slowest rank never rises, the memory still fits, the same plan comes
 * back from a second run (fixed seed, work-limited), and some drop, over
 * random heavy-like instances with table-row-wise tables on 2-3 nodes. */
static void test_planner_emb__ils_never_worse_and_repeatable(void **state) {
  (void)state;
  enum { N = 60 };
  static plan_table t[N];
  static const int shapes[][2] = {{4, 2}, {4, 3}, {8, 2}};
  int lowered = 0, runs = 0;
  for (uint64_t seed = 1; seed <= 6; seed++)
    for (int sh = 0; sh < 3; sh++) {
      uint64_t s2 = seed * 15485863 + (uint64_t)sh;
      plan_emb_problem p;
      emb_inst in;
      svc_err err;
      heavy_tables(t, N, &s2);
      for (size_t i = 0; i < N; i++) t[i].rows = t[i].rows / 30 + 1000;
      fx_problem(&p, shapes[sh][0], shapes[sh][1], 10 + 40 * fx_rand(&s2));
      p.host_cap_bytes = 100e9;
      assert_int_equal(emb_inst_init(&in, &p, t, N, &err), 0);
      int choice[N];
      static plan_table_plan plans[N], again[N];
      fx_cheapest(&in, N, choice); /* each table's cheapest total work */
      if (emb_pack(&in, choice, plans, EMB_PACK_REPAIR) < 0) {
        emb_inst_dispose(&in);
        continue;
      }
      emb_budget b0 = {.deadline = INFINITY, .work = INFINITY};
      emb_local_search(&in, plans, &b0);
      plan_emb_result r, r2;
      int fits = 0, f2 = 0;
      assert_int_equal(emb_eval(&in, plans, &r, &fits, &err), 0);
      if (!fits) {
        plan_emb_result_dispose(&r);
        emb_inst_dispose(&in);
        continue;
      }
      memcpy(again, plans, sizeof again);
      emb_budget b1 = {.deadline = INFINITY, .work = 2e7}, b2 = b1;
      emb_ils(&in, plans, &b1, 500);
      emb_ils(&in, again, &b2, 500);
      assert_memory_equal(plans, again, sizeof again);
      assert_int_equal(emb_eval(&in, plans, &r2, &f2, &err), 0);
      if (!f2 || r2.max_ms > r.max_ms * (1 + 1e-12))
        fail_msg("seed %llu shape %d: ils %.6f -> %.6f, fits %d", (unsigned long long)seed, sh,
                 r.max_ms, r2.max_ms, f2);
      lowered += r2.max_ms < r.max_ms * (1 - 1e-9), runs++;
      plan_emb_result_dispose(&r2);
      plan_emb_result_dispose(&r);
      emb_inst_dispose(&in);
    }
  print_message("iterated local search lowered %d of %d searched packings\n", lowered, runs);
  assert_true(runs >= 9);
  assert_true(lowered > 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_planner_emb__exact_equals_brute_force),
      cmocka_unit_test(test_planner_emb__exact_equals_brute_force_table_row_wise),
      cmocka_unit_test(test_planner_emb__infeasible_names_the_constraint),
      cmocka_unit_test(test_planner_emb__never_worse_than_greedy),
      cmocka_unit_test(test_planner_emb__time_limit_returns_incumbent_with_gap),
      cmocka_unit_test(test_planner_emb__identical_tables_collapse),
      cmocka_unit_test(test_planner_emb__glpk_error_becomes_solver_error),
      cmocka_unit_test(test_planner_emb__decomposed_bound_is_valid),
      cmocka_unit_test(test_planner_emb__eager_host_tables_run_on_the_cpu),
      cmocka_unit_test(test_planner_emb__no_column_wise_shard_under_128),
      cmocka_unit_test(test_planner_emb__no_needless_host_or_small_splits),
      cmocka_unit_test(test_planner_emb__host_placement_kept_when_it_matters),
      cmocka_unit_test(test_planner_emb__host_memory_is_bounded_per_node),
      cmocka_unit_test(test_planner_emb__same_plan_under_busy_loops),
      cmocka_unit_test(test_planner_emb__bounds_never_exceed_brute_force),
      cmocka_unit_test(test_planner_emb__node_bound_never_exceeds_brute_force),
      cmocka_unit_test(test_planner_emb__target_packing_keeps_target_and_memory),
      cmocka_unit_test(test_planner_emb__split_bound_never_cuts_the_optimum),
      cmocka_unit_test(test_planner_emb__lagrangian_lp_equals_simplex),
      cmocka_unit_test(test_planner_emb__ils_never_worse_and_repeatable),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
