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
 * caller bisects on T. emb_kick (below) improves a packing where option
 * repair and the moves stop.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "planner/planner_int.h"

typedef struct {
  double *ms, *b, *h;
  double T, cap, hcap;
  double room_a, room_m; /* per-rank room left by the uniform work */
} tstate;

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
    if (max_ms(in, s) + e->ms > s->T) return -1;
    for (int r = 0; r < in->R; r++)
      if (s->b[r] + e->bytes > s->cap) return -1;
    for (int nd = 0; nd < in->N && nodeh > 0; nd++)
      if (s->h[nd] + nodeh > s->hcap) return -1;
    for (int r = 0; r < in->R; r++) s->ms[r] += e->ms, s->b[r] += e->bytes;
    for (int nd = 0; nd < in->N; nd++) s->h[nd] += nodeh;
    return 0;
  }
  if (e->kind == EK_NODE) {
    int best = -1;
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
    return 0;
  }
  int got[PLAN_MAX_CW];
  for (int j = 0; j < e->k; j++) {
    int best = -1, best_shared = 1;
    double best_score = -INFINITY;
    for (int r = 0; r < in->R; r++) {
      if (s->ms[r] + e->ms > s->T || s->b[r] + e->bytes > s->cap ||
          (e->host_bytes > 0 && s->h[r / in->G] + e->host_bytes > s->hcap))
        continue;
      int shared = 0; /* shards of one table prefer distinct ranks */
      for (int q = 0; q < j; q++) shared |= got[q] == r;
      /* the rank left least full in its fuller dimension (load against
       * T, HBM against the capacity): LPT where memory is loose, and
       * memory-heavy pieces beside load-heavy ones where it is not */
      double score = isfinite(s->T)
                         ? -fmax((s->ms[r] + e->ms) / s->T, (s->b[r] + e->bytes) / s->cap)
                         : -s->ms[r];
      if (best < 0 || shared < best_shared || (shared == best_shared && score > best_score))
        best = r, best_score = score, best_shared = shared;
    }
    if (best < 0) {
      for (int q = 0; q < j; q++)
        s->ms[got[q]] -= e->ms, s->b[got[q]] -= e->bytes, s->h[got[q] / in->G] -= e->host_bytes;
      return -1;
    }
    got[j] = best;
    s->ms[best] += e->ms, s->b[best] += e->bytes, s->h[best / in->G] += e->host_bytes;
  }
  if (e->shard == PLAN_SHARD_TW)
    pl->rank = got[0];
  else
    memcpy(pl->cw_ranks, got, (size_t)e->k * sizeof *got);
  return 0;
}

typedef struct {
  double key;
  size_t i;
} tkey;

static int by_key_desc(const void *x, const void *y) {
  const tkey *a = x, *b = y;
  if (a->key != b->key) return a->key > b->key ? -1 : 1;
  return a->i < b->i ? -1 : a->i > b->i;
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

int emb_pack_target(const emb_inst *in, int *choice, double T, double fill, plan_table_plan *plans,
                    emb_budget *bud, int *repaired) {
  tstate s = {.T = T, .cap = in->p->cap_bytes * (1 + 1e-12), .hcap = in->host_cap * (1 + 1e-12)};
  tkey *ord = malloc((in->n ? in->n : 1) * sizeof *ord);
  int rc = -1;
  size_t no = 0;
  *repaired = 0;
  s.ms = calloc((size_t)in->R, sizeof *s.ms);
  s.b = calloc((size_t)in->R, sizeof *s.b);
  s.h = calloc((size_t)in->N, sizeof *s.h);
  if (!ord || !s.ms || !s.b || !s.h) goto cleanup;
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
  for (size_t i = 0; i < in->n; i++) {
    const emb_opt *e = EOPT(in, i, choice[i]);
    if (e->kind == EK_UNIFORM) continue;
    double key = fmax(e->ms / s.room_a, e->bytes / s.room_m);
    if (e->host_bytes > 0) key = fmax(key, e->host_bytes / s.hcap);
    ord[no++] = (tkey){.key = key, .i = i};
  }
  qsort(ord, no, sizeof *ord, by_key_desc);
  int over = 0;
  /* a placement scans the ranks once: R/8 units, as emb_pack's LPT (a rank
   * test here costs about an eighth of a move's step in the local search:
   * 2.4e8 units went in 0.47 s at R each, heavy 3000 x 1024) */
  for (size_t q = 0; q < no; q++) {
    size_t i = ord[q].i;
    if (emb_spend(bud, in->R / 8.0)) goto cleanup;
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
      if (soft && emb_spend(bud, in->R / 8.0)) goto cleanup;
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
        if (emb_spend(bud, in->R / 8.0)) goto cleanup;
        done = !place_t(in, &s, i, best, &plans[i]);
      }
      over |= soft && done;
    }
    s.T = T;
    if (!done) goto cleanup;
  }
  rc = over;
cleanup:
  free(ord), free(s.ms), free(s.b), free(s.h);
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
  if (!cp || !s.ms || !s.b || !s.h) goto cleanup;
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
  free(cp), free(s.ms), free(s.b), free(s.h);
  return changed;
}
