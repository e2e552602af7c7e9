/* explain.c: the answer's explanation. Every change against the baseline
 * is applied one at a time in a fixed order (GPUs, dense precision,
 * embedding precision, batch, checkpointing, DDP/FSDP, padding, and last
 * the embedding plan), each priced with the full model; its gain is the
 * throughput ratio against the last state that fit. While the cluster is
 * unchanged the baseline's table assignment is kept until the final
 * "embedding_plan" step, so that step carries exactly what the sharding
 * and placement search added. Binding constraints name what stopped the
 * search from going further (capacity, a fixed global batch, a larger
 * batch that did not fit), each kept only when a re-solve with it relaxed
 * changes the answer; the step's bounds (host dispatch, communication,
 * memory) are checked the same way.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "planner/planner_int.h"

/* The note of a change that leaves the step as it was (it is kept only
 * because it is the search's answer: a tie). */
#define SAME_STEP "does not change the step"

enum { K_GPUS = 0, K_DENSE, K_EMB, K_BATCH, K_CKPT, K_FSDP, K_PAD, K__COUNT };
static const char *const knob_names[K__COUNT] = {
    "gpus",           "dense_precision", "embedding_precision", "batch_per_gpu", "checkpointing",
    "dense_parallel", "padding"};

static void knob_value(const plan_recipe *r, int k, char *buf, size_t size) {
  switch (k) {
  case K_GPUS:
    snprintf(buf, size, "%d", r->gpus_per_node * r->nodes);
    break;
  case K_DENSE:
    snprintf(buf, size, "%s", cost_dtype_name((cost_dtype)r->dense_dtype));
    break;
  case K_EMB:
    snprintf(buf, size, "%s", cost_dtype_name((cost_dtype)r->emb_dtype));
    break;
  case K_BATCH:
    snprintf(buf, size, "%lld", (long long)r->batch_per_gpu);
    break;
  case K_CKPT:
    snprintf(buf, size, "%s", cost_ckpt_name(r->checkpointing));
    break;
  case K_FSDP:
    snprintf(buf, size, "%s", r->fsdp ? "fsdp" : "ddp");
    break;
  default:
    snprintf(buf, size, "%s", r->pad ? "on" : "off");
    break;
  }
}

static void set_knob(plan_recipe *r, const plan_recipe *to, int k) {
  switch (k) {
  case K_GPUS:
    r->nodes = to->nodes, r->gpus_per_node = to->gpus_per_node;
    break;
  case K_DENSE:
    r->dense_dtype = to->dense_dtype;
    break;
  case K_EMB:
    r->emb_dtype = to->emb_dtype;
    break;
  case K_BATCH:
    r->batch_per_gpu = to->batch_per_gpu;
    break;
  case K_CKPT:
    r->checkpointing = to->checkpointing;
    break;
  case K_FSDP:
    r->fsdp = to->fsdp;
    break;
  default:
    r->pad = to->pad;
    break;
  }
}

/* "table_wise 20, data_parallel 4, host 3" */
static void summarize(const plan_table_plan *p, size_t n, char *buf, size_t size) {
  int cnt[PLAN_SHARD__COUNT] = {0}, host = 0;
  size_t used = 0;
  for (size_t i = 0; i < n; i++) cnt[p[i].shard]++, host += p[i].place == PLAN_PLACE_HOST;
  buf[0] = '\0';
  for (int s = 0; s < PLAN_SHARD__COUNT; s++) {
    if (!cnt[s]) continue;
    int w =
        snprintf(buf + used, size - used, "%s%s %d", used ? ", " : "", plan_shard_name(s), cnt[s]);
    if (w < 0 || (size_t)w >= size - used) return;
    used += (size_t)w;
  }
  snprintf(buf + used, size - used, "%shost %d", used ? ", " : "", host);
}

static int same_plans(const plan_table_plan *a, const plan_table_plan *b, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (a[i].shard != b[i].shard || a[i].place != b[i].place || a[i].k != b[i].k) return 0;
    if (a[i].shard == PLAN_SHARD_TW && a[i].rank != b[i].rank) return 0;
    if (a[i].shard == PLAN_SHARD_TWRW && a[i].node != b[i].node) return 0;
    if (a[i].shard == PLAN_SHARD_CW &&
        memcmp(a[i].cw_ranks, b[i].cw_ranks, (size_t)a[i].k * sizeof(int)))
      return 0;
  }
  return 1;
}

static plan_change *add_change(plan_result *out, const char *knob, const char *from,
                               const char *to) {
  if (out->n_changes >= PLAN_MAX_CHANGES) return NULL;
  plan_change *ch = &out->changes[out->n_changes++];
  memset(ch, 0, sizeof *ch);
  snprintf(ch->knob, sizeof ch->knob, "%s", knob);
  snprintf(ch->from, sizeof ch->from, "%s", from);
  snprintf(ch->to, sizeof ch->to, "%s", to);
  return ch;
}

/* Does moving knob k from `was` to `now` change what training computes?
 * Global batch: the optimizer sees other gradients (learning rate and
 * warm-up are tuned for one batch; Goyal et al. 2017, arXiv:1706.02677).
 * Dense compute below 16 bits (fp8 and narrower) and table rows below 16
 * bits (int8, fp8) round what the model computes or stores beyond what
 * bf16/fp16 training with loss scaling does (Micikevicius et al. 2022,
 * arXiv:2209.05433, train fp8 with per-tensor scaling and check
 * convergence). Checkpointing, DDP/FSDP, zero padding, the GPU count at a
 * fixed global batch and the sharding compute the same step. */
static void convergence(const plan_recipe *was, const plan_recipe *now, int k, plan_change *ch) {
  long long g0 = (long long)was->batch_per_gpu * was->gpus_per_node * was->nodes;
  long long g1 = (long long)now->batch_per_gpu * now->gpus_per_node * now->nodes;
  if ((k == K_GPUS || k == K_BATCH) && g0 != g1)
    snprintf(ch->why, sizeof ch->why,
             "global batch %lld -> %lld: learning rate and warm-up need re-tuning", g0, g1);
  else if (k == K_DENSE && cost_dtype_bytes((cost_dtype)now->dense_dtype) < 2)
    snprintf(ch->why, sizeof ch->why, "%s matmuls round below bf16: convergence must be checked",
             cost_dtype_name((cost_dtype)now->dense_dtype));
  else if (k == K_EMB && cost_dtype_bytes((cost_dtype)now->emb_dtype) < 2)
    snprintf(ch->why, sizeof ch->why,
             "%s table rows quantize the embeddings: convergence must be checked",
             cost_dtype_name((cost_dtype)now->emb_dtype));
  else
    return;
  ch->affects_convergence = 1;
}

static void changes(const plan_request *req, plan_result *out) {
  const plan_eval *fin = &out->best;
  plan_recipe cur = req->baseline;
  const plan_table_plan *plans = out->baseline.emb.tables; /* NULL when the baseline failed */
  double prev = out->baseline_fits ? out->baseline.samples_per_s : 0;
  char a[48], b[48];
  for (int k = 0; k < K__COUNT; k++) {
    knob_value(&cur, k, a, sizeof a);
    knob_value(&fin->recipe, k, b, sizeof b);
    if (!strcmp(a, b)) continue;
    plan_recipe was = cur;
    set_knob(&cur, &fin->recipe, k);
    if (k == K_GPUS) plans = NULL; /* a new cluster: the baseline's ranks no longer exist */
    plan_change *ch = add_change(out, knob_names[k], a, b);
    if (!ch) return;
    convergence(&was, &cur, k, ch);
    plan_eval e;
    svc_err err;
    if (plan_evaluate(req, &cur, plans, &e, &err) || !e.fits) {
      snprintf(ch->note, sizeof ch->note, "does not fit alone: %.100s",
               e.emb.tables ? "HBM capacity exceeded with the previous embedding plan"
                            : err.message);
      plan_eval_dispose(&e);
      continue;
    }
    ch->samples_per_s = e.samples_per_s;
    ch->gain = prev > 0 ? e.samples_per_s / prev : 0;
    if (prev <= 0)
      snprintf(ch->note, sizeof ch->note, "first change that fits");
    else if (fabs(ch->gain - 1) < 1e-9)
      snprintf(ch->note, sizeof ch->note, "%s", SAME_STEP);
    prev = e.samples_per_s;
    plan_eval_dispose(&e);
  }
  if (!plans || !same_plans(plans, fin->emb.tables, fin->emb.n_tables)) {
    char from[96] = "", to[96];
    if (plans)
      summarize(plans, fin->emb.n_tables, from, sizeof from);
    else
      snprintf(from, sizeof from, "greedy");
    summarize(fin->emb.tables, fin->emb.n_tables, to, sizeof to);
    plan_change *ch = add_change(out, "embedding_plan", from, to);
    if (!ch) return;
    ch->samples_per_s = fin->samples_per_s;
    ch->gain = prev > 0 ? fin->samples_per_s / prev : 0;
    snprintf(ch->note, sizeof ch->note, "sharding and placement re-solved (%s)%s",
             fin->emb.method == PLAN_METHOD_GREEDY ? "greedy was best" : "MILP",
             prev > 0 && fabs(ch->gain - 1) < 1e-9 ? ": " SAME_STEP : "");
  }
}

static int host_count(const plan_eval *e) {
  int host = 0;
  for (size_t i = 0; i < e->emb.n_tables; i++) host += e->emb.tables[i].place == PLAN_PLACE_HOST;
  return host;
}

/* A relaxed copy of req for a re-solve: no progress reports, a quarter of
 * the time limit (at least 50 ms). */
static double relaxed(const plan_request *req, plan_request *rq) {
  *rq = *req;
  rq->solve.progress = NULL, rq->solve.progress_user = NULL;
  double tl = req->solve.time_limit_s > 0 ? req->solve.time_limit_s : 10;
  return fmax(0.05, 0.25 * tl);
}

#define ADD(arr, cnt, max, ...)                                                                    \
  do {                                                                                             \
    if ((cnt) < (max)) snprintf((arr)[(cnt)++], sizeof(arr)[0], __VA_ARGS__);                      \
  } while (0)
#define BIND(...) ADD(out->binding, out->n_binding, 8, __VA_ARGS__)
#define BOUND(...) ADD(out->bound, out->n_bound, 4, __VA_ARGS__)

/* Every binding constraint is checked by a re-solve with it relaxed and
 * stated only when that changes the answer (a better score by more than
 * 1e-6): HBM capacity (twice the HBM: also what says a larger batch does
 * not fit and that host tables are there for want of HBM) and a pinned
 * global batch (the pin dropped). A time-limited re-solve that finds
 * nothing better states nothing: the list errs on the side of silence. */
static void binding(const plan_request *req, plan_result *out, const plan_combo *c, size_t n) {
  const plan_eval *b = &out->best;
  char x[32], y[32];
  plan_request rq;
  plan_eval e;
  double bs = plan_score(req, &b->recipe, b->step_ms);
  int host = host_count(b), memory = host > 0 || b->peak_bytes >= 0.8 * req->hw.hbm_usable_bytes;
  for (size_t i = 0; i < n && !memory; i++) memory = c[i].infeasible && strstr(c[i].reason, "HBM");
  if (memory) {
    double tl = relaxed(req, &rq);
    rq.hw.hbm_bytes *= 2, rq.hw.hbm_usable_bytes *= 2;
    if (!plan_resolve(&rq, tl, &e)) {
      double s2 = plan_score(&rq, &e.recipe, e.step_ms);
      if (s2 > bs * (1 + 1e-6)) {
        emb_fmt_gb(x, sizeof x, b->peak_bytes);
        emb_fmt_gb(y, sizeof y, req->hw.hbm_usable_bytes);
        BIND("HBM capacity: %s of %s used on the fullest GPU; with twice the HBM the step "
             "would be %.4g ms (x%.3f)",
             x, y, e.step_ms, s2 / bs);
        int h2 = host_count(&e);
        if (host > h2 && req->host_mode == PLAN_HOST_CPU)
          BIND("%d tables live in CPU memory and run on the CPU: HBM cannot hold them (%d with "
               "twice the HBM)",
               host, h2);
        else if (host > h2 && req->host_mode == PLAN_HOST_UVM)
          BIND("%d tables live in pinned host memory, read by the GPU over the host link: HBM "
               "cannot hold them (%d with twice the HBM)",
               host, h2);
        else if (host > h2)
          BIND("%d tables live in host memory behind an HBM cache: HBM cannot hold them (%d "
               "with twice the HBM)",
               host, h2);
        if (e.recipe.batch_per_gpu > b->recipe.batch_per_gpu)
          BIND("batch_per_gpu %lld does not fit (the plan with twice the HBM takes it)",
               (long long)e.recipe.batch_per_gpu);
        BOUND("memory bound: HBM capacity limits the plan (twice the HBM: x%.3f)", s2 / bs);
      }
      plan_eval_dispose(&e);
    }
  }
  if (req->knobs.global_batch > 0) {
    double tl = relaxed(req, &rq);
    rq.knobs.global_batch = 0;
    if (!plan_resolve(&rq, tl, &e)) {
      double s2 = plan_score(&rq, &e.recipe, e.step_ms);
      if (s2 > bs * (1 + 1e-6))
        BIND("global batch fixed at %lld samples (without the pin: batch_per_gpu %lld, x%.3f)",
             (long long)req->knobs.global_batch, (long long)e.recipe.batch_per_gpu, s2 / bs);
      plan_eval_dispose(&e);
    }
  }
}

/* What bounds the chosen step, each checked against the same recipe and
 * embedding plan with that part taken away: host dispatch (the step
 * model's time the GPU idles while the framework dispatches kernels) and
 * communication (the step priced again with every link 1000x faster). */
static void step_bound(const plan_request *req, plan_result *out) {
  const plan_eval *b = &out->best;
  if (b->dense.overhead_ms >= 0.1 * b->step_ms)
    BOUND("host-dispatch bound: the GPU waits %.3g ms of the %.3g ms step while the framework "
          "dispatches %lld kernels",
          b->dense.overhead_ms, b->step_ms, (long long)b->dense.kernels);
  plan_request rq = *req;
  rq.hw.scaleup_bw *= 1e3, rq.hw.scaleout_bw *= 1e3, rq.hw.scaleup_link_bw *= 1e3;
  plan_eval e;
  svc_err err;
  if (!plan_evaluate(&rq, &b->recipe, b->emb.tables, &e, &err)) {
    double share = 1 - e.step_ms / b->step_ms;
    if (share >= 0.5)
      BOUND("communication bound: %.0f %% of the step is communication (%.3g ms with links "
            "1000x faster)",
            100 * share, e.step_ms);
    else if (share >= 0.2)
      BOUND("communication: %.0f %% of the step (%.3g ms with links 1000x faster)", 100 * share,
            e.step_ms);
    plan_eval_dispose(&e);
  }
}
#undef BIND
#undef BOUND
#undef ADD

void plan_explain(const plan_request *req, plan_result *out, const plan_combo *c, size_t n) {
  changes(req, out);
  binding(req, out, c, n);
  step_bound(req, out);
}
