/* emb_pack.c: packing to a target load (issue 24).
 *
 * The LPT packing (emb_eval.c) places each piece on the least-loaded rank
 * with room and, when memory runs out, re-options the piece that does not
 * fit to its option of least total work. Under tight HBM that leaves a
 * single monster piece on one rank (heavy 3000 x 512: a 564 ms table-wise
 * host piece where the table's smallest piece is 12 ms; 10000 x 4096: a
 * 1967 ms column-wise host shard), so the answer sat 25-40 % above a bound
 * that its own mean load met within 2 %. Measured with bench/planner
 * --heavy and PLAN_DIAG (2026-12-05, data/measurements/planner/
 * gap_sources.md): on 5 of the 7 worst instances the answer's mean rank
 * load was within 0.3-3.3 % of the bound and its max 1.1-1.6x the mean,
 * so the gap was the packing, not the bound.
 *
 * Here a target T for the slowest rank is a hard limit. Under tight HBM
 * the rounded LP mix fills the HBM to the byte (the LP spends it while it
 * is free: memory fill 1.000-1.001 on heavy 1000 x 128 seed 2), which no
 * packing of whole pieces meets, so first tables move to options of less
 * HBM, the least extra work per byte saved first, until the choice needs
 * at most a fill (0.95, 0.85, 0.7 in turn) of all GPUs' HBM; the load
 * fill rose only 0.84 -> 0.85 there. Then the pieces, biggest first (the
 * larger of their share of T's room and of the HBM), go each to the rank
 * where both the load (under T) and the memory (HBM per GPU, host per
 * node) fit and which is left least full in its fuller dimension (the
 * L-infinity norm rule of Panigrahy, Talwar, Uyeda and Wieder, "Heuristics
 * for Vector Bin Packing", Microsoft Research 2011): LPT where memory is
 * loose, memory-heavy pieces beside load-heavy ones where it is not (the
 * dot-product and best-fit rules, tried first, stranded half the GPUs
 * memory-full and the other half load-full). A table whose option fits
 * nowhere under T takes its option of least total work that does, or,
 * when none does, goes over T on the least-loaded ranks with room. The
 * caller bisects on T. A piece's rank comes from a tournament tree over
 * the ranks (least load, HBM, host memory, and fill max/sum per subtree)
 * searched by branch and bound in (cost, rank) order: the same rank as a
 * scan of all of them (checked against the scan on heavy 300/1000 x
 * 64/512 and 10000 x 4096 seed 2, 2026-12-05), 190-280 tree nodes visited
 * a piece at 4096 ranks instead of 4096 rank tests. emb_kick (below) improves a packing where
 * option repair and the moves stop.
 *
 * Where the L-infinity rule, close to worst fit on the load when memory is
 * loose, does not pack under T, the caller tries best fit: the rank whose
 * load ends highest under T, memory a constraint (Johnson, Demers, Ullman,
 * Garey and Graham, SIAM J. Comput. 3, 1974). With ~2.4 pieces a rank,
 * 2479 of them over half a rank's room, heavy 10000 x 4096's slowest rank
 * fell 2.4-3.8 % by it (seeds 1-3, with emb_agg.c's held-back split work;
 * 2026-12-05, docs/planner.md "The eighth pass"). The tree then keeps each
 * subtree's largest load too.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "planner/planner_int.h"

typedef struct {
  double *ms, *b, *h;
  double T, cap, hcap;
  double room_a, room_m; /* per-rank room left by the uniform work */
  /* tournament tree over the ranks (leaves P..P+R-1, padding INFINITY):
   * each node holds the least load, HBM and node host memory below it */
  double *tm, *tb, *th;
  double *tx, *ts; /* least max and least sum of load / Tn and HBM / cap below */
  double *tM;      /* the largest load below (the best-fit rule) */
  double Tn;       /* the T of tx and ts (finite) or 0 */
  int P;
  double units; /* work of the placements since the caller last spent it */
  int best_fit; /* the rule: 0 L-infinity, 1 best fit on the load */
} tstate;

static int tree_alloc(const emb_inst *in, tstate *s) {
  s->P = 1;
  while (s->P < in->R) s->P *= 2;
  s->tm = malloc(2 * (size_t)s->P * sizeof *s->tm);
  s->tb = malloc(2 * (size_t)s->P * sizeof *s->tb);
  s->th = malloc(2 * (size_t)s->P * sizeof *s->th);
  s->tx = malloc(2 * (size_t)s->P * sizeof *s->tx);
  s->ts = malloc(2 * (size_t)s->P * sizeof *s->ts);
  s->tM = malloc(2 * (size_t)s->P * sizeof *s->tM);
  s->Tn = isfinite(s->T) ? s->T : 0;
  return s->tm && s->tb && s->th && s->tx && s->ts && s->tM ? 0 : -1;
}

static void tree_free(tstate *s) {
  free(s->tm), free(s->tb), free(s->th), free(s->tx), free(s->ts), free(s->tM);
}

static void tree_leaf(const emb_inst *in, tstate *s, int r) {
  int v = s->P + r, in_r = r < in->R;
  s->tm[v] = in_r ? s->ms[r] : INFINITY;
  s->tM[v] = in_r ? s->ms[r] : -INFINITY;
  s->tb[v] = in_r ? s->b[r] : INFINITY;
  s->th[v] = in_r ? s->h[r / in->G] : INFINITY;
  double x = in_r && s->Tn > 0 ? s->ms[r] / s->Tn : INFINITY, y = in_r ? s->b[r] / s->cap : 0;
  s->tx[v] = emb_max(x, y), s->ts[v] = x + y;
}

static void tree_pull(tstate *s, int v) {
  s->tm[v] = emb_min(s->tm[2 * v], s->tm[2 * v + 1]);
  s->tM[v] = emb_max(s->tM[2 * v], s->tM[2 * v + 1]);
  s->tb[v] = emb_min(s->tb[2 * v], s->tb[2 * v + 1]);
  s->th[v] = emb_min(s->th[2 * v], s->th[2 * v + 1]);
  s->tx[v] = emb_min(s->tx[2 * v], s->tx[2 * v + 1]);
  s->ts[v] = emb_min(s->ts[2 * v], s->ts[2 * v + 1]);
}

/* Whole tree from ms, b and h: R units of work. */
static void tree_build(const emb_inst *in, tstate *s) {
  for (int r = 0; r < s->P; r++) tree_leaf(in, s, r);
  for (int v = s->P - 1; v >= 1; v--) tree_pull(s, v);
  s->units += in->R / 8.0;
}

/* Rank r's leaf (and the path up) after its load, HBM or node host memory
 * changed. */
static void tree_fix(const emb_inst *in, tstate *s, int r) {
  int v = s->P + r;
  tree_leaf(in, s, r);
  for (v /= 2; v >= 1; v /= 2) tree_pull(s, v);
  s->units += 0.25; /* log2(R) pulls, about a linear scan's 12 rank tests */
}

/* After a piece of host_bytes hb went on or off rank r: every rank of r's
 * node when it moved host memory, else r. */
static void tree_fix_piece(const emb_inst *in, tstate *s, int r, double hb) {
  if (!(hb > 0)) {
    tree_fix(in, s, r);
    return;
  }
  int nd = r / in->G;
  for (int g = 0; g < in->G; g++) tree_fix(in, s, nd * in->G + g);
}

/* The packing rule's cost of a piece (a ms, c bytes) on a rank with load m
 * and HBM b (lower is better): the fuller dimension after it, or the load
 * when T is unbounded. Monotone in m and b, so a node's least m and b give
 * a lower bound for every rank below it. */
static double rule_cost(const tstate *s, double m, double b, double a, double c) {
  return isfinite(s->T) ? emb_max((m + a) / s->T, (b + c) / s->cap) : m;
}

/* A lower bound of the rule's cost on every rank below tree node v: from
 * the least load and HBM, and (under the tree's T) from the least max and
 * sum of the two fills, max(x + p, y + q) >= max(x, y) + min(p, q) and
 * >= (x + y + p + q) / 2, less 1e-12 for rounding (costs are about 1). */
static double node_bound(const tstate *s, int v, const emb_opt *e) {
  double lb = rule_cost(s, s->tm[v], s->tb[v], e->ms, e->bytes);
  if (s->Tn > 0 && s->T == s->Tn) {
    double p = e->ms / s->T, q = e->bytes / s->cap;
    lb = emb_max(lb, emb_max(s->tx[v] + emb_min(p, q), 0.5 * (s->ts[v] + p + q)) - 1e-12);
  }
  return lb;
}

typedef struct {
  const emb_opt *e;
  const int *got;
  int ngot;
  int best;
  double best_cost;
} pick_ctx;

/* Branch and bound down the tree, the subtree of the better bound first;
 * a subtree goes when no rank below it can fit or its bound cannot beat
 * the best so far in (cost, rank index) order, which is the order of the
 * linear scan it replaces, so the rank is the same. */
static void pick_dfs(const emb_inst *in, tstate *s, pick_ctx *c, int v, int lo, int width) {
  const emb_opt *e = c->e;
  s->units += 1.0 / 4;
  if (s->tm[v] + e->ms > s->T || s->tb[v] + e->bytes > s->cap ||
      (e->host_bytes > 0 && s->th[v] + e->host_bytes > s->hcap) || lo >= in->R)
    return;
  double lb = node_bound(s, v, e);
  if (c->best >= 0 && (lb > c->best_cost || (lb == c->best_cost && lo > c->best))) return;
  if (width == 1) {
    for (int q = 0; q < c->ngot; q++)
      if (c->got[q] == lo) return; /* shards of one table prefer distinct ranks */
    double cost = rule_cost(s, s->ms[lo], s->b[lo], e->ms, e->bytes);
    if (c->best < 0 || cost < c->best_cost || (cost == c->best_cost && lo < c->best))
      c->best = lo, c->best_cost = cost;
    return;
  }
  int h = width / 2, l = 2 * v, r = 2 * v + 1;
  double ll = node_bound(s, l, e), lr = node_bound(s, r, e);
  if (lr < ll) {
    pick_dfs(in, s, c, r, lo + h, h);
    pick_dfs(in, s, c, l, lo, h);
  } else {
    pick_dfs(in, s, c, l, lo, h);
    pick_dfs(in, s, c, r, lo + h, h);
  }
}

/* The best-fit rule: the rank with room whose load ends highest under T
 * (ties: the lowest index). The most load a subtree can end at is its
 * largest load, at most T less the piece: the subtree of the larger bound
 * first, a subtree whose bound cannot beat the best so far goes. */
static void pick_bf(const emb_inst *in, tstate *s, pick_ctx *c, int v, int lo, int width) {
  const emb_opt *e = c->e;
  s->units += 1.0 / 4;
  if (s->tm[v] + e->ms > s->T || s->tb[v] + e->bytes > s->cap ||
      (e->host_bytes > 0 && s->th[v] + e->host_bytes > s->hcap) || lo >= in->R)
    return;
  double ub = emb_min(s->tM[v], s->T - e->ms) + e->ms; /* cost = -(load after) */
  if (c->best >= 0 && (-ub > c->best_cost || (-ub == c->best_cost && lo > c->best))) return;
  if (width == 1) {
    for (int q = 0; q < c->ngot; q++)
      if (c->got[q] == lo) return;
    double cost = -(s->ms[lo] + e->ms);
    if (c->best < 0 || cost < c->best_cost || (cost == c->best_cost && lo < c->best))
      c->best = lo, c->best_cost = cost;
    return;
  }
  int h = width / 2, l = 2 * v, r = 2 * v + 1;
  double bl = emb_min(s->tM[l], s->T - e->ms), br = emb_min(s->tM[r], s->T - e->ms);
  if (br > bl) {
    pick_bf(in, s, c, r, lo + h, h);
    pick_bf(in, s, c, l, lo, h);
  } else {
    pick_bf(in, s, c, l, lo, h);
    pick_bf(in, s, c, r, lo + h, h);
  }
}

/* The rank for shard j of a piece e (got: the ranks of shards 0..j-1), or
 * -1: the rank with room where the rule's cost is least (ties: the lowest
 * index), a rank without another shard of the table first. */
static int pick_rank(const emb_inst *in, tstate *s, const emb_opt *e, const int *got, int j) {
  pick_ctx c = {.e = e, .got = got, .ngot = j, .best = -1, .best_cost = INFINITY};
  if (s->best_fit && isfinite(s->T))
    pick_bf(in, s, &c, 1, 0, s->P);
  else
    pick_dfs(in, s, &c, 1, 0, s->P);
  if (c.best >= 0) return c.best;
  for (int q = 0; q < j; q++) { /* only ranks already holding a shard have room */
    int r = got[q];
    if (s->ms[r] + e->ms > s->T || s->b[r] + e->bytes > s->cap ||
        (e->host_bytes > 0 && s->h[r / in->G] + e->host_bytes > s->hcap))
      continue;
    double cost = s->best_fit && isfinite(s->T) ? -(s->ms[r] + e->ms)
                                                : rule_cost(s, s->ms[r], s->b[r], e->ms, e->bytes);
    if (c.best < 0 || cost < c.best_cost || (cost == c.best_cost && r < c.best))
      c.best = r, c.best_cost = cost;
  }
  return c.best;
}

static double pieces_of(const emb_inst *in, const emb_opt *e) {
  return e->kind == EK_UNIFORM ? in->R : e->kind == EK_NODE ? in->G : e->k;
}

static double max_ms(const emb_inst *in, const tstate *s) {
  double m = 0;
  for (int r = 0; r < in->R; r++) m = fmax(m, s->ms[r]);
  return m;
}

/* Place table i with option o under the target, filling pl; 0 or -1
 * (state unchanged). */
static int place_t(const emb_inst *in, tstate *s, size_t i, int o, plan_table_plan *pl) {
  const emb_opt *e = EOPT(in, i, o);
  double nodeh = e->host_bytes * in->G;
  memset(pl, 0, sizeof *pl);
  pl->shard = e->shard, pl->place = e->place, pl->k = e->k;
  if (e->kind == EK_UNIFORM) {
    s->units += in->R / 8.0;
    if (max_ms(in, s) + e->ms > s->T || emb_add_uniform(in, e, s->ms, s->b, s->h, s->cap, s->hcap))
      return -1;
    tree_build(in, s);
    return 0;
  }
  if (e->kind == EK_NODE) {
    int best = -1;
    s->units += in->R / 8.0; /* a scan of every rank */
    double best_max = INFINITY;
    for (int nd = 0; nd < in->N; nd++) {
      double mx = 0;
      int fit = nodeh <= 0 || s->h[nd] + nodeh <= s->hcap;
      for (int g = 0; g < in->G && fit; g++) {
        int r = nd * in->G + g;
        fit = s->b[r] + e->bytes <= s->cap && s->ms[r] + e->ms <= s->T;
        mx = fmax(mx, s->ms[r]);
      }
      if (fit && mx < best_max) best = nd, best_max = mx;
    }
    if (best < 0) return -1;
    pl->node = best;
    s->h[best] += nodeh;
    for (int g = 0; g < in->G; g++)
      s->ms[best * in->G + g] += e->ms, s->b[best * in->G + g] += e->bytes;
    for (int g = 0; g < in->G; g++) tree_fix(in, s, best * in->G + g);
    return 0;
  }
  int got[PLAN_MAX_CW];
  for (int j = 0; j < e->k; j++) {
    int best = pick_rank(in, s, e, got, j);
    if (best < 0) {
      for (int q = 0; q < j; q++) {
        s->ms[got[q]] -= e->ms, s->b[got[q]] -= e->bytes, s->h[got[q] / in->G] -= e->host_bytes;
        tree_fix_piece(in, s, got[q], e->host_bytes);
      }
      return -1;
    }
    got[j] = best;
    s->ms[best] += e->ms, s->b[best] += e->bytes, s->h[best / in->G] += e->host_bytes;
    tree_fix_piece(in, s, best, e->host_bytes);
  }
  if (e->shard == PLAN_SHARD_TW)
    pl->rank = got[0];
  else
    memcpy(pl->cw_ranks, got, (size_t)e->k * sizeof *got);
  return 0;
}

typedef struct {
  double ratio; /* extra total work per HBM byte saved */
  size_t i;
  int o;
} diet_move;

static int by_ratio(const void *x, const void *y) {
  const diet_move *a = x, *b = y;
  if (a->ratio != b->ratio) return a->ratio < b->ratio ? -1 : 1;
  return a->i < b->i ? -1 : a->i > b->i;
}

/* Under tight HBM the rounded LP mix fills it to the byte (the LP spends
 * HBM while it is free), and no packing of whole pieces fits that. Move
 * tables to options of less HBM (host placement, splits), the least extra
 * work per byte saved first, until the HBM the choice needs is at most
 * fill of all GPUs' HBM; pieces stay under T, host memory (all nodes
 * together) within its size. choice is changed in place. */
static void mem_diet(const emb_inst *in, int *choice, double T, double fill, emb_budget *bud) {
  double mem = 0, host = 0, U = in->fixed_ms;
  for (size_t i = 0; i < in->n; i++) {
    const emb_opt *e = EOPT(in, i, choice[i]);
    mem += e->bytes * pieces_of(in, e), host += e->host_bytes * pieces_of(in, e);
    if (e->kind == EK_UNIFORM) U += e->ms;
  }
  double room = fill * in->p->cap_bytes * in->R, hroom = 0.95 * in->host_cap * in->N;
  if (mem <= room) return;
  diet_move *mv = malloc((in->n ? in->n : 1) * sizeof *mv);
  size_t nm = 0;
  if (!mv) return;
  for (size_t i = 0; i < in->n; i++) {
    const emb_opt *c = EOPT(in, i, choice[i]);
    double cm = c->bytes * pieces_of(in, c), cw = c->ms * pieces_of(in, c);
    diet_move best = {.ratio = INFINITY};
    for (int o = 0; o < in->nopt; o++) {
      const emb_opt *e = EOPT(in, i, o);
      if (!e->ok || o == choice[i]) continue;
      double em = e->bytes * pieces_of(in, e), ew = e->ms * pieces_of(in, e);
      if (em >= cm - 1 || e->ms + (e->kind == EK_UNIFORM ? in->fixed_ms : U) > T) continue;
      double r = (ew - cw) / (cm - em);
      if (r < best.ratio) best = (diet_move){.ratio = r, .i = i, .o = o};
    }
    if (isfinite(best.ratio)) mv[nm++] = best;
  }
  emb_spend(bud, (double)in->n * in->nopt);
  qsort(mv, nm, sizeof *mv, by_ratio);
  for (size_t k = 0; k < nm && mem > room; k++) {
    const emb_opt *c = EOPT(in, mv[k].i, choice[mv[k].i]), *e = EOPT(in, mv[k].i, mv[k].o);
    double dh = (e->host_bytes * pieces_of(in, e) - c->host_bytes * pieces_of(in, c));
    if (host + dh > hroom) continue;
    mem += e->bytes * pieces_of(in, e) - c->bytes * pieces_of(in, c), host += dh;
    choice[mv[k].i] = mv[k].o;
  }
  free(mv);
}

/* Spend the placements' work so far (and a unit for the step). */
static int spend(emb_budget *b, tstate *s) {
  double u = s->units + 1;
  s->units = 0;
  return emb_spend(b, u);
}

int emb_pack_target(const emb_inst *in, int *choice, double T, double fill, int best_fit,
                    plan_table_plan *plans, emb_budget *bud, int *repaired) {
  tstate s = {.T = T,
              .cap = in->p->cap_bytes * (1 + 1e-12),
              .hcap = in->host_cap * (1 + 1e-12),
              .best_fit = best_fit};
  emb_keyed *ord = malloc((in->n ? in->n : 1) * sizeof *ord);
  int rc = -1;
  size_t no = 0;
  *repaired = 0;
  s.ms = calloc((size_t)in->R, sizeof *s.ms);
  s.b = calloc((size_t)in->R, sizeof *s.b);
  s.h = calloc((size_t)in->N, sizeof *s.h);
  if (!ord || !s.ms || !s.b || !s.h || tree_alloc(in, &s)) goto cleanup;
  if (fill > 0) mem_diet(in, choice, T, fill, bud);
  /* uniform work first: it is on every rank whatever else happens */
  double U = in->fixed_ms, Um = 0, Uh = 0;
  for (size_t i = 0; i < in->n; i++) {
    const emb_opt *e = EOPT(in, i, choice[i]);
    if (e->kind == EK_UNIFORM) {
      U += e->ms, Um += e->bytes, Uh += e->host_bytes * in->G;
      plans[i] = (plan_table_plan){.shard = e->shard, .place = e->place, .k = e->k};
    }
  }
  s.room_a = T - U, s.room_m = s.cap - Um;
  if (!(s.room_a > 0) || !(s.room_m > 0) || Uh > s.hcap) goto cleanup;
  for (int r = 0; r < in->R; r++) s.ms[r] = U, s.b[r] = Um;
  for (int nd = 0; nd < in->N; nd++) s.h[nd] = Uh;
  tree_build(in, &s);
  for (size_t i = 0; i < in->n; i++) {
    const emb_opt *e = EOPT(in, i, choice[i]);
    if (e->kind == EK_UNIFORM) continue;
    double key = fmax(e->ms / s.room_a, e->bytes / s.room_m);
    if (e->host_bytes > 0) key = fmax(key, e->host_bytes / s.hcap);
    ord[no++] = (emb_keyed){.key = key, .i = i};
  }
  qsort(ord, no, sizeof *ord, emb_by_key_desc);
  int over = 0;
  /* a placement is charged what it did: a quarter unit per tree node it
   * visited or fixed, R/8 for a scan of every rank (node and uniform
   * options, rebuilds); a rank test costs about an eighth of a move's step
   * in the local search (2.4e8 units went in 0.47 s at R each, heavy
   * 3000 x 1024), a tree visit about two rank tests */
  for (size_t q = 0; q < no; q++) {
    size_t i = ord[q].i;
    if (spend(bud, &s)) goto cleanup;
    if (!place_t(in, &s, i, choice[i], &plans[i])) continue;
    (*repaired)++;
    /* repair: the option of least total work whose pieces fit under T;
     * when none does, over T (the least-loaded ranks with room): the
     * packing is then above T, but a start for the moves */
    int done = 0;
    for (int soft = 0; soft < 2 && !done; soft++) {
      s.T = soft ? INFINITY : T;
      double tw = -1; /* options in (total work, index) order after (tw, to) */
      int to = soft ? -2 : choice[i];
      if (soft && spend(bud, &s)) goto cleanup;
      if (soft && !place_t(in, &s, i, choice[i], &plans[i])) done = 1;
      while (!done) {
        int best = -1;
        double bw = INFINITY;
        for (int o = 0; o < in->nopt; o++) {
          const emb_opt *e = EOPT(in, i, o);
          double w = e->ms * pieces_of(in, e);
          if (o == choice[i] || !e->ok || (!soft && e->ms > T) || w < tw || (w == tw && o <= to))
            continue;
          if (w < bw) best = o, bw = w;
        }
        if (best < 0) break;
        tw = bw, to = best;
        if (spend(bud, &s)) goto cleanup;
        done = !place_t(in, &s, i, best, &plans[i]);
      }
      over |= soft && done;
    }
    s.T = T;
    if (!done) goto cleanup;
  }
  rc = over;
cleanup:
  free(ord), free(s.ms), free(s.b), free(s.h), tree_free(&s);
  return rc;
}

/* ---- option changes followed by rebalancing ---------------------------------- */

/* Add (sign +1) or remove (-1) table i's plan pl in the state. */
static void account(const emb_inst *in, tstate *s, size_t i, const plan_table_plan *pl,
                    double sign) {
  const emb_opt *e = EOPT(in, i, emb_opt_index(in, pl->shard, pl->place, pl->k));
  if (e->kind == EK_UNIFORM) {
    for (int r = 0; r < in->R; r++) s->ms[r] += sign * e->ms, s->b[r] += sign * e->bytes;
    for (int nd = 0; nd < in->N; nd++) s->h[nd] += sign * e->host_bytes * in->G;
  } else if (e->kind == EK_NODE) {
    for (int g = 0; g < in->G; g++) {
      int r = pl->node * in->G + g;
      s->ms[r] += sign * e->ms, s->b[r] += sign * e->bytes;
    }
    s->h[pl->node] += sign * e->host_bytes * in->G;
  } else {
    for (int j = 0; j < e->k; j++) {
      int r = e->shard == PLAN_SHARD_TW ? pl->rank : pl->cw_ranks[j];
      s->ms[r] += sign * e->ms, s->b[r] += sign * e->bytes, s->h[r / in->G] += sign * e->host_bytes;
    }
  }
}

/* Host bytes per node of plans into h (N entries). */
static void host_per_node(const emb_inst *in, const plan_table_plan *plans, double *h) {
  memset(h, 0, (size_t)in->N * sizeof *h);
  for (size_t i = 0; i < in->n; i++) {
    const plan_table_plan *pl = &plans[i];
    const emb_opt *e = EOPT(in, i, emb_opt_index(in, pl->shard, pl->place, pl->k));
    if (!(e->host_bytes > 0)) continue;
    if (e->kind == EK_UNIFORM)
      for (int nd = 0; nd < in->N; nd++) h[nd] += e->host_bytes * in->G;
    else if (e->kind == EK_NODE)
      h[pl->node] += e->host_bytes * in->G;
    else
      for (int j = 0; j < e->k; j++)
        h[(e->shard == PLAN_SHARD_TW ? pl->rank : pl->cw_ranks[j]) / in->G] += e->host_bytes;
  }
}

static int on_rank(const emb_inst *in, const plan_table_plan *pl, int r) {
  if (pl->shard == PLAN_SHARD_TW) return pl->rank == r;
  if (pl->shard == PLAN_SHARD_TWRW) return pl->node == r / in->G;
  if (pl->shard != PLAN_SHARD_CW) return 0; /* uniform: changing it moves no rank alone */
  for (int j = 0; j < pl->k; j++)
    if (pl->cw_ranks[j] == r) return 1;
  return 0;
}

/* Where option repair stops (no single re-option of a table on the slowest
 * rank lowers the maximum by itself: heavy 1000 x 512 seed 2, a 134.6 ms
 * table-wise table whose table-row-wise option adds 20 ms to 8 ranks that
 * are all near the maximum), re-option the biggest tables on the slowest
 * rank to their options of least total work, place them on the least
 * loaded ranks with room, and let the moves and swaps rebalance (the
 * freed rank takes pieces from the others); kept when the maximum drops.
 * Returns 1 when plans changed. */
int emb_kick(const emb_inst *in, plan_table_plan *plans, emb_budget *b) {
  plan_table_plan *cp = malloc((in->n ? in->n : 1) * sizeof *cp);
  tstate s = {.T = INFINITY,
              .cap = in->p->cap_bytes * (1 + 1e-12),
              .hcap = in->host_cap * (1 + 1e-12),
              .room_a = 1,
              .room_m = 1};
  plan_emb_result res = {0};
  int fits = 0, changed = 0;
  s.ms = malloc((size_t)in->R * sizeof *s.ms), s.b = malloc((size_t)in->R * sizeof *s.b);
  s.h = calloc((size_t)in->N, sizeof *s.h);
  if (!cp || !s.ms || !s.b || !s.h || tree_alloc(in, &s)) goto cleanup;
  for (int round = 0; round < 16; round++) {
    if (emb_eval(in, plans, &res, &fits, NULL) || !fits) goto cleanup;
    int top = 0;
    for (int r = 1; r < in->R; r++)
      if (res.rank_ms[r] > res.rank_ms[top]) top = r;
    double L = res.max_ms;
    size_t tried[3];
    int nt = 0, improved = 0;
    while (nt < 3 && !improved) {
      size_t t = (size_t)-1;
      double big = 0;
      for (size_t i = 0; i < in->n; i++) {
        int seen = 0;
        for (int q = 0; q < nt; q++) seen |= tried[q] == i;
        if (seen || !on_rank(in, &plans[i], top)) continue;
        const emb_opt *e =
            EOPT(in, i, emb_opt_index(in, plans[i].shard, plans[i].place, plans[i].k));
        if (e->ms > big) big = e->ms, t = i;
      }
      if (t == (size_t)-1) break;
      tried[nt++] = t;
      int cur = emb_opt_index(in, plans[t].shard, plans[t].place, plans[t].k);
      double wprev = -1;
      int oprev = -1;
      for (int pass = 0; pass < 3 && !improved; pass++) { /* the 3 options of least total work */
        int o = -1;
        double w = INFINITY;
        for (int q = 0; q < in->nopt; q++) {
          const emb_opt *e = EOPT(in, t, q);
          double tw = e->ms * pieces_of(in, e);
          if (!e->ok || q == cur || e->ms >= EOPT(in, t, cur)->ms) continue;
          if (tw < wprev || (tw == wprev && q <= oprev)) continue; /* tried before */
          if (tw < w) w = tw, o = q;
        }
        if (o < 0) break;
        wprev = w, oprev = o;
        if (emb_spend(b, 4.0 * (in->R + in->n))) goto cleanup;
        memcpy(cp, plans, in->n * sizeof *cp);
        memcpy(s.ms, res.rank_ms, (size_t)in->R * sizeof *s.ms);
        memcpy(s.b, res.rank_bytes, (size_t)in->R * sizeof *s.b);
        host_per_node(in, plans, s.h);
        account(in, &s, t, &cp[t], -1);
        tree_build(in, &s); /* its work is in the kick's units above */
        if (place_t(in, &s, t, o, &cp[t])) continue;
        emb_local_search(in, cp, b);
        int f2 = 0;
        plan_emb_result r2;
        if (emb_eval(in, cp, &r2, &f2, NULL)) goto cleanup;
        if (f2 && r2.max_ms < L * (1 - 1e-9)) {
          memcpy(plans, cp, in->n * sizeof *cp);
          improved = changed = 1;
        }
        plan_emb_result_dispose(&r2);
      }
    }
    plan_emb_result_dispose(&res);
    if (!improved) break;
  }
cleanup:
  plan_emb_result_dispose(&res);
  free(cp), free(s.ms), free(s.b), free(s.h), tree_free(&s);
  return changed;
}
