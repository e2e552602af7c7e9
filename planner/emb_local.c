/* emb_local.c: local search on a packing, each table's option kept.
 *
 * From the slowest rank: move one of its pieces to a rank where it lands
 * below the maximum, swap it with a smaller piece elsewhere, move or swap a
 * table-row-wise table's node; stop when none of these lowers that rank.
 * Every step is charged to the work budget (emb_spend), so the answer does
 * not depend on the CPU share. Split out of emb_eval.c (issue 24, eighth
 * pass), which had grown past the size limit.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "planner/planner_int.h"

typedef struct {
  size_t t;
  int j; /* shard index (CW) or 0 */
  double ms, b, h;
} piece;

/* Host memory allows piece a to leave node na for nb, and c (or none) to come back. */
static int host_ok(const emb_inst *in, const emb_ranks *s, const piece *a, int ra, int rb,
                   const piece *c) {
  int na = ra / in->G, nb = rb / in->G;
  if (na == nb) return 1;
  double back = c ? c->h : 0;
  return s->h[nb] + a->h - back <= s->hcap && s->h[na] - a->h + back <= s->hcap;
}

static void host_move(const emb_inst *in, emb_ranks *s, double h, int from, int to) {
  s->h[from / in->G] -= h, s->h[to / in->G] += h;
}

static int *piece_rank(plan_table_plan *plans, const piece *pc) {
  plan_table_plan *pl = &plans[pc->t];
  return pl->shard == PLAN_SHARD_TW ? &pl->rank : &pl->cw_ranks[pc->j];
}

int emb_spend(emb_budget *b, double units) {
  b->work -= units;
  if (b->work < 0) return b->work_hit = 1;
  if (svc_now() > b->deadline) return b->time_hit = 1;
  return 0;
}

/* The slowest and the fullest rank of node nd. */
static void node_max(const emb_inst *in, const emb_ranks *s, int nd, double *ms, double *b) {
  *ms = 0, *b = 0;
  for (int g = 0; g < in->G; g++)
    *ms = emb_max(*ms, s->ms[nd * in->G + g]), *b = emb_max(*b, s->b[nd * in->G + g]);
}

static void node_shift(const emb_inst *in, emb_ranks *s, int nd, double ms, double b, double h) {
  for (int g = 0; g < in->G; g++) s->ms[nd * in->G + g] += ms, s->b[nd * in->G + g] += b;
  s->h[nd] += h;
}

/* A table-row-wise table (its piece on every rank of one node) on the
 * slowest rank's node moves to the node where it lands lowest below L, or
 * swaps nodes with a smaller one of them; 1 when one did. Item moves do
 * not reach them, and a rank with two or three of them beside the uniform
 * work was the slowest of heavy 1000 x 1024 (seeds 1-3, 2026-12-05). */
static int node_move(const emb_inst *in, plan_table_plan *plans, emb_ranks *s, int top,
                     emb_budget *b) {
  int na = top / in->G;
  double L = s->ms[top];
  for (size_t a = 0; a < in->n; a++) {
    const emb_opt *ea = EOPT(in, a, emb_opt_index(in, plans[a].shard, plans[a].place, plans[a].k));
    if (ea->kind != EK_NODE || plans[a].node != na) continue;
    double ha = ea->host_bytes * in->G;
    if (emb_spend(b, (double)in->R)) return 0;
    int nb = -1;
    double best = INFINITY;
    for (int nd = 0; nd < in->N; nd++) {
      double mx, mb;
      if (nd == na) continue;
      node_max(in, s, nd, &mx, &mb);
      if (mx + ea->ms < L - 1e-9 && mb + ea->bytes <= s->cap && s->h[nd] + ha <= s->hcap &&
          mx < best)
        best = mx, nb = nd;
    }
    if (nb >= 0) {
      node_shift(in, s, na, -ea->ms, -ea->bytes, -ha);
      node_shift(in, s, nb, ea->ms, ea->bytes, ha);
      plans[a].node = nb;
      return 1;
    }
    for (size_t c = 0; c < in->n; c++) {
      if (plans[c].shard != PLAN_SHARD_TWRW || plans[c].node == na) continue;
      const emb_opt *ec =
          EOPT(in, c, emb_opt_index(in, plans[c].shard, plans[c].place, plans[c].k));
      double d = ea->ms - ec->ms, hc = ec->host_bytes * in->G, mx, mb, ma, mab;
      if (ec->kind != EK_NODE || d <= 1e-9) continue;
      if (emb_spend(b, 2.0 * in->G)) return 0;
      int nc = plans[c].node;
      node_max(in, s, nc, &mx, &mb);
      node_max(in, s, na, &ma, &mab);
      if (mx + d < L - 1e-9 && mb + ea->bytes - ec->bytes <= s->cap &&
          mab + ec->bytes - ea->bytes <= s->cap && s->h[nc] + ha - hc <= s->hcap &&
          s->h[na] + hc - ha <= s->hcap) {
        node_shift(in, s, na, -d, ec->bytes - ea->bytes, hc - ha);
        node_shift(in, s, nc, d, ea->bytes - ec->bytes, ha - hc);
        plans[a].node = nc, plans[c].node = na;
        return 1;
      }
    }
  }
  return 0;
}

void emb_local_search(const emb_inst *in, plan_table_plan *plans, emb_budget *b) {
  size_t np = 0, cap = 0;
  piece *pc = NULL;
  emb_ranks s = {0};
  plan_emb_result res;
  int fits = 0;
  if (emb_eval(in, plans, &res, &fits, NULL)) return;
  if (emb_ranks_new(in, &s)) goto cleanup;
  memcpy(s.ms, res.rank_ms, (size_t)in->R * sizeof *s.ms);
  memcpy(s.b, res.rank_bytes, (size_t)in->R * sizeof *s.b);
  emb_host_fill(in, plans, &s);
  for (size_t i = 0; i < in->n; i++) {
    int o = emb_opt_index(in, plans[i].shard, plans[i].place, plans[i].k);
    const emb_opt *e = EOPT(in, i, o);
    if (e->kind != EK_ITEM) continue;
    for (int j = 0; j < e->k; j++) {
      if (np == cap) {
        cap = cap ? cap * 2 : 256;
        piece *n2 = realloc(pc, cap * sizeof *pc);
        if (!n2) goto cleanup;
        pc = n2;
      }
      pc[np++] = (piece){.t = i, .j = j, .ms = e->ms, .b = e->bytes, .h = e->host_bytes};
    }
  }
  for (int iter = 0; iter < 100000; iter++) {
    if (emb_spend(b, (double)in->R + (double)np)) break;
    int top = 0;
    for (int r = 1; r < in->R; r++)
      if (s.ms[r] > s.ms[top]) top = r;
    double L = s.ms[top];
    int improved = 0;
    /* move: the biggest piece on top that lands below L elsewhere */
    for (size_t a = 0; a < np && !improved; a++) {
      int *ra = piece_rank(plans, &pc[a]);
      if (*ra != top) continue;
      if (emb_spend(b, (double)in->R)) goto cleanup;
      int r2 = -1;
      for (int r = 0; r < in->R; r++)
        if (r != top && s.b[r] + pc[a].b <= s.cap && s.ms[r] + pc[a].ms < L - 1e-9 &&
            (r2 < 0 || s.ms[r] < s.ms[r2]) && host_ok(in, &s, &pc[a], top, r, NULL))
          r2 = r;
      if (r2 >= 0) {
        host_move(in, &s, pc[a].h, top, r2);
        s.ms[top] -= pc[a].ms, s.b[top] -= pc[a].b;
        s.ms[r2] += pc[a].ms, s.b[r2] += pc[a].b;
        *ra = r2;
        improved = 1;
      }
    }
    /* swap: a big piece on top with a smaller one elsewhere */
    for (size_t a = 0; a < np && !improved; a++) {
      int *ra = piece_rank(plans, &pc[a]);
      if (*ra != top) continue;
      if (emb_spend(b, (double)np)) goto cleanup;
      for (size_t c = 0; c < np && !improved; c++) {
        int *rc = piece_rank(plans, &pc[c]);
        int r2 = *rc;
        double d = pc[a].ms - pc[c].ms;
        if (r2 == top || d <= 1e-9) continue;
        if (s.ms[r2] + d < L - 1e-9 && s.b[r2] - pc[c].b + pc[a].b <= s.cap &&
            s.b[top] - pc[a].b + pc[c].b <= s.cap && host_ok(in, &s, &pc[a], top, r2, &pc[c])) {
          host_move(in, &s, pc[a].h - pc[c].h, top, r2);
          s.ms[top] -= d, s.ms[r2] += d;
          s.b[top] += pc[c].b - pc[a].b, s.b[r2] += pc[a].b - pc[c].b;
          *ra = r2, *rc = top;
          improved = 1;
        }
      }
    }
    if (!improved) improved = node_move(in, plans, &s, top, b);
    if (!improved) break;
  }
cleanup:
  free(pc);
  emb_ranks_free(&s);
  plan_emb_result_dispose(&res);
}
