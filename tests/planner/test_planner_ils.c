/* The iterated local search's moves of the sixth pass (issue 24,
 * planner/emb_ils.c): re-optioning a table on the slowest rank into
 * smaller pieces, and the plateau step (the same maximum with fewer ranks
 * near it); the eleventh pass's release of uniform tables. Random heavy-like instances priced by
 * the real cost model; no part of the planner is stubbed. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tests/planner/planner_fixture.h"

enum { N = 60 };

/* rows log-uniform 1e3..3e7, dims 32..512, pooling 1..100 */
static void tables(plan_table *t, uint64_t *seed) {
  static const int dims[] = {32, 64, 128, 256, 512};
  for (size_t i = 0; i < N; i++) {
    snprintf(t[i].name, sizeof t[i].name, "t%zu", i);
    t[i].rows = (int64_t)exp(log(1e3) + (log(3e7) - log(1e3)) * fx_rand(seed));
    t[i].dim = dims[(int)(fx_rand(seed) * 5) % 5];
    t[i].pooling = exp(log(100.0) * fx_rand(seed));
  }
}

/* One instance of the search tests: N tables from s2, `nodes` nodes of
 * `gpn` GPUs, HBM drawn from s2, 100 GB of host memory a node. The
 * instance points into *p and t: both outlive it in the caller. */
static void ils_instance(plan_table *t, uint64_t *s2, int nodes, int gpn, plan_emb_problem *p,
                         emb_inst *in) {
  svc_err err;
  tables(t, s2);
  fx_problem(p, nodes, gpn, 10 + 40 * fx_rand(s2));
  p->host_cap_bytes = 100e9;
  assert_int_equal(emb_inst_init(in, p, t, N, &err), 0);
}

/* Packs `choice` with repair and prices it: 1 with *r filled (the caller
 * disposes it) when the packing fits, 0 (nothing to dispose) when it does
 * not pack, does not price or does not fit. */
static int ils_packed(const emb_inst *in, const int *choice, plan_table_plan *plans,
                      plan_emb_result *r) {
  svc_err err;
  int fits = 0;
  if (emb_pack(in, choice, plans, EMB_PACK_REPAIR) < 0 || emb_eval(in, plans, r, &fits, &err))
    return 0;
  if (!fits) plan_emb_result_dispose(r);
  return fits;
}

/* The ranks within PLAN_TIE_TOL of the maximum (as emb_ils counts them). */
static int near_max(const plan_emb_result *r) {
  int c = 0;
  for (int k = 0; k < r->ranks; k++) c += r->rank_ms[k] >= r->max_ms * (1 - PLAN_TIE_TOL);
  return c;
}

/* Column-wise shards of one table on distinct ranks, every rank and node
 * in range. */
static int well_formed(const emb_inst *in, const plan_table_plan *plans) {
  for (size_t i = 0; i < in->n; i++) {
    const plan_table_plan *pl = &plans[i];
    if (emb_opt_index(in, pl->shard, pl->place, pl->k) < 0) return 0;
    if (pl->shard == PLAN_SHARD_TW && (pl->rank < 0 || pl->rank >= in->R)) return 0;
    if (pl->shard == PLAN_SHARD_TWRW && (pl->node < 0 || pl->node >= in->N)) return 0;
    if (pl->shard != PLAN_SHARD_CW) continue;
    for (int j = 0; j < pl->k; j++) {
      if (pl->cw_ranks[j] < 0 || pl->cw_ranks[j] >= in->R) return 0;
      for (int q = 0; q < j; q++)
        if (pl->cw_ranks[q] == pl->cw_ranks[j]) return 0;
    }
  }
  return 1;
}

/* From a packing of each table's least-work option (which leaves big
 * table-wise pieces), the search ends no worse in (maximum, ranks near
 * it) order, fits the memory, keeps the plans well formed, changes some
 * tables' options (the re-option move: moves and swaps alone never do)
 * and lowers some maxima. */
static void test_planner_ils__reoptions_and_never_worse(void **state) {
  (void)state;
  static plan_table t[N];
  static const int shapes[][2] = {{4, 2}, {4, 3}, {8, 2}};
  int lowered = 0, runs = 0, reoptioned = 0, flatter = 0;
  for (uint64_t seed = 1; seed <= 8; seed++)
    for (int sh = 0; sh < 3; sh++) {
      uint64_t s2 = seed * 7919 + (uint64_t)sh;
      plan_emb_problem p;
      emb_inst in;
      svc_err err;
      ils_instance(t, &s2, shapes[sh][0], shapes[sh][1], &p, &in);
      int choice[N];
      static plan_table_plan plans[N], start[N];
      fx_cheapest(&in, N, choice); /* each table's cheapest total work */
      plan_emb_result r, r2;
      int f2 = 0;
      if (!ils_packed(&in, choice, plans, &r)) {
        emb_inst_dispose(&in);
        continue;
      }
      memcpy(start, plans, sizeof start);
      emb_budget b = {.deadline = INFINITY, .work = 3e7};
      emb_ils(&in, plans, &b, 800);
      assert_int_equal(emb_eval(&in, plans, &r2, &f2, &err), 0);
      if (!f2 || !well_formed(&in, plans))
        fail_msg("seed %llu shape %d: fits %d, well formed %d", (unsigned long long)seed, sh, f2,
                 well_formed(&in, plans));
      int c0 = near_max(&r), c1 = near_max(&r2);
      if (r2.max_ms > r.max_ms * (1 + 1e-12) || (r2.max_ms >= r.max_ms && c1 > c0))
        fail_msg("seed %llu shape %d: %.6f (%d near) -> %.6f (%d near)", (unsigned long long)seed,
                 sh, r.max_ms, c0, r2.max_ms, c1);
      for (size_t i = 0; i < N; i++)
        if (plans[i].shard != start[i].shard || plans[i].place != start[i].place ||
            plans[i].k != start[i].k) {
          reoptioned++;
          break;
        }
      lowered += r2.max_ms < r.max_ms * (1 - 1e-9), runs++;
      flatter += r2.max_ms >= r.max_ms * (1 - 1e-9) && c1 < c0;
      plan_emb_result_dispose(&r2);
      plan_emb_result_dispose(&r);
      emb_inst_dispose(&in);
    }
  print_message("%d searched packings: %d lowered, %d with options changed, %d flatter only\n",
                runs, lowered, reoptioned, flatter);
  assert_true(runs >= 12);
  assert_true(lowered > 0);
  assert_true(reoptioned > 0);
}

/* The uniform tables' release (the eleventh pass): from a packing where
 * some tables are data-parallel or row-wise (on every rank), it ends no
 * higher, fits, stays well formed, and on some instances lowers the
 * slowest rank with fewer uniform tables; the same plan twice. */
static void test_planner_ils__release_uniform_never_worse(void **state) {
  (void)state;
  static plan_table t[N];
  static const int shapes[][2] = {{4, 2}, {4, 3}, {8, 2}};
  int lowered = 0, runs = 0, fewer = 0;
  for (uint64_t seed = 1; seed <= 6; seed++)
    for (int sh = 0; sh < 3; sh++) {
      uint64_t s2 = seed * 104729 + (uint64_t)sh;
      plan_emb_problem p;
      emb_inst in;
      svc_err err;
      ils_instance(t, &s2, shapes[sh][0], shapes[sh][1], &p, &in);
      int choice[N], nu0 = 0;
      static plan_table_plan plans[N], again[N];
      fx_cheapest(&in, N, choice);
      /* every third table on its least uniform option, where it has one */
      for (size_t i = 0; i < N; i += 3) {
        int best = -1;
        for (int o = 0; o < in.nopt; o++) {
          const emb_opt *e = EOPT(&in, i, o);
          if (e->ok && e->kind == EK_UNIFORM && (best < 0 || e->ms < EOPT(&in, i, best)->ms))
            best = o;
        }
        if (best >= 0) choice[i] = best;
      }
      for (size_t i = 0; i < N; i++) nu0 += EOPT(&in, i, choice[i])->kind == EK_UNIFORM;
      plan_emb_result r, r2;
      int f2 = 0;
      if (!nu0 || !ils_packed(&in, choice, plans, &r)) {
        emb_inst_dispose(&in);
        continue;
      }
      memcpy(again, plans, sizeof again);
      emb_budget b = {.deadline = INFINITY, .work = 2e7}, b2 = b;
      emb_release_uniform(&in, plans, &b, 50, 200, 2);
      emb_release_uniform(&in, again, &b2, 50, 200, 2);
      assert_memory_equal(plans, again, sizeof again);
      assert_int_equal(emb_eval(&in, plans, &r2, &f2, &err), 0);
      if (!f2 || !well_formed(&in, plans))
        fail_msg("seed %llu shape %d: fits %d, well formed %d", (unsigned long long)seed, sh, f2,
                 well_formed(&in, plans));
      if (r2.max_ms > r.max_ms * (1 + 1e-12))
        fail_msg("seed %llu shape %d: %.6f -> %.6f", (unsigned long long)seed, sh, r.max_ms,
                 r2.max_ms);
      int nu = 0;
      for (size_t i = 0; i < N; i++)
        nu += EOPT(&in, i, emb_opt_index(&in, plans[i].shard, plans[i].place, plans[i].k))->kind ==
              EK_UNIFORM;
      lowered += r2.max_ms < r.max_ms * (1 - 1e-9), runs++;
      fewer += r2.max_ms < r.max_ms * (1 - 1e-9) && nu < nu0;
      plan_emb_result_dispose(&r2);
      plan_emb_result_dispose(&r);
      emb_inst_dispose(&in);
    }
  print_message("%d packings with uniform tables: %d lowered, %d of them with fewer uniform\n",
                runs, lowered, fewer);
  assert_true(runs >= 6);
  assert_true(fewer > 0);
}

/* Every option in the catalogue, every rank and node in range: well_formed without the distinct
 * ranks of column-wise shards, which the model allows (emb_eval.c: they prefer distinct ranks but
 * may share one) and local search can make (the construction stage's annealing ends with it). */
static int in_range(const emb_inst *in, const plan_table_plan *plans) {
  for (size_t i = 0; i < in->n; i++) {
    const plan_table_plan *pl = &plans[i];
    if (emb_opt_index(in, pl->shard, pl->place, pl->k) < 0) return 0;
    if (pl->shard == PLAN_SHARD_TW && (pl->rank < 0 || pl->rank >= in->R)) return 0;
    if (pl->shard == PLAN_SHARD_TWRW && (pl->node < 0 || pl->node >= in->N)) return 0;
    for (int j = 0; pl->shard == PLAN_SHARD_CW && j < pl->k; j++)
      if (pl->cw_ranks[j] < 0 || pl->cw_ranks[j] >= in->R) return 0;
  }
  return 1;
}

/* The construction stage (the thirteenth pass): from a packing of each table's least-work
 * option, with a bound that puts the plan above 2 % of it, it ends no higher, fits the memory,
 * stays in range and gives the same plan twice, and lowers some maxima; with a bound the plan
 * is within 2 % of, it changes nothing and spends nothing. Each construction alone
 * (emb_construct, which keeps column-wise shards on distinct ranks) gives a well formed plan
 * that fits, whatever its maximum. */
static void test_planner_ils__construct_never_worse(void **state) {
  (void)state;
  static plan_table t[N];
  static const int shapes[][2] = {{4, 2}, {4, 3}, {8, 2}};
  int lowered = 0, runs = 0, built = 0;
  for (uint64_t seed = 1; seed <= 6; seed++)
    for (int sh = 0; sh < 3; sh++) {
      uint64_t s2 = seed * 15485863 + (uint64_t)sh;
      plan_emb_problem p;
      emb_inst in;
      svc_err err;
      ils_instance(t, &s2, shapes[sh][0], shapes[sh][1], &p, &in);
      int choice[N];
      static plan_table_plan plans[N], again[N], one[N];
      fx_cheapest(&in, N, choice);
      plan_emb_result r, r2;
      int f2 = 0;
      if (!ils_packed(&in, choice, plans, &r)) {
        emb_inst_dispose(&in);
        continue;
      }
      /* within 2 % of the bound: nothing changes, no work spent */
      memcpy(again, plans, sizeof again);
      emb_budget b0 = {.deadline = INFINITY, .work = 1e7};
      emb_construct_stage(&in, again, &b0, r.max_ms * 0.99, 0);
      assert_memory_equal(plans, again, sizeof again);
      assert_true(b0.work == 1e7);
      /* one construction: well formed and fits, whatever its maximum */
      memcpy(one, plans, sizeof one);
      emb_budget b1 = {.deadline = INFINITY, .work = 2e6};
      if (!emb_construct(&in, one, &b1, r.max_ms * 0.95, 2000, 7)) {
        assert_int_equal(emb_eval(&in, one, &r2, &f2, &err), 0);
        if (!f2 || !well_formed(&in, one))
          fail_msg("seed %llu shape %d: construction fits %d, well formed %d",
                   (unsigned long long)seed, sh, f2, well_formed(&in, one));
        plan_emb_result_dispose(&r2);
        built++;
      }
      memcpy(again, plans, sizeof again);
      emb_budget b = {.deadline = INFINITY, .work = 2e7}, bb = b;
      emb_construct_stage(&in, plans, &b, r.max_ms * 0.9, 0);
      emb_construct_stage(&in, again, &bb, r.max_ms * 0.9, 0);
      assert_memory_equal(plans, again, sizeof again);
      assert_int_equal(emb_eval(&in, plans, &r2, &f2, &err), 0);
      if (!f2 || !in_range(&in, plans))
        fail_msg("seed %llu shape %d: fits %d, in range %d", (unsigned long long)seed, sh, f2,
                 in_range(&in, plans));
      if (r2.max_ms > r.max_ms * (1 + 1e-12))
        fail_msg("seed %llu shape %d: %.6f -> %.6f", (unsigned long long)seed, sh, r.max_ms,
                 r2.max_ms);
      lowered += r2.max_ms < r.max_ms * (1 - 1e-9), runs++;
      plan_emb_result_dispose(&r2);
      plan_emb_result_dispose(&r);
      emb_inst_dispose(&in);
    }
  print_message("%d packings: %d lowered by the construction stage, %d constructions checked\n",
                runs, lowered, built);
  assert_true(runs >= 6);
  assert_true(built >= 6);
  assert_true(lowered > 0);
}

/* A decomposed solve on the work limit, where the search after stage 2
 * also gets the work the greedy repair left, gives the same plan twice,
 * ends by work (not the clock), and its bound stays below its answer. */
static void test_planner_ils__leftover_work_repeatable(void **state) {
  (void)state;
  static plan_table t[N];
  uint64_t s2 = 424242;
  plan_emb_problem p;
  plan_emb_result a, b;
  svc_err err;
  tables(t, &s2);
  fx_problem(&p, 8, 3, 30);
  p.host_cap_bytes = 100e9;
  plan_solve_opts o = {.method = PLAN_METHOD_DECOMPOSED, .time_limit_s = 60, .work_s = 0.5};
  assert_int_equal(plan_emb_solve(&p, t, N, &o, &a, &err), 0);
  assert_int_equal(plan_emb_solve(&p, t, N, &o, &b, &err), 0);
  assert_int_not_equal(a.limit, PLAN_LIMIT_TIME);
  assert_true(a.max_ms == b.max_ms);
  assert_memory_equal(a.tables, b.tables, N * sizeof *a.tables);
  assert_true(a.bound_ms <= a.max_ms * (1 + 1e-12));
  plan_emb_result_dispose(&a);
  plan_emb_result_dispose(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_planner_ils__reoptions_and_never_worse),
      cmocka_unit_test(test_planner_ils__leftover_work_repeatable),
      cmocka_unit_test(test_planner_ils__release_uniform_never_worse),
      cmocka_unit_test(test_planner_ils__construct_never_worse),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
