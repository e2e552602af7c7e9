/* emb_ils.c: iterated local search on the decomposition's best plan, with
 * the work its stage 2 left.
 *
 * Local search (moves and swaps off the slowest rank, node moves, option
 * repair) stops at a plan where no single move or swap lowers the slowest
 * rank. A perturbation (a few tables, one of them on the slowest rank,
 * moved to other ranks or nodes, or swapped with another table of the same
 * kind) followed by local search again reaches another such plan; it is
 * kept when its slowest rank is lower and fits the memory. Every restart is
 * from the best plan ("better" acceptance: Lourenco, Martin and Stuetzle,
 * "Iterated local search", Handbook of Metaheuristics, 2003, section 3.4).
 * The random choices come from a fixed-seed generator and every step is
 * charged to the work budget, so the answer does not depend on the CPU
 * share.
 *
 * Why: the small heavy instances (100 tables on 64-128 GPUs) ended with
 * 90 % of their work unused and 2-5 % gaps (2026-12-05): their searches ran
 * out of candidates, not work.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "planner/planner_int.h"

/* splitmix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number
 * generators", OOPSLA 2014): one 64-bit state, good enough for choices. */
static uint64_t next(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static int below(uint64_t *s, int n) { return n > 0 ? (int)(next(s) % (uint64_t)n) : 0; }

static const emb_opt *opt_of(const emb_inst *in, const plan_table_plan *plans, size_t i) {
  return EOPT(in, i, emb_opt_index(in, plans[i].shard, plans[i].place, plans[i].k));
}

static int touches(const emb_inst *in, const plan_table_plan *pl, const emb_opt *e, int r) {
  if (e->kind == EK_NODE) return pl->node == r / in->G;
  if (e->kind == EK_UNIFORM) return 0;
  for (int j = 0; j < e->k; j++)
    if ((e->shard == PLAN_SHARD_TW ? pl->rank : pl->cw_ranks[j]) == r) return 1;
  return 0;
}

/* Move table i (one shard of it) to a random rank or node, or swap it with
 * a random table of the same kind. */
static void perturb_one(const emb_inst *in, plan_table_plan *plans, size_t i, uint64_t *rng) {
  const emb_opt *e = opt_of(in, plans, i);
  plan_table_plan *pl = &plans[i];
  int swap = below(rng, 2);
  size_t c = (size_t)below(rng, (int)in->n);
  const emb_opt *ec = opt_of(in, plans, c);
  if (e->kind == EK_NODE) {
    if (swap && ec->kind == EK_NODE) {
      int t = pl->node;
      pl->node = plans[c].node, plans[c].node = t;
    } else {
      pl->node = below(rng, in->N);
    }
    return;
  }
  int j = below(rng, e->k);
  int *ri = e->shard == PLAN_SHARD_TW ? &pl->rank : &pl->cw_ranks[j];
  if (swap && ec->kind == EK_ITEM) {
    int jc = below(rng, ec->k);
    int *rc = ec->shard == PLAN_SHARD_TW ? &plans[c].rank : &plans[c].cw_ranks[jc];
    int t = *ri;
    *ri = *rc, *rc = t;
  } else {
    *ri = below(rng, in->R);
  }
}

void emb_ils(const emb_inst *in, plan_table_plan *plans, emb_budget *b, int max_iter) {
  plan_table_plan *cand = malloc((in->n ? in->n : 1) * sizeof *cand);
  size_t *pool = malloc((in->n ? in->n : 1) * sizeof *pool), *ontop = NULL;
  plan_emb_result res = {0};
  uint64_t rng = 0x5DEECE66Dull;
  int fits = 0;
  if (!cand || !pool || !(ontop = malloc((in->n ? in->n : 1) * sizeof *ontop))) goto cleanup;
  size_t np = 0;
  for (size_t i = 0; i < in->n; i++)
    if (opt_of(in, plans, i)->kind != EK_UNIFORM) pool[np++] = i;
  if (!np || emb_eval(in, plans, &res, &fits, NULL)) goto cleanup;
  if (!fits) {
    plan_emb_result_dispose(&res);
    goto cleanup;
  }
  double best = res.max_ms;
  int top = 0;
  for (int r = 1; r < in->R; r++)
    if (res.rank_ms[r] > res.rank_ms[top]) top = r;
  plan_emb_result_dispose(&res);
  for (int it = 0; it < max_iter; it++) {
    /* a copy, an evaluation and the piece lists of local search */
    if (emb_spend(b, 4.0 * ((double)in->n + in->R))) break;
    memcpy(cand, plans, in->n * sizeof *cand);
    size_t nt = 0;
    for (size_t q = 0; q < np; q++)
      if (touches(in, &plans[pool[q]], opt_of(in, plans, pool[q]), top)) ontop[nt++] = pool[q];
    int k = 1 + below(&rng, 3);
    for (int m = 0; m < k; m++) {
      size_t i = m == 0 && nt ? ontop[below(&rng, (int)nt)] : pool[below(&rng, (int)np)];
      perturb_one(in, cand, i, &rng);
    }
    emb_local_search(in, cand, b);
    if (b->work_hit || b->time_hit) break;
    if (emb_eval(in, cand, &res, &fits, NULL)) break;
    if (fits && res.max_ms < best * (1 - 1e-9)) {
      best = res.max_ms;
      top = 0;
      for (int r = 1; r < in->R; r++)
        if (res.rank_ms[r] > res.rank_ms[top]) top = r;
      memcpy(plans, cand, in->n * sizeof *cand);
    }
    plan_emb_result_dispose(&res);
  }
cleanup:
  free(cand), free(pool), free(ontop);
}
