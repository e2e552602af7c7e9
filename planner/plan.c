/* plan.c: the global knobs around the embedding problem.
 *
 * The knob space (GPU count, batch, dense and embedding precision,
 * checkpointing, DDP/FSDP, padding) is small: every combination is
 * enumerated. Each gets an optimistic score from the dense part (the step
 * model) plus a valid lower bound of the embedding time (capacity
 * ignored), so combinations are visited best-first. A first pass prices
 * each with the greedy embedding plan; the second solves the embedding
 * MILP for the combinations whose optimistic score can still beat the
 * best answer, splitting the time limit among them, and stops as soon as
 * none can. The gap reported is the chosen combination's MILP gap; the
 * search's own gap (global_gap) also counts the combinations' bounds.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/planner_int.h"

typedef plan_combo combo;

static double act_bytes_of(int dt) {
  double b = cost_dtype_bytes((cost_dtype)dt);
  return b < 2 ? 2 : b; /* fp8 compute still exchanges bf16 activations */
}

static double price_of(const plan_request *req) {
  return req->price_per_hour > 0 ? req->price_per_hour : req->hw.price_per_hour;
}

/* Higher is better: samples/s, or samples per USD for the cost objective. */
double plan_score(const plan_request *req, const plan_recipe *r, double step_ms) {
  double R = (double)r->gpus_per_node * r->nodes;
  double sps = (double)r->batch_per_gpu * R / step_ms * 1e3;
  if (req->objective == PLAN_OBJ_COST) return sps * 3600.0 / (price_of(req) * R);
  return sps;
}

static void problem_for(const plan_request *req, const plan_recipe *r, double cap,
                        plan_emb_problem *p) {
  memset(p, 0, sizeof *p);
  p->hw = req->hw;
  p->gpus_per_node = r->gpus_per_node, p->nodes = r->nodes;
  p->batch_per_gpu = r->batch_per_gpu;
  p->emb_dtype = r->emb_dtype;
  p->act_bytes = act_bytes_of(r->dense_dtype);
  p->sparse_opt = req->sparse_opt;
  p->cap_bytes = cap;
  p->host_bw = req->host_bw, p->cache_ratio = req->cache_ratio;
  p->host_mode = req->host_mode;
  p->shard_mask = req->knobs.shard_mask;
  p->allow_host = req->knobs.allow_host;
  p->cw_max = 4;
}

static void finish(const plan_request *req, plan_eval *e) {
  const plan_recipe *r = &e->recipe;
  double R = (double)r->gpus_per_node * r->nodes, maxb = 0;
  e->step_ms = e->dense.ms + e->emb.max_ms;
  e->samples_per_s = (double)r->batch_per_gpu * R / e->step_ms * 1e3;
  double price = price_of(req);
  e->usd_per_msample = price > 0 ? price * R / 3600.0 / e->samples_per_s * 1e6 : 0;
  for (int i = 0; i < e->emb.ranks; i++) maxb = fmax(maxb, e->emb.rank_bytes[i]);
  e->peak_bytes = e->dense.bytes + maxb;
  e->fits = e->peak_bytes <= req->hw.hbm_usable_bytes * (1 + 1e-9);
}

void plan_eval_dispose(plan_eval *e) {
  if (!e) return;
  plan_emb_result_dispose(&e->emb);
}

/* Evaluate r with plans (NULL: greedy), or solve (solve != NULL). */
static int eval_full(const plan_request *req, const plan_recipe *r, const plan_table_plan *plans,
                     const plan_solve_opts *solve, plan_eval *out, svc_err *err) {
  plan_emb_problem p;
  int rc, fits = 1;
  memset(out, 0, sizeof *out);
  out->recipe = *r;
  if ((rc = req->dense(req->dense_user, &req->hw, r, &out->dense, err))) return rc;
  problem_for(req, r, req->hw.hbm_usable_bytes - out->dense.bytes, &p);
  if (!plans && r == &req->baseline && req->baseline_shard_mask) {
    p.shard_mask = req->baseline_shard_mask;
    p.allow_host = req->baseline_allow_host;
  }
  if (plans)
    rc = plan_emb_evaluate(&p, req->tables, req->n_tables, plans, &out->emb, &fits, err);
  else if (solve)
    rc = plan_emb_solve(&p, req->tables, req->n_tables, solve, &out->emb, err);
  else
    rc = plan_emb_greedy(&p, req->tables, req->n_tables, &out->emb, err);
  if (rc) {
    if (rc == -SVC_INFEASIBLE && out->dense.bytes >= req->hw.hbm_usable_bytes) {
      char d[32], u[32];
      emb_fmt_gb(d, sizeof d, out->dense.bytes);
      emb_fmt_gb(u, sizeof u, req->hw.hbm_usable_bytes);
      svc_err_set(err, SVC_INFEASIBLE, "recipe",
                  "HBM capacity: the dense part alone (weights, optimizer state, activations, "
                  "workspace) needs %s per GPU; %s usable",
                  d, u);
    }
    return rc;
  }
  finish(req, out);
  if (!fits) out->fits = 0;
  return 0;
}

int plan_evaluate(const plan_request *req, const plan_recipe *r, const plan_table_plan *plans,
                  plan_eval *out, svc_err *err) {
  return eval_full(req, r, plans, NULL, out, err);
}

/* ---- enumeration ------------------------------------------------------------ */

/* Keep the first of each value (n values of size bytes each at v): a knob
 * list with repeats (16 copies of one dtype) would multiply the
 * combinations for nothing. Returns the count. */
static int uniq(void *v, int n, size_t size) {
  char *a = v;
  int m = 0;
  for (int i = 0; i < n; i++) {
    int seen = 0;
    for (int j = 0; j < m && !seen; j++)
      seen = !memcmp(a + (size_t)j * size, a + (size_t)i * size, size);
    if (!seen) memmove(a + (size_t)m++ * size, a + (size_t)i * size, size);
  }
  return m;
}

static void collapse(plan_knobs *k) {
  k->n_batch = uniq(k->batch, k->n_batch, sizeof *k->batch);
  k->n_dense_dtype = uniq(k->dense_dtype, k->n_dense_dtype, sizeof *k->dense_dtype);
  k->n_emb_dtype = uniq(k->emb_dtype, k->n_emb_dtype, sizeof *k->emb_dtype);
  k->n_ckpt = uniq(k->ckpt, k->n_ckpt, sizeof *k->ckpt);
  k->n_fsdp = uniq(k->fsdp, k->n_fsdp, sizeof *k->fsdp);
  k->n_pad = uniq(k->pad, k->n_pad, sizeof *k->pad);
  k->n_nodes = uniq(k->nodes, k->n_nodes, sizeof *k->nodes);
}

static int enumerate(const plan_request *req, combo **out, size_t *n, svc_err *err) {
  plan_knobs kc = req->knobs;
  const plan_knobs *k = &kc;
  const plan_recipe *b = &req->baseline;
  collapse(&kc);
  int nodes[PLAN_MAX_CHOICES], nn = 0;
  if (req->objective == PLAN_OBJ_COST && k->n_nodes > 0)
    for (int i = 0; i < k->n_nodes; i++) nodes[nn++] = k->nodes[i];
  else
    nodes[nn++] = b->nodes;
  /* The global batch changes training (explain.c, convergence): unless the
   * request pins one or lists batch sizes, the baseline's is kept, also
   * when the GPU count varies (objective cost). */
  int64_t gb = k->global_batch;
  if (gb <= 0 && k->n_batch == 0) gb = b->batch_per_gpu * b->gpus_per_node * b->nodes;
  int nb = gb > 0 ? 1 : (k->n_batch > 0 ? k->n_batch : 1);
  int nd = k->n_dense_dtype > 0 ? k->n_dense_dtype : 1,
      ne = k->n_emb_dtype > 0 ? k->n_emb_dtype : 1;
  int nc = k->n_ckpt > 0 ? k->n_ckpt : 1, nf = k->n_fsdp > 0 ? k->n_fsdp : 1;
  int np = k->n_pad > 0 ? k->n_pad : 1;
  size_t total = (size_t)nn * nb * nd * ne * nc * nf * np, i = 0;
  combo *c = calloc(total, sizeof *c);
  if (!c) return svc_err_set(err, SVC_NOMEM, "", NULL);
  for (int a = 0; a < nn; a++)
    for (int bi = 0; bi < nb; bi++)
      for (int d = 0; d < nd; d++)
        for (int e = 0; e < ne; e++)
          for (int ck = 0; ck < nc; ck++)
            for (int f = 0; f < nf; f++)
              for (int pd = 0; pd < np; pd++) {
                plan_recipe r = *b;
                r.nodes = nodes[a];
                int64_t R = (int64_t)r.gpus_per_node * r.nodes;
                if (gb > 0)
                  r.batch_per_gpu = gb / R;
                else if (k->n_batch > 0)
                  r.batch_per_gpu = k->batch[bi];
                if (k->n_dense_dtype > 0) r.dense_dtype = k->dense_dtype[d];
                if (k->n_emb_dtype > 0) r.emb_dtype = k->emb_dtype[e];
                if (k->n_ckpt > 0) r.checkpointing = k->ckpt[ck];
                if (k->n_fsdp > 0) r.fsdp = k->fsdp[f];
                if (k->n_pad > 0) r.pad = k->pad[pd];
                c[i++].r = r;
                if (gb > 0 && (r.batch_per_gpu < 1 || r.batch_per_gpu * R != gb)) {
                  c[i - 1].infeasible = 1;
                  snprintf(c[i - 1].reason, sizeof c[i - 1].reason,
                           "global batch %lld is not a multiple of %lld GPUs", (long long)gb,
                           (long long)R);
                }
              }
  *out = c;
  *n = total;
  return 0;
}

static int by_optimistic(const void *a, const void *b) {
  const combo *x = a, *y = b;
  if (x->infeasible != y->infeasible) return x->infeasible - y->infeasible;
  return x->optimistic > y->optimistic ? -1 : x->optimistic < y->optimistic;
}

/* Optimistic score: dense time + a capacity-free embedding bound. */
static void bound_combo(const plan_request *req, combo *c) {
  svc_err e;
  plan_emb_problem p;
  if (c->infeasible) return;
  if (req->dense(req->dense_user, &req->hw, &c->r, &c->dense, &e)) {
    c->infeasible = 1;
    svc_strlcpy(c->reason, e.message, sizeof c->reason);
    return;
  }
  if (c->dense.bytes >= req->hw.hbm_usable_bytes) {
    char d[32], u[32];
    emb_fmt_gb(d, sizeof d, c->dense.bytes);
    emb_fmt_gb(u, sizeof u, req->hw.hbm_usable_bytes);
    c->infeasible = 1;
    snprintf(c->reason, sizeof c->reason,
             "HBM capacity: the dense part alone needs %s per GPU; %s usable", d, u);
    return;
  }
  problem_for(req, &c->r, INFINITY, &p);
  double lb = emb_lower_bound(&p, req->tables, req->n_tables);
  c->optimistic = plan_score(req, &c->r, c->dense.ms + lb);
  c->ub = c->optimistic;
}

/* How many knobs r turns away from the baseline (ties go to fewer). */
static int distance(const plan_request *req, const plan_recipe *r) {
  const plan_recipe *b = &req->baseline;
  return (r->nodes != b->nodes) + (r->batch_per_gpu != b->batch_per_gpu) +
         (r->dense_dtype != b->dense_dtype) + (r->emb_dtype != b->emb_dtype) +
         (r->checkpointing != b->checkpointing) + (r->fsdp != b->fsdp) + (r->pad != b->pad);
}

/* The better score wins; within 1e-9 of each other (a tie: the change
 * does not move the step) the recipe closer to the baseline. */
static void keep_best(plan_eval *best, int *have, plan_eval *cand, const plan_request *req) {
  double s = plan_score(req, &cand->recipe, cand->step_ms);
  double bs = *have ? plan_score(req, &best->recipe, best->step_ms) : 0;
  if (!*have || s > bs * (1 + 1e-9) ||
      (s >= bs * (1 - 1e-9) && distance(req, &cand->recipe) < distance(req, &best->recipe))) {
    plan_eval_dispose(best);
    *best = *cand;
    *have = 1;
  } else {
    plan_eval_dispose(cand);
  }
  memset(cand, 0, sizeof *cand);
}

/* The search keeps the request's time limit end to end (deadline, from
 * plan_run's start): bounding stops at it (combinations not reached are
 * reported as not explored, and the search's gap then proves nothing), the
 * greedy pass stops at it once it has an answer, and the MILP pass shares
 * what is left. */
static int search(const plan_request *req, combo *c, size_t n, double deadline, plan_result *out,
                  svc_err *err) {
  plan_eval best = {0}, cand;
  int have = 0, rc = 0, unexplored = 0, time_cut = 0, work_cut = 0;
  svc_err e;
  for (size_t i = 0; i < n; i++) {
    if ((i & 63) == 0 && i > 0 && svc_now() > deadline) {
      for (size_t j = i; j < n; j++) {
        if (c[j].infeasible) continue;
        c[j].infeasible = 1;
        snprintf(c[j].reason, sizeof c[j].reason, "not explored within the time limit");
        unexplored++;
      }
      break;
    }
    bound_combo(req, &c[i]);
  }
  qsort(c, n, sizeof *c, by_optimistic);
  /* pass 1: greedy plans, best-first, while the optimistic score beats the best */
  for (size_t i = 0; i < n && !c[i].infeasible; i++) {
    if (have && c[i].optimistic <= plan_score(req, &best.recipe, best.step_ms)) break;
    if (have && svc_now() > deadline) {
      for (size_t j = i; j < n && !c[j].infeasible; j++) out->combos_pruned++;
      time_cut = 1;
      break;
    }
    /* the greedy with its ties broken: an answer of this pass stands when
     * the MILP pass is pruned */
    plan_solve_opts g = {.method = PLAN_METHOD_GREEDY, .tidy = 1};
    g.time_limit_s = req->solve.time_limit_s > 0 ? req->solve.time_limit_s : 10;
    if (eval_full(req, &c[i].r, NULL, &g, &cand, &e) || !cand.fits) {
      if (!cand.emb.tables)
        svc_strlcpy(c[i].reason, e.message, sizeof c[i].reason);
      else
        snprintf(c[i].reason, sizeof c[i].reason, "HBM capacity: the greedy plan does not fit");
      plan_eval_dispose(&cand);
      continue;
    }
    c[i].greedy = plan_score(req, &c[i].r, cand.step_ms);
    keep_best(&best, &have, &cand, req);
  }
  /* pass 2: the MILP where it can still win */
  size_t cands = 0;
  for (size_t i = 0; i < n; i++) cands += !c[i].infeasible;
  for (size_t i = 0; i < n && !c[i].infeasible && !req->knobs.keep_baseline_sharding; i++) {
    double bs = have ? plan_score(req, &best.recipe, best.step_ms) : 0;
    if (have && c[i].optimistic <= bs * (1 + 1e-9)) {
      out->combos_pruned += (int)(cands - i);
      break;
    }
    double left = deadline - svc_now();
    if (left <= 0.01) {
      out->combos_pruned += (int)(cands - i);
      time_cut = 1;
      break;
    }
    plan_solve_opts so = req->solve;
    size_t rest = cands - i < 3 ? cands - i : 3;
    so.time_limit_s = left / (double)rest;
    /* the work limits: half of the request's limit to the first solve, a
     * quarter to the next, ... (the same on any machine); the clock share
     * above stays the cap */
    if (so.work_s >= 0)
      so.work_s = (req->solve.time_limit_s > 0 ? req->solve.time_limit_s : 10) *
                  pow(0.5, (double)(i < 30 ? i + 1 : 30));
    if ((rc = eval_full(req, &c[i].r, NULL, &so, &cand, &e))) {
      if (rc != -SVC_INFEASIBLE) {
        *err = e;
        goto cleanup;
      }
      rc = 0;
      c[i].infeasible = 1;
      svc_strlcpy(c[i].reason, e.message, sizeof c[i].reason);
      plan_eval_dispose(&cand);
      continue;
    }
    c[i].solved = 1;
    time_cut |= cand.emb.limit == PLAN_LIMIT_TIME, work_cut |= cand.emb.limit == PLAN_LIMIT_WORK;
    c[i].ub = plan_score(req, &c[i].r, cand.dense.ms + cand.emb.bound_ms);
    if (!cand.fits) {
      snprintf(c[i].reason, sizeof c[i].reason, "HBM capacity: peak %.1f GB over %.1f GB usable",
               cand.peak_bytes / 1e9, req->hw.hbm_usable_bytes / 1e9);
      plan_eval_dispose(&cand);
      continue;
    }
    keep_best(&best, &have, &cand, req);
  }
  if (!have) {
    const char *why = n ? c[0].reason : "no combination of knobs";
    rc = svc_err_set(err, SVC_INFEASIBLE, "knobs", "no recipe fits: %s", why);
    goto cleanup;
  }
  double bs = plan_score(req, &best.recipe, best.step_ms), ub = bs;
  for (size_t i = 0; i < n; i++)
    if (!c[i].infeasible && c[i].ub > ub) ub = c[i].ub;
  out->global_gap = unexplored ? 1 : ub > 0 ? (ub - bs) / ub : 0;
  out->limit = unexplored || time_cut ? PLAN_LIMIT_TIME
               : work_cut             ? PLAN_LIMIT_WORK
                                      : PLAN_LIMIT_NONE;
  out->best = best;
  out->gap = best.emb.gap;
  out->combos = (int)n;
  for (size_t i = 0; i < n; i++) out->combos_infeasible += c[i].infeasible;
  return 0;
cleanup:
  plan_eval_dispose(&best);
  return rc;
}

void plan_result_dispose(plan_result *r) {
  if (!r) return;
  plan_eval_dispose(&r->best);
  plan_eval_dispose(&r->baseline);
  memset(r, 0, sizeof *r);
}

static int check_request(const plan_request *req, svc_err *err) {
  const plan_recipe *b = &req->baseline;
  if (!req->dense) return svc_err_set(err, SVC_INTERNAL, "", "no dense cost function");
  if (b->gpus_per_node < 1 || b->nodes < 1)
    return svc_err_set(err, SVC_BAD_FIELD, "cluster", "cluster needs gpus_per_node and nodes >= 1");
  if (!(req->hw.hbm_usable_bytes > 0))
    return svc_err_set(err, SVC_BAD_FIELD, "hardware", "%s has no usable HBM figure", req->hw.name);
  if (req->objective == PLAN_OBJ_COST && !(price_of(req) > 0))
    return svc_err_set(err, SVC_MISSING_FIELD, "price_per_hour",
                       "objective cost needs a price: %s has no price_per_hour_usd; give "
                       "price_per_hour in the request",
                       req->hw.name);
  return 0;
}

int plan_resolve(const plan_request *req, double limit_s, plan_eval *best) {
  combo *c = NULL;
  size_t n = 0;
  plan_result r;
  svc_err err;
  memset(&r, 0, sizeof r);
  memset(best, 0, sizeof *best);
  int rc = enumerate(req, &c, &n, &err);
  if (!rc) rc = search(req, c, n, svc_now() + limit_s, &r, &err);
  free(c);
  if (rc) return rc;
  *best = r.best;
  return 0;
}

int plan_run(const plan_request *req, const plan_table_plan *baseline_plans, plan_result *out,
             svc_err *err) {
  combo *c = NULL;
  size_t n = 0;
  svc_err be;
  int rc;
  double t0 = svc_now();
  double deadline = t0 + (req->solve.time_limit_s > 0 ? req->solve.time_limit_s : 10);
  memset(out, 0, sizeof *out);
  if ((rc = check_request(req, err))) return rc;
  if (eval_full(req, &req->baseline, baseline_plans, NULL, &out->baseline, &be)) {
    /* a baseline that cannot run here (no such dtype, no fit) is reported,
     * not fatal: the plan is still made */
    if (be.code == SVC_NOMEM || be.code == SVC_INTERNAL || be.code == SVC_SOLVER) {
      *err = be;
      return -be.code;
    }
    out->baseline_fits = 0;
    svc_strlcpy(out->baseline_reason, be.message, sizeof out->baseline_reason);
    plan_eval_dispose(&out->baseline);
  } else {
    out->baseline_fits = out->baseline.fits;
    if (!out->baseline.fits)
      snprintf(out->baseline_reason, sizeof out->baseline_reason,
               "HBM capacity: peak %.1f GB per GPU; %.1f GB usable", out->baseline.peak_bytes / 1e9,
               req->hw.hbm_usable_bytes / 1e9);
  }
  if ((rc = enumerate(req, &c, &n, err))) goto cleanup;
  rc = search(req, c, n, deadline, out, err);
  /* compare: the target plan is never worse than the direct port it is
   * measured against; on a tie (or when the search found nothing, e.g. the
   * greedy alone where the port's plan came from the MILP) the port stands */
  int port_fits = baseline_plans && out->baseline_fits;
  if (rc == -SVC_INFEASIBLE && port_fits) rc = 0, out->gap = 0;
  if (rc) goto cleanup;
  if (port_fits && (!out->best.emb.tables ||
                    plan_score(req, &out->baseline.recipe, out->baseline.step_ms) >=
                        plan_score(req, &out->best.recipe, out->best.step_ms) * (1 - 1e-9))) {
    plan_eval port;
    double gap = out->best.emb.tables ? out->best.emb.gap : 0;
    if (!eval_full(req, &req->baseline, baseline_plans, NULL, &port, &be)) {
      plan_eval_dispose(&out->best);
      out->best = port;
      out->best.emb.gap = gap;
    }
  }
  plan_explain(req, out, c, n);
cleanup:
  free(c);
  out->solve_s = svc_now() - t0;
  if (rc) plan_result_dispose(out);
  return rc;
}
