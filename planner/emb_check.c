/* planner/emb_check.c: the embedding problem's insides made visible to
 * checks and benchmarks without opening planner_int.h: brute force over
 * every assignment (the exact solver's cross-check), the decomposition's
 * root LP alone (bench/planner --lp) and what each table's planned option
 * costs (bench/planner's PLAN_DIAG). Each builds its own emb_inst, so the
 * answers are those the solver itself prices.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/planner_int.h"

int plan_emb_brute_force(const plan_emb_problem *p, const plan_table *tables, size_t n, int cap,
                         double *best, svc_err *err) {
  emb_inst in;
  plan_table_plan *opts[PLAN_BRUTE_MAX_TABLES] = {NULL}, cur[PLAN_BRUTE_MAX_TABLES];
  int cnt[PLAN_BRUTE_MAX_TABLES], idx[PLAN_BRUTE_MAX_TABLES] = {0}, rc;
  *best = INFINITY;
  if (n < 1 || n > PLAN_BRUTE_MAX_TABLES || cap < 1)
    return svc_err_set(err, SVC_BAD_FIELD, "tables", "brute force takes 1 to %d tables",
                       PLAN_BRUTE_MAX_TABLES);
  if ((rc = emb_inst_init(&in, p, tables, n, err))) return rc;
  for (size_t t = 0; t < n && !rc; t++) {
    if (!(opts[t] = malloc((size_t)cap * sizeof *opts[t])))
      rc = svc_err_set(err, SVC_NOMEM, "", NULL);
    else if ((cnt[t] = emb_placements(&in, t, opts[t], cap)) < 0)
      rc = svc_err_set(err, SVC_TOO_LARGE, "tables", "table %zu has more than %d placements", t,
                       cap);
    else if (cnt[t] == 0)
      goto cleanup; /* a table that fits nowhere: no assignment fits */
  }
  for (; !rc;) {
    for (size_t t = 0; t < n; t++) cur[t] = opts[t][idx[t]];
    plan_emb_result r;
    int fits = 0;
    if ((rc = emb_eval(&in, cur, &r, &fits, err))) break;
    if (fits && r.max_ms < *best) *best = r.max_ms;
    plan_emb_result_dispose(&r);
    size_t t = 0;
    while (t < n && ++idx[t] == cnt[t]) idx[t++] = 0;
    if (t == n) break;
  }
cleanup:
  for (size_t t = 0; t < n; t++) free(opts[t]);
  emb_inst_dispose(&in);
  return rc;
}

int plan_emb_root_lp(const plan_emb_problem *p, const plan_table *tables, size_t n, int lp_method,
                     double time_limit_s, plan_emb_lp_info *out, svc_err *err) {
  emb_inst in;
  plan_emb_result gr;
  double warm = INFINITY;
  int fits = 0, rc;
  memset(out, 0, sizeof *out);
  if ((rc = emb_inst_init(&in, p, tables, n, err))) return rc;
  /* warm-started from the greedy's slowest rank, as the solver is */
  plan_table_plan *g = calloc(n, sizeof *g);
  if (g && !emb_greedy(&in, g, NULL) && !emb_eval(&in, g, &gr, &fits, NULL)) {
    warm = gr.max_ms;
    plan_emb_result_dispose(&gr);
  }
  free(g);
  rc = emb_agg_root_lp(&in, warm, lp_method, time_limit_s, &out->objective, &out->seconds,
                       &out->iterations, &out->rows, &out->cols, err);
  emb_inst_dispose(&in);
  return rc;
}

int plan_emb_costs(const plan_emb_problem *p, const plan_table *tables, size_t n,
                   const plan_table_plan *plans, plan_emb_cost *out, double *fixed_ms,
                   double *trivial_ms, svc_err *err) {
  emb_inst in;
  int rc = emb_inst_init(&in, p, tables, n, err);
  if (rc) return rc;
  for (size_t i = 0; i < n && !rc; i++) {
    const plan_table_plan *pl = &plans[i];
    int o = emb_opt_index(&in, pl->shard, pl->place, pl->k);
    if (o < 0) {
      rc =
          svc_err_set(err, SVC_BAD_FIELD, "plans", "table %zu's plan is not one of its options", i);
      break;
    }
    const emb_opt *e = EOPT(&in, i, o);
    out[i].ms = e->ms, out[i].bytes = e->bytes;
    out[i].spread = e->kind == EK_UNIFORM ? PLAN_SPREAD_EVERY_RANK
                    : e->kind == EK_NODE  ? PLAN_SPREAD_NODE
                                          : PLAN_SPREAD_PIECES;
    out[i].min_ms = INFINITY;
    for (int q = 0; q < in.nopt; q++)
      if (EOPT(&in, i, q)->ok) out[i].min_ms = fmin(out[i].min_ms, EOPT(&in, i, q)->ms);
  }
  *fixed_ms = in.fixed_ms;
  *trivial_ms = emb_trivial_bound(&in);
  emb_inst_dispose(&in);
  return rc;
}

int plan_emb_dump(const plan_emb_problem *p, const plan_table *tables, size_t n,
                  const plan_table_plan *plans, double max_ms, const char *path) {
  emb_inst in;
  svc_err err;
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  if (emb_inst_init(&in, p, tables, n, &err)) {
    fclose(f);
    return -1;
  }
  fprintf(f, "I %d %d %d %.9g %.9g %.9g %d %zu %.9g\n", in.R, in.G, in.N, in.fixed_ms, p->cap_bytes,
          in.host_cap, in.nopt, n, max_ms);
  for (size_t i = 0; i < n; i++)
    for (int o = 0; o < in.nopt; o++) {
      const emb_opt *e = EOPT(&in, i, o);
      if (e->ok)
        fprintf(f, "O %zu %d %d %d %.9g %.9g %.9g %d %d\n", i, o, e->kind, e->k, e->ms, e->bytes,
                e->host_bytes, e->shard, e->place);
    }
  for (size_t i = 0; plans && i < n; i++) {
    const plan_table_plan *pl = &plans[i];
    fprintf(f, "P %zu %d %d %d", i, emb_opt_index(&in, pl->shard, pl->place, pl->k), pl->rank,
            pl->node);
    for (int j = 0; pl->shard == PLAN_SHARD_CW && j < pl->k; j++)
      fprintf(f, " %d", pl->cw_ranks[j]);
    fprintf(f, "\n");
  }
  emb_inst_dispose(&in);
  return fclose(f) ? -1 : 0;
}

int plan_emb_load(const plan_emb_problem *p, const plan_table *tables, size_t n,
                  plan_table_plan *plans, const char *path) {
  emb_inst in;
  svc_err err;
  char line[4096];
  int rc = 0;
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  if (emb_inst_init(&in, p, tables, n, &err)) {
    fclose(f);
    return -1;
  }
  memset(plans, 0, n * sizeof *plans);
  while (!rc && fgets(line, sizeof line, f)) {
    char *s = line, *end;
    if (line[0] != 'P') continue;
    long v[4 + PLAN_MAX_CW];
    int m = 0;
    for (s++; m < 4 + PLAN_MAX_CW; m++, s = end) {
      v[m] = strtol(s, &end, 10);
      if (end == s) break;
    }
    if (m < 4 || v[0] < 0 || (size_t)v[0] >= n || v[1] < 0 || v[1] >= in.nopt) {
      rc = -1;
      break;
    }
    const emb_opt *e = EOPT(&in, v[0], v[1]);
    plan_table_plan *pl = &plans[v[0]];
    pl->shard = e->shard, pl->place = e->place, pl->k = e->k;
    pl->rank = v[2] < 0 ? 0 : (int)v[2];
    pl->node = v[3] < 0 ? 0 : (int)v[3];
    if (e->shard == PLAN_SHARD_CW) {
      if (m - 4 != e->k) rc = -1;
      for (int j = 0; !rc && j < e->k; j++) pl->cw_ranks[j] = (int)v[4 + j];
    }
  }
  emb_inst_dispose(&in);
  fclose(f);
  return rc;
}
