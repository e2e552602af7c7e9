/* emb_anneal.c: simulated annealing over a plan's pieces and node lumps,
 * with every table's option kept, for a packing the construction
 * (emb_construct.c) leaves a little above its target.
 *
 * The state is the plan itself; a move is a piece (table-wise, one
 * column-wise shard) moved to another rank or swapped with a piece of
 * another table, or a lump (table-row-wise) moved to another node or
 * swapped with another lump. HBM per rank and host memory per node are
 * checked on every move (a move that breaks them is not made). The cost is
 * the summed load above the target T over all ranks (so a move that lowers
 * a rank that is not the slowest still counts, which local search does not
 * see); worse moves are accepted with probability exp(-delta / temp), the
 * temperature falling geometrically over the moves (Kirkpatrick, Gelatt and
 * Vecchi, "Optimization by simulated annealing", Science 220, 1983). It
 * stops when no rank is above T. The plan of least cost seen is searched
 * locally and kept when its slowest rank is lower than the start's and it
 * fits: never worse than the start. The moves and temperatures are those of
 * bench/planner_study/sa.py, which took heavy 100 x 128 seed 1 from
 * nodepack.py's plan to 15.2742 ms (docs/planner.md, "The eleventh pass");
 * the twelfth pass's version (re-options too, from the planner's plan) is
 * data/measurements/planner/twelfth_pass_anneal.patch. Deterministic:
 * fixed-seed generator, every move charged to the work budget.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "planner/planner_int.h"

/* Temperatures relative to the target: sa.py's 0.2 / 0.001 ms at 15.27 ms. */
#define ANNEAL_T0 0.013
#define ANNEAL_T1 6.5e-5

typedef struct {
  const emb_inst *in;
  plan_table_plan *pl;
  double *ms, *by, *h; /* per rank ms and HBM (uniform work left out), per node host bytes */
  double U, Ub, Uh, T, cap, hcap;
  /* the ranks and nodes a move touches, with their values before it */
  int *mr, *mn, *tr, *tn, ntr, ntn, stamp;
  int *o; /* each table's option index */
  double *sms, *sby, *sh;
} ann;

static void touch_rank(ann *a, int r) {
  if (a->mr[r] == a->stamp) return;
  a->mr[r] = a->stamp, a->tr[a->ntr] = r, a->sms[a->ntr] = a->ms[r], a->sby[a->ntr] = a->by[r];
  a->ntr++;
}

static void touch_node(ann *a, int nd) {
  if (a->mn[nd] == a->stamp) return;
  a->mn[nd] = a->stamp, a->tn[a->ntn] = nd, a->sh[a->ntn] = a->h[nd];
  a->ntn++;
}

/* Table i's pieces added (sg 1) or taken off (sg -1), ranks and nodes
 * marked as touched. */
static void put(ann *a, size_t i, double sg) {
  const emb_inst *in = a->in;
  const emb_opt *e = EOPT(in, i, a->o[i]);
  const plan_table_plan *p = &a->pl[i];
  if (e->kind == EK_NODE) {
    touch_node(a, p->node);
    a->h[p->node] += sg * e->host_bytes * in->G;
    for (int g = 0; g < in->G; g++) {
      int r = p->node * in->G + g;
      touch_rank(a, r);
      a->ms[r] += sg * e->ms, a->by[r] += sg * e->bytes;
    }
  } else if (e->kind == EK_ITEM) {
    for (int j = 0; j < e->k; j++) {
      int r = e->shard == PLAN_SHARD_TW ? p->rank : p->cw_ranks[j];
      touch_rank(a, r), touch_node(a, r / in->G);
      a->ms[r] += sg * e->ms, a->by[r] += sg * e->bytes, a->h[r / in->G] += sg * e->host_bytes;
    }
  }
}

static double ex(const ann *a, double ms) { return ms + a->U > a->T ? ms + a->U - a->T : 0; }

/* The touched ranks' change of cost, or INFINITY when a touched rank or
 * node went over its memory. */
static double delta(const ann *a) {
  double d = 0;
  for (int q = 0; q < a->ntr; q++) {
    int r = a->tr[q];
    if (a->by[r] + a->Ub > a->cap && a->by[r] > a->sby[q]) return INFINITY;
    d += ex(a, a->ms[r]) - ex(a, a->sms[q]);
  }
  for (int q = 0; q < a->ntn; q++) {
    int nd = a->tn[q];
    if (a->h[nd] + a->Uh > a->hcap && a->h[nd] > a->sh[q]) return INFINITY;
  }
  return d;
}

static void undo(ann *a) {
  for (int q = 0; q < a->ntr; q++) a->ms[a->tr[q]] = a->sms[q], a->by[a->tr[q]] = a->sby[q];
  for (int q = 0; q < a->ntn; q++) a->h[a->tn[q]] = a->sh[q];
}

/* Does table i's plan p hold rank r in a shard other than j? */
static int holds(const emb_opt *e, const plan_table_plan *p, int r, int j) {
  if (e->shard != PLAN_SHARD_CW) return 0;
  for (int q = 0; q < e->k; q++)
    if (q != j && p->cw_ranks[q] == r) return 1;
  return 0;
}

static int *shard_of(const emb_opt *e, plan_table_plan *p, int j) {
  return e->shard == PLAN_SHARD_TW ? &p->rank : &p->cw_ranks[j];
}

/* One random move of table i (a piece or lump moved, or swapped with table
 * c's); 0 when made (a->pl changed, touched ranks noted), -1 when not. */
static int move(ann *a, size_t i, size_t c, uint64_t *rng) {
  const emb_inst *in = a->in;
  const emb_opt *e = EOPT(in, i, a->o[i]), *f = EOPT(in, c, a->o[c]);
  plan_table_plan *pi = &a->pl[i], *pc = &a->pl[c];
  if (emb_rng_below(rng, 2)) { /* move: a piece to a rank, a lump to a node */
    put(a, i, -1);
    if (e->kind == EK_NODE) {
      pi->node = emb_rng_below(rng, in->N);
    } else {
      int j = emb_rng_below(rng, e->k), r = emb_rng_below(rng, in->R);
      if (holds(e, pi, r, j)) return -1;
      *shard_of(e, pi, j) = r;
    }
    put(a, i, 1);
    return 0;
  }
  if (c == i || (e->kind == EK_NODE) != (f->kind == EK_NODE)) return -1;
  put(a, i, -1), put(a, c, -1);
  if (e->kind == EK_NODE) {
    int t = pi->node;
    pi->node = pc->node, pc->node = t;
  } else {
    int j = emb_rng_below(rng, e->k), jc = emb_rng_below(rng, f->k);
    int *ri = shard_of(e, pi, j), *rc = shard_of(f, pc, jc), ti = *ri, tc = *rc;
    if (holds(e, pi, tc, j) || holds(f, pc, ti, jc)) return -1;
    *ri = tc, *rc = ti;
  }
  put(a, i, 1), put(a, c, 1);
  return 0;
}

/* The start's state: options, uniform work, the pool of the other tables
 * and their loads. The number of pooled tables. */
static size_t setup(ann *a, size_t *pool) {
  const emb_inst *in = a->in;
  size_t np = 0;
  for (size_t i = 0; i < in->n; i++) {
    a->o[i] = emb_opt_index(in, a->pl[i].shard, a->pl[i].place, a->pl[i].k);
    const emb_opt *e = EOPT(in, i, a->o[i]);
    if (e->kind == EK_UNIFORM)
      a->U += e->ms, a->Ub += e->bytes, a->Uh += e->host_bytes * in->G;
    else
      pool[np++] = i;
  }
  a->stamp = 1;
  for (size_t q = 0; q < np; q++) put(a, pool[q], 1);
  return np;
}

int emb_anneal(const emb_inst *in, plan_table_plan *plans, emb_budget *b, double target, long moves,
               uint64_t seed) {
  size_t n = in->n ? in->n : 1;
  int R = in->R, N = in->N, kept = 0, fits = 0;
  ann a = {.in = in, .cap = in->p->cap_bytes, .hcap = in->host_cap, .U = in->fixed_ms, .T = target};
  plan_table_plan *best = malloc(n * sizeof *best), *cur = malloc(n * sizeof *cur);
  size_t *pool = malloc(n * sizeof *pool);
  a.ms = calloc((size_t)R, sizeof *a.ms), a.by = calloc((size_t)R, sizeof *a.by);
  a.h = calloc((size_t)N, sizeof *a.h);
  a.mr = calloc((size_t)R, sizeof *a.mr), a.tr = malloc((size_t)R * sizeof *a.tr);
  a.mn = calloc((size_t)N, sizeof *a.mn), a.tn = malloc((size_t)N * sizeof *a.tn);
  a.sms = malloc((size_t)R * sizeof *a.sms), a.sby = malloc((size_t)R * sizeof *a.sby);
  a.sh = malloc((size_t)N * sizeof *a.sh), a.o = malloc(n * sizeof *a.o);
  plan_emb_result res;
  if (!best || !cur || !pool || !a.ms || !a.by || !a.h || !a.mr || !a.tr || !a.mn || !a.tn ||
      !a.sms || !a.sby || !a.sh || !a.o || !(target > 0) || emb_eval(in, plans, &res, &fits, NULL))
    goto cleanup;
  double start = res.max_ms;
  plan_emb_result_dispose(&res);
  if (!fits) goto cleanup;
  memcpy(cur, plans, in->n * sizeof *cur);
  a.pl = cur;
  size_t np = setup(&a, pool);
  if (!np) goto cleanup;
  double cost = 0;
  for (int r = 0; r < R; r++) cost += ex(&a, a.ms[r]);
  double bestc = cost, cost0 = cost, t0 = ANNEAL_T0 * target, t1 = ANNEAL_T1 * target;
  double temp = t0, cool = pow(t1 / t0, 1.0 / (double)(moves > 1 ? moves : 1));
  memcpy(best, cur, in->n * sizeof *best);
  uint64_t rng = seed;
  long it = 0, acc = 0;
  double w0 = b->work;
  for (; it < moves && cost > 1e-12; it++) {
    if ((it & 255) == 0 && emb_spend(b, 768.0 * (8 + 2 * in->G))) break;
    temp *= cool;
    a.stamp++, a.ntr = a.ntn = 0;
    size_t i = pool[emb_rng_below(&rng, (int)np)], c = pool[emb_rng_below(&rng, (int)np)];
    plan_table_plan oi = cur[i], oc = cur[c];
    if (move(&a, i, c, &rng)) {
      undo(&a), cur[i] = oi, cur[c] = oc;
      continue;
    }
    double d = delta(&a);
    if (d <= 0 || (isfinite(d) && emb_rng_unit(&rng) < exp(-d / temp))) {
      cost += d, acc++;
      if (cost < bestc - 1e-12) {
        bestc = cost;
        memcpy(best, cur, in->n * sizeof *best);
        if (emb_spend(b, (double)in->n)) break;
      }
    } else {
      undo(&a), cur[i] = oi, cur[c] = oc;
    }
  }
  /* the plan of least cost, searched locally, kept when lower and it fits */
  emb_local_search(in, best, b);
  if (!emb_eval(in, best, &res, &fits, NULL)) {
    svc_log(SVC_LOG_DEBUG,
            "planner: annealing to %.4f: %ld moves, %ld accepted, excess %.4f -> %.4f, slowest "
            "rank %.4f -> %.4f, %.3g work units%s",
            target, it, acc, cost0, bestc, start, res.max_ms, w0 - b->work,
            b->work_hit ? ", work limit" : "");
    if (fits && res.max_ms < start * (1 - 1e-9))
      memcpy(plans, best, in->n * sizeof *best), kept = 1;
    plan_emb_result_dispose(&res);
  }
cleanup:
  free(best), free(cur), free(pool);
  free(a.ms), free(a.by), free(a.h), free(a.mr), free(a.tr), free(a.mn), free(a.tn);
  free(a.sms), free(a.sby), free(a.sh), free(a.o);
  return kept;
}
