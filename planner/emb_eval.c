/* emb_eval.c: pricing a given assignment, the TorchRec-style greedy
 * baseline, LPT packing of chosen options, option repair and the
 * tie-break (the local search that improves a packing is emb_local.c).
 *
 * The greedy follows TorchRec's planner (EmbeddingShardingPlanner with the
 * GreedyPerfPartitioner): each table's options are proposed in order of
 * their total cost over all ranks ("perf"), tables are taken in order of
 * decreasing cost, and each shard goes to the least-loaded rank whose
 * memory still has room; a table whose cheapest option does not fit falls
 * back to its next proposal. It is both the warm start of the exact solve
 * and the baseline the bench compares against.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "planner/planner_int.h"

int emb_result_alloc(plan_emb_result *r, size_t n, int ranks, svc_err *err) {
  memset(r, 0, sizeof *r);
  r->n_tables = n, r->ranks = ranks;
  r->tables = calloc(n ? n : 1, sizeof *r->tables);
  r->rank_ms = calloc((size_t)ranks, sizeof *r->rank_ms);
  r->rank_bytes = calloc((size_t)ranks, sizeof *r->rank_bytes);
  r->greedy_ms = INFINITY;
  if (!r->tables || !r->rank_ms || !r->rank_bytes) {
    plan_emb_result_dispose(r);
    return svc_err_set(err, SVC_NOMEM, "", NULL);
  }
  return 0;
}

void plan_emb_result_dispose(plan_emb_result *r) {
  if (!r) return;
  free(r->tables), free(r->rank_ms), free(r->rank_bytes);
  memset(r, 0, sizeof *r);
}

static double pieces(const emb_inst *in, const emb_opt *e) {
  return e->kind == EK_UNIFORM ? in->R : e->kind == EK_NODE ? in->G : e->k;
}

int emb_eval(const emb_inst *in, const plan_table_plan *plans, plan_emb_result *res, int *fits,
             svc_err *err) {
  int rc = emb_result_alloc(res, in->n, in->R, err);
  if (rc) return rc;
  double u_ms = in->fixed_ms, u_b = 0, u_h = 0;
  double *nh = calloc((size_t)in->N, sizeof *nh); /* host bytes per node */
  if (!nh) {
    plan_emb_result_dispose(res);
    return svc_err_set(err, SVC_NOMEM, "", NULL);
  }
  for (size_t i = 0; i < in->n; i++) {
    const plan_table_plan *pl = &plans[i];
    int o = emb_opt_index(in, pl->shard, pl->place, pl->k);
    const emb_opt *e = o >= 0 ? EOPT(in, i, o) : NULL;
    if (!e || !e->allowed) {
      plan_emb_result_dispose(res);
      free(nh);
      return svc_err_set(err, SVC_BAD_FIELD, "sharding", "table '%s': %s%s is not allowed here",
                         in->t[i].name, plan_shard_name(pl->shard),
                         pl->place == PLAN_PLACE_HOST ? " (host placement)" : "");
    }
    res->tables[i] = *pl;
    if (e->kind == EK_UNIFORM) {
      u_ms += e->ms, u_b += e->bytes, u_h += e->host_bytes * in->G;
    } else if (e->kind == EK_NODE) {
      if (pl->node < 0 || pl->node >= in->N) goto bad_rank;
      nh[pl->node] += e->host_bytes * in->G;
      for (int g = 0; g < in->G; g++) {
        res->rank_ms[pl->node * in->G + g] += e->ms;
        res->rank_bytes[pl->node * in->G + g] += e->bytes;
      }
    } else {
      for (int j = 0; j < e->k; j++) {
        int r = e->shard == PLAN_SHARD_TW ? pl->rank : pl->cw_ranks[j];
        if (r < 0 || r >= in->R) goto bad_rank;
        res->rank_ms[r] += e->ms, res->rank_bytes[r] += e->bytes;
        nh[r / in->G] += e->host_bytes;
      }
    }
    continue;
  bad_rank:
    plan_emb_result_dispose(res);
    free(nh);
    return svc_err_set(err, SVC_BAD_FIELD, "sharding", "table '%s': rank or node out of range",
                       in->t[i].name);
  }
  int ok = 1;
  res->max_ms = 0;
  for (int r = 0; r < in->R; r++) {
    res->rank_ms[r] += u_ms, res->rank_bytes[r] += u_b;
    if (res->rank_ms[r] > res->max_ms) res->max_ms = res->rank_ms[r];
    if (res->rank_bytes[r] > in->p->cap_bytes * (1 + 1e-9)) ok = 0;
  }
  for (int nd = 0; nd < in->N; nd++)
    if (nh[nd] + u_h > in->host_cap * (1 + 1e-9)) ok = 0;
  free(nh);
  if (fits) *fits = ok;
  return 0;
}

/* ---- placing one table with a fixed option ------------------------------- */

/* Least-loaded rank with room for bytes (and host bytes on its node),
 * avoiding ranks in skip[0..ns). */
static int best_rank(const emb_inst *in, const emb_ranks *s, double bytes, double hbytes,
                     const int *skip, int ns) {
  int best = -1;
  for (int r = 0; r < in->R; r++) {
    if (s->b[r] + bytes > s->cap || (hbytes > 0 && s->h[r / in->G] + hbytes > s->hcap)) continue;
    int used = 0;
    for (int j = 0; j < ns; j++) used |= skip[j] == r;
    if (used) continue;
    if (best < 0 || s->ms[r] < s->ms[best] - 1e-12 ||
        (s->ms[r] <= s->ms[best] + 1e-12 && s->b[r] < s->b[best]))
      best = r;
  }
  return best;
}

int emb_add_uniform(const emb_inst *in, const emb_opt *e, double *ms, double *b, double *h,
                    double cap, double hcap) {
  double nodeh = e->host_bytes * in->G;
  for (int r = 0; r < in->R; r++)
    if (b[r] + e->bytes > cap) return -1;
  for (int nd = 0; nd < in->N && nodeh > 0; nd++)
    if (h[nd] + nodeh > hcap) return -1;
  for (int r = 0; r < in->R; r++) ms[r] += e->ms, b[r] += e->bytes;
  for (int nd = 0; nd < in->N; nd++) h[nd] += nodeh;
  return 0;
}

/* Place table i with option o into s, filling pl. 0, or -1 (s unchanged). */
static int place(const emb_inst *in, emb_ranks *s, size_t i, int o, plan_table_plan *pl) {
  const emb_opt *e = EOPT(in, i, o);
  memset(pl, 0, sizeof *pl);
  pl->shard = e->shard, pl->place = e->place, pl->k = e->k;
  double nodeh = e->host_bytes * in->G; /* a node option's host bytes per node */
  if (e->kind == EK_UNIFORM) return emb_add_uniform(in, e, s->ms, s->b, s->h, s->cap, s->hcap);
  if (e->kind == EK_NODE) {
    int best = -1;
    double best_max = INFINITY;
    for (int nd = 0; nd < in->N; nd++) {
      double mx = 0;
      int fit = nodeh <= 0 || s->h[nd] + nodeh <= s->hcap;
      for (int g = 0; g < in->G; g++) {
        int r = nd * in->G + g;
        fit &= s->b[r] + e->bytes <= s->cap;
        if (s->ms[r] > mx) mx = s->ms[r];
      }
      if (fit && mx < best_max) best = nd, best_max = mx;
    }
    if (best < 0) return -1;
    pl->node = best;
    s->h[best] += nodeh;
    for (int g = 0; g < in->G; g++) {
      int r = best * in->G + g;
      s->ms[r] += e->ms, s->b[r] += e->bytes;
    }
    return 0;
  }
  int got[PLAN_MAX_CW];
  for (int j = 0; j < e->k; j++) {
    /* shards of one table prefer distinct ranks, but may share one */
    int r = best_rank(in, s, e->bytes, e->host_bytes, got, j < in->R ? j : 0);
    if (r < 0) r = best_rank(in, s, e->bytes, e->host_bytes, NULL, 0);
    if (r < 0) {
      for (int q = 0; q < j; q++)
        s->ms[got[q]] -= e->ms, s->b[got[q]] -= e->bytes, s->h[got[q] / in->G] -= e->host_bytes;
      return -1;
    }
    got[j] = r;
    s->ms[r] += e->ms, s->b[r] += e->bytes, s->h[r / in->G] += e->host_bytes;
  }
  if (e->shard == PLAN_SHARD_TW)
    pl->rank = got[0];
  else
    memcpy(pl->cw_ranks, got, (size_t)e->k * sizeof *got);
  return 0;
}

int emb_ranks_new(const emb_inst *in, emb_ranks *s) {
  s->ms = calloc((size_t)in->R, sizeof *s->ms);
  s->b = calloc((size_t)in->R, sizeof *s->b);
  s->h = calloc((size_t)in->N, sizeof *s->h);
  s->cap = in->p->cap_bytes * (1 + 1e-12);
  s->hcap = in->host_cap * (1 + 1e-12);
  return s->ms && s->b && s->h ? 0 : -1;
}

void emb_ranks_free(emb_ranks *s) { free(s->ms), free(s->b), free(s->h); }

/* s's per-node host bytes of plans (the rank arrays come from emb_eval). */
void emb_host_fill(const emb_inst *in, const plan_table_plan *plans, emb_ranks *s) {
  memset(s->h, 0, (size_t)in->N * sizeof *s->h);
  for (size_t i = 0; i < in->n; i++) {
    const plan_table_plan *pl = &plans[i];
    const emb_opt *e = EOPT(in, i, emb_opt_index(in, pl->shard, pl->place, pl->k));
    if (!(e->host_bytes > 0)) continue;
    if (e->kind == EK_UNIFORM)
      for (int nd = 0; nd < in->N; nd++) s->h[nd] += e->host_bytes * in->G;
    else if (e->kind == EK_NODE)
      s->h[pl->node] += e->host_bytes * in->G;
    else
      for (int j = 0; j < e->k; j++)
        s->h[(e->shard == PLAN_SHARD_TW ? pl->rank : pl->cw_ranks[j]) / in->G] += e->host_bytes;
  }
}

int emb_by_key_desc(const void *a, const void *b) {
  const emb_keyed *x = a, *y = b;
  if (x->key != y->key) return x->key > y->key ? -1 : 1;
  if (x->i != y->i) return x->i < y->i ? -1 : 1;
  return x->o - y->o;
}

static int by_key_asc(const void *a, const void *b) { return -emb_by_key_desc(a, b); }

/* mode 0: TorchRec's order (perf); mode 1: memory first -- tables by
 * decreasing footprint, options by increasing footprint (a first-fit
 * decreasing packing that finds a fit where the perf order runs out of
 * memory; used as a warm start, never as the baseline). */
static int greedy(const emb_inst *in, plan_table_plan *plans, int mode, svc_err *err) {
  emb_ranks s = {0};
  emb_keyed *ord = malloc((in->n ? in->n : 1) * sizeof *ord);
  emb_keyed cand[64];
  int rc = 0;
  if (!ord || emb_ranks_new(in, &s)) {
    rc = svc_err_set(err, SVC_NOMEM, "", NULL);
    goto cleanup;
  }
  for (size_t i = 0; i < in->n; i++) {
    double best = INFINITY;
    for (int o = 0; o < in->nopt; o++) {
      const emb_opt *e = EOPT(in, i, o);
      double v = mode ? e->bytes : e->ms * pieces(in, e);
      if (e->ok && v < best) best = v;
    }
    ord[i] = (emb_keyed){.key = isfinite(best) ? best : 0, .i = i};
  }
  qsort(ord, in->n, sizeof *ord, emb_by_key_desc);
  for (size_t q = 0; q < in->n; q++) {
    size_t i = ord[q].i;
    int nc = 0;
    for (int o = 0; o < in->nopt && nc < 64; o++) {
      const emb_opt *e = EOPT(in, i, o);
      double key = mode ? e->bytes * pieces(in, e) + 1e-6 * e->ms : e->ms * pieces(in, e);
      if (e->ok) cand[nc++] = (emb_keyed){.key = key, .i = i, .o = o};
    }
    qsort(cand, (size_t)nc, sizeof *cand, by_key_asc);
    int placed = 0;
    for (int c = 0; c < nc && !placed; c++) placed = place(in, &s, i, cand[c].o, &plans[i]) == 0;
    if (!placed) {
      char need[32], cap[32];
      emb_fmt_gb(need, sizeof need, emb_min_bytes_per_gpu(in));
      emb_fmt_gb(cap, sizeof cap, in->p->cap_bytes);
      char host[32];
      emb_fmt_gb(host, sizeof host, in->host_cap);
      if (in->p->allow_host)
        rc = svc_err_set(err, SVC_INFEASIBLE, "workload.tables",
                         "HBM + host memory: table '%s' fits on no GPU under any allowed sharding, "
                         "in HBM or in host memory (%s per node) with the tables placed before it "
                         "(the tables need at least %s of HBM per GPU; %s usable for embeddings)",
                         in->t[i].name, host, need, cap);
      else
        rc = svc_err_set(err, SVC_INFEASIBLE, "workload.tables",
                         "HBM capacity: table '%s' fits on no GPU under any allowed sharding "
                         "(the tables need at least %s per GPU; %s usable for embeddings)",
                         in->t[i].name, need, cap);
      goto cleanup;
    }
  }
cleanup:
  emb_ranks_free(&s);
  free(ord);
  return rc;
}

int emb_greedy(const emb_inst *in, plan_table_plan *plans, svc_err *err) {
  return greedy(in, plans, 0, err);
}

int emb_greedy_mem(const emb_inst *in, plan_table_plan *plans, svc_err *err) {
  return greedy(in, plans, 1, err);
}

/* Place table i with option o, or, when repair is on and o does not fit,
 * with the option of least total work that does (a memory-light one: a
 * split, or host placement). 1 when repaired, 0 as chosen, -1 nothing fits. */
static int place_or_repair(const emb_inst *in, emb_ranks *s, size_t i, int o, int repair,
                           plan_table_plan *pl) {
  if (!place(in, s, i, o, pl)) return 0;
  if (!repair) return -1;
  emb_keyed cand[64];
  int nc = 0;
  for (int q = 0; q < in->nopt && nc < 64; q++) {
    const emb_opt *e = EOPT(in, i, q);
    if (q != o && e->ok) cand[nc++] = (emb_keyed){.key = e->ms * pieces(in, e), .i = i, .o = q};
  }
  qsort(cand, (size_t)nc, sizeof *cand, by_key_asc);
  for (int c = 0; c < nc; c++)
    if (!place(in, s, i, cand[c].o, pl)) return 1;
  return -1;
}

int emb_pack(const emb_inst *in, const int *choice, plan_table_plan *plans, int mode) {
  emb_ranks s = {0};
  emb_keyed *ord = malloc((in->n ? in->n : 1) * sizeof *ord);
  int rc = 0, repaired = 0;
  if (!ord || emb_ranks_new(in, &s)) {
    rc = -1;
    goto cleanup;
  }
  /* uniform first (they load every rank alike), then node items, then
   * single-rank pieces by decreasing size (LPT), a piece's size being the
   * larger of its share of the average load and of the capacity (a table
   * that is light but fills most of a GPU goes early, while there is room).
   * Memory first (EMB_PACK_MEMORY): every piece by decreasing HBM + host
   * footprint (first-fit decreasing on memory), the load second. */
  double avg = 0;
  for (size_t i = 0; i < in->n; i++) {
    const emb_opt *e = EOPT(in, i, choice[i]);
    avg += e->ms * pieces(in, e) / in->R;
  }
  if (!(avg > 0)) avg = 1;
  for (size_t i = 0; i < in->n; i++) {
    const emb_opt *e = EOPT(in, i, choice[i]);
    double mem = e->bytes / in->p->cap_bytes + e->host_bytes / in->host_cap;
    double key = mode == EMB_PACK_MEMORY ? (e->kind == EK_UNIFORM ? 1e300 : mem * 1e6 + e->ms / avg)
                 : e->kind == EK_UNIFORM ? 1e300
                 : e->kind == EK_NODE    ? 1e299
                                         : fmax(e->ms / avg, e->bytes / in->p->cap_bytes);
    ord[i] = (emb_keyed){.key = key, .i = i, .o = choice[i]};
  }
  qsort(ord, in->n, sizeof *ord, emb_by_key_desc);
  for (size_t q = 0; q < in->n && rc >= 0; q++) {
    int r = place_or_repair(in, &s, ord[q].i, ord[q].o, mode != EMB_PACK_PLAIN, &plans[ord[q].i]);
    if (r < 0) rc = -1;
    repaired += r > 0;
  }
  if (rc == 0) rc = repaired;
cleanup:
  emb_ranks_free(&s);
  free(ord);
  return rc;
}

/* ---- option repair ---------------------------------------------------------- */

/* Subtract (sign -1) or add (+1) table i's plan to the rank arrays. */
static void apply(const emb_inst *in, emb_ranks *s, size_t i, const plan_table_plan *pl,
                  double sign) {
  int o = emb_opt_index(in, pl->shard, pl->place, pl->k);
  const emb_opt *e = EOPT(in, i, o);
  if (e->kind == EK_UNIFORM) {
    for (int r = 0; r < in->R; r++) s->ms[r] += sign * e->ms, s->b[r] += sign * e->bytes;
    for (int nd = 0; nd < in->N; nd++) s->h[nd] += sign * e->host_bytes * in->G;
  } else if (e->kind == EK_NODE) {
    for (int g = 0; g < in->G; g++)
      s->ms[pl->node * in->G + g] += sign * e->ms, s->b[pl->node * in->G + g] += sign * e->bytes;
    s->h[pl->node] += sign * e->host_bytes * in->G;
  } else {
    for (int j = 0; j < e->k; j++) {
      int r = e->shard == PLAN_SHARD_TW ? pl->rank : pl->cw_ranks[j];
      s->ms[r] += sign * e->ms, s->b[r] += sign * e->bytes, s->h[r / in->G] += sign * e->host_bytes;
    }
  }
}

static int touches(const emb_inst *in, const plan_table_plan *pl, int r) {
  if (pl->shard == PLAN_SHARD_TW) return pl->rank == r;
  if (pl->shard == PLAN_SHARD_CW) {
    for (int j = 0; j < pl->k; j++)
      if (pl->cw_ranks[j] == r) return 1;
    return 0;
  }
  if (pl->shard == PLAN_SHARD_TWRW) return pl->node == r / in->G;
  return 1;
}

static double max_of(const double *v, int n) {
  double m = 0;
  for (int i = 0; i < n; i++) m = fmax(m, v[i]);
  return m;
}

/* Re-choose the option of the heaviest table on the slowest rank (split a
 * table-wise table column-wise or row-wise, move it to host, ...) while
 * that lowers the maximum. Complements emb_local_search, which keeps each
 * table's option. */
void emb_repair_options(const emb_inst *in, plan_table_plan *plans, emb_budget *b) {
  emb_ranks s = {0}, t = {0};
  plan_emb_result res;
  int fits = 0;
  if (emb_eval(in, plans, &res, &fits, NULL)) return;
  if (emb_ranks_new(in, &s) || emb_ranks_new(in, &t)) goto cleanup;
  memcpy(s.ms, res.rank_ms, (size_t)in->R * sizeof *s.ms);
  memcpy(s.b, res.rank_bytes, (size_t)in->R * sizeof *s.b);
  emb_host_fill(in, plans, &s);
  for (int iter = 0; iter < 2000 && !emb_spend(b, (double)in->n + in->R); iter++) {
    int top = 0;
    for (int r = 1; r < in->R; r++)
      if (s.ms[r] > s.ms[top]) top = r;
    double L = s.ms[top];
    /* the tables on top, biggest non-uniform share first: the first whose
     * new option lowers the maximum is changed */
    int improved = 0, phase = 0;
    size_t tried[16];
    int ntried = 0;
    /* phase 1: the uniform tables (data-parallel, row-wise), whose work
     * every rank pays: one placed elsewhere lowers the slowest rank by its
     * share where another rank has the room (heavy 100 x 64 / 128, whose
     * slowest rank is one big piece beside the uniform work, 2026-12-05) */
    while (!improved && ntried < 16) {
      size_t best_t = (size_t)-1;
      double best_share = 0;
      for (size_t i = 0; i < in->n; i++) {
        const plan_table_plan *pl = &plans[i];
        int uni = pl->shard == PLAN_SHARD_DP || pl->shard == PLAN_SHARD_RW;
        if (uni != phase || !touches(in, pl, top)) continue;
        int seen = 0;
        for (int q = 0; q < ntried; q++) seen |= tried[q] == i;
        const emb_opt *e = EOPT(in, i, emb_opt_index(in, pl->shard, pl->place, pl->k));
        if (!seen && e->ms > best_share) best_share = e->ms, best_t = i;
      }
      if (best_t == (size_t)-1 || (phase == 0 && ntried == 8)) {
        if (phase++) break;
        continue;
      }
      tried[ntried++] = best_t;
      apply(in, &s, best_t, &plans[best_t], -1);
      plan_table_plan cand, best_pl = plans[best_t];
      double best_L = L;
      for (int o = 0; o < in->nopt; o++) {
        if (!EOPT(in, best_t, o)->ok) continue;
        if (emb_spend(b, 3.0 * in->R)) break;
        memcpy(t.ms, s.ms, (size_t)in->R * sizeof *t.ms);
        memcpy(t.b, s.b, (size_t)in->R * sizeof *t.b);
        memcpy(t.h, s.h, (size_t)in->N * sizeof *t.h);
        t.cap = s.cap;
        if (place(in, &t, best_t, o, &cand)) continue;
        double m = max_of(t.ms, in->R);
        if (m < best_L - 1e-9) best_L = m, best_pl = cand;
      }
      plans[best_t] = best_pl;
      apply(in, &s, best_t, &plans[best_t], +1);
      improved = best_L < L - 1e-9;
    }
    if (!improved) break;
  }
cleanup:
  emb_ranks_free(&s), emb_ranks_free(&t);
  plan_emb_result_dispose(&res);
}

/* ---- tie-breaking ------------------------------------------------------------ */

/* The objective is the slowest rank only, so every other rank's choices
 * are free: a MILP or a repair may leave a tiny table in host memory or
 * split it for nothing. The second objective, with the first held within
 * PLAN_TIE_TOL (no rank may exceed the maximum by more, nor cap_ms: the
 * greedy's, so the answer stays no worse), orders options by
 *  1. rule breaks: a host placement, a split (row-wise, column-wise,
 *     table-row-wise) of a table under PLAN_SMALL_TABLE_ROWS rows;
 *  2. total work and communication over the ranks it touches;
 *  3. any split;
 * and re-chooses each table's option and ranks while one is better. */
static int is_split(const emb_opt *e) {
  return e->shard == PLAN_SHARD_RW || e->shard == PLAN_SHARD_CW || e->shard == PLAN_SHARD_TWRW;
}

static int rule_breaks(const emb_inst *in, size_t i, const emb_opt *e) {
  return (e->place == PLAN_PLACE_HOST) + (is_split(e) && in->t[i].rows < PLAN_SMALL_TABLE_ROWS);
}

/* 1 when option a of table i is strictly better than b by the order above. */
static int tidier(const emb_inst *in, size_t i, const emb_opt *a, const emb_opt *b) {
  int ra = rule_breaks(in, i, a), rb = rule_breaks(in, i, b);
  if (ra != rb) return ra < rb;
  double wa = a->ms * pieces(in, a), wb = b->ms * pieces(in, b);
  if (fabs(wa - wb) > 1e-9 * fmax(wa, wb)) return wa < wb;
  return is_split(a) < is_split(b);
}

static double touched_max(const emb_inst *in, const emb_ranks *s, const plan_table_plan *pl) {
  double m = 0;
  if (pl->shard == PLAN_SHARD_TW) return s->ms[pl->rank];
  if (pl->shard == PLAN_SHARD_CW) {
    for (int j = 0; j < pl->k; j++) m = fmax(m, s->ms[pl->cw_ranks[j]]);
    return m;
  }
  if (pl->shard == PLAN_SHARD_TWRW) {
    for (int g = 0; g < in->G; g++) m = fmax(m, s->ms[pl->node * in->G + g]);
    return m;
  }
  return max_of(s->ms, in->R);
}

int emb_tidy(const emb_inst *in, plan_table_plan *plans, double cap_ms, emb_budget *b) {
  emb_ranks s = {0};
  plan_emb_result res;
  int fits = 0, moved = 0;
  if (emb_eval(in, plans, &res, &fits, NULL)) return 0;
  if (!fits || emb_ranks_new(in, &s)) goto cleanup;
  memcpy(s.ms, res.rank_ms, (size_t)in->R * sizeof *s.ms);
  memcpy(s.b, res.rank_bytes, (size_t)in->R * sizeof *s.b);
  emb_host_fill(in, plans, &s);
  double lim = fmin(res.max_ms * (1 + PLAN_TIE_TOL), fmax(cap_ms, res.max_ms));
  for (int pass = 0; pass < 4; pass++) {
    int changed = 0;
    for (size_t i = 0; i < in->n; i++) {
      if (emb_spend(b, (double)in->nopt)) goto cleanup;
      int cur = emb_opt_index(in, plans[i].shard, plans[i].place, plans[i].k);
      const emb_opt *best = EOPT(in, i, cur);
      plan_table_plan best_pl = plans[i], cand;
      apply(in, &s, i, &plans[i], -1);
      for (int o = 0; o < in->nopt; o++) {
        const emb_opt *e = EOPT(in, i, o);
        if (o == cur || !e->ok || !tidier(in, i, e, best)) continue;
        b->work -= in->R; /* charged with the next table's emb_spend */
        if (place(in, &s, i, o, &cand)) continue;
        int under = touched_max(in, &s, &cand) <= lim;
        apply(in, &s, i, &cand, -1);
        if (under) best = e, best_pl = cand;
      }
      changed |= best != EOPT(in, i, cur);
      plans[i] = best_pl;
      apply(in, &s, i, &plans[i], +1);
    }
    moved += changed;
    if (!changed) break;
  }
cleanup:
  emb_ranks_free(&s);
  plan_emb_result_dispose(&res);
  return moved;
}

int emb_placements(const emb_inst *in, size_t t, plan_table_plan *out, int cap) {
  int n = 0;
  for (int o = 0; o < in->nopt; o++) {
    const emb_opt *e = EOPT(in, t, o);
    if (!e->ok) continue;
    plan_table_plan b = {.shard = e->shard, .place = e->place, .k = e->k};
    if (e->kind == EK_UNIFORM) {
      if (n == cap) return -1;
      out[n++] = b;
    } else if (e->kind == EK_NODE) {
      for (int nd = 0; nd < in->N; nd++) {
        if (n == cap) return -1;
        b.node = nd, out[n++] = b;
      }
    } else if (e->shard == PLAN_SHARD_TW) {
      for (int r = 0; r < in->R; r++) {
        if (n == cap) return -1;
        b.rank = r, out[n++] = b;
      }
    } else { /* CW: multisets of k ranks (nondecreasing sequences) */
      int idx[PLAN_MAX_CW] = {0};
      for (;;) {
        if (n == cap) return -1;
        memcpy(b.cw_ranks, idx, sizeof idx);
        out[n++] = b;
        int j = e->k - 1;
        while (j >= 0 && idx[j] == in->R - 1) j--;
        if (j < 0) break;
        idx[j]++;
        for (int q = j + 1; q < e->k; q++) idx[q] = idx[j];
      }
    }
  }
  return n;
}
