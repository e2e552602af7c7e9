/* val_calibrate.c: `cdplan validate report ID --calibrate` (and POST
 * /v1/validations/{id}/calibrate) for whole-step results (runner kind
 * dlrm_step, e.g. a plan validated as planned): the step-level calibration
 * of costmodel/step.h (cost_step_val_fit: step_dlrm_gpu_scale,
 * step_uvm_link_scale) fitted on some jobs and scored on others, stored as
 * a new calibration version of the job's hardware on top of its latest one.
 *
 * Which rows are fitted: job ID and, when it ran a side of a stored plan,
 * the other side's job of the same validation (the plan's link nearest in
 * id): a plan's pair pins both scales (its all-HBM side g, its uvm side u).
 * Which rows check it: every other finished dlrm_step job of the same
 * hardware (the newest VAL_CHECK_JOBS), never fitted. A fitted job whose
 * device is not the hardware is refused (409 naming device); a check job's
 * is skipped with the reason. Each row is priced from the job's own
 * documents: the case of its label (workload, embedding_plan), the recipe
 * the runner reports it ran (else the case's).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#include "api/api_step.h"
#include "api/api_validate.h"

#define VAL_CHECK_JOBS 200 /* newest jobs read for check rows */
#define VAL_MAX_ROWS 64    /* rows of one dlrm_step result used */

/* One priced row: its sample (tables owned here) and where it came from. */
typedef struct {
  cost_step_sample s;
  cost_table *tabs;
  int64_t job;
  char label[32];
  double before_ms, after_ms;
  int64_t mini_batch; /* the row's host_mini step (0: none) */
  double mini_ms;
} vrow;

typedef struct {
  vrow *v;
  size_t n, cap;
} vrows;

static void vrows_dispose(vrows *r) {
  for (size_t i = 0; i < r->n; i++) free(r->v[i].tabs);
  free(r->v);
  memset(r, 0, sizeof *r);
}

static const cJSON *get(const cJSON *o, const char *k) {
  return cJSON_GetObjectItemCaseSensitive(o, k);
}

/* The case of params.cases labelled label (else the i-th). */
static const cJSON *case_of(const cJSON *params, const char *label, int i) {
  const cJSON *c, *cases = get(params, "cases");
  cJSON_ArrayForEach(c, cases) {
    const cJSON *l = get(c, "label");
    if (label && cJSON_IsString(l) && !strcmp(l->valuestring, label)) return c;
  }
  return label ? NULL : cJSON_GetArrayItem(cases, i);
}

/* compute_kernel of the plan's table name -> placement (-1: not named). */
static int placement_of(const cJSON *emb_plan, const char *name, size_t idx) {
  const cJSON *tabs = get(emb_plan, "tables"), *t = cJSON_GetArrayItem(tabs, (int)idx);
  const cJSON *nm = get(t, "name");
  if (!(cJSON_IsString(nm) && !strcmp(nm->valuestring, name))) {
    t = NULL; /* not in order: look it up */
    const cJSON *it;
    cJSON_ArrayForEach(it, tabs) {
      nm = get(it, "name");
      if (cJSON_IsString(nm) && !strcmp(nm->valuestring, name)) {
        t = it;
        break;
      }
    }
  }
  const cJSON *k = get(t, "compute_kernel");
  if (!cJSON_IsString(k)) return -1;
  if (!strcmp(k->valuestring, "fused")) return COST_PLACE_HBM;
  if (!strncmp(k->valuestring, "fused_uvm", 9)) return COST_PLACE_UVM;
  if (!strcmp(k->valuestring, "cpu")) return COST_PLACE_HOST;
  return -1;
}

/* The workload's tables, one per copy ("name#k" as the planner names
 * them), each placed as the embedding plan says. */
static int expand_tables(cost_workload *w, const cJSON *emb_plan, cost_table **out, svc_err *err) {
  size_t total = 0, k = 0;
  for (size_t i = 0; i < w->dlrm.n_tables; i++)
    total += (size_t)(w->dlrm.tables[i].count > 0 ? w->dlrm.tables[i].count : 1);
  if (total > API_STEP_MAX_TABLE_COUNT)
    return svc_err_set(err, SVC_BAD_FIELD, "params.cases", "too many tables");
  cost_table *t = calloc(total ? total : 1, sizeof *t);
  if (!t) return svc_err_set(err, SVC_NOMEM, "", NULL);
  for (size_t i = 0; i < w->dlrm.n_tables; i++) {
    const cost_table *src = &w->dlrm.tables[i];
    int64_t c = src->count > 0 ? src->count : 1;
    for (int64_t j = 0; j < c; j++, k++) {
      char name[80];
      t[k] = *src;
      t[k].count = 1;
      snprintf(name, sizeof name, "%s#%lld", src->name, (long long)j);
      int p = placement_of(emb_plan, name, k);
      if (p < 0 && c == 1) p = placement_of(emb_plan, src->name, k);
      if (p >= 0) t[k].placement = p;
    }
  }
  w->dlrm.tables = t;
  w->dlrm.n_tables = total;
  *out = t;
  return 0;
}

/* The recipe the runner ran: the row's (its own fields), else the case's
 * minus what only a plan's recipe carries. */
static int recipe_of(const cJSON *row, const cJSON *cs, const char *path, cost_recipe *r,
                     svc_err *err) {
  const cJSON *rr = get(row, "recipe");
  if (cJSON_IsObject(rr)) return api_recipe_decode(rr, path, r, err);
  cJSON *c = cJSON_Duplicate(get(cs, "recipe"), 1);
  cJSON_DeleteItemFromObjectCaseSensitive(c, "nodes");
  int rc = api_recipe_decode(c, path, r, err);
  cJSON_Delete(c);
  return rc;
}

/* The rows of one job's result into *acc. A bad row is a 400 naming
 * rows[i].FIELD (with the job in the message); rows that cannot be priced
 * as a whole step (a rank's share of a larger plan) are skipped. */
static int job_rows(const hwdb_job *j, const cJSON *res, vrows *acc, svc_err *err) {
  cJSON *params = j->params ? cJSON_Parse(j->params) : NULL;
  const cJSON *row, *rows = get(res, "rows");
  char f[96];
  int rc = 0, i = 0;
  if (!cJSON_IsArray(rows) || cJSON_GetArraySize(rows) < 1) {
    rc = svc_err_set(err, SVC_BAD_FIELD, "rows", "validation %lld's result has no rows",
                     (long long)j->id);
    goto cleanup;
  }
  cJSON_ArrayForEach(row, rows) {
    double ms = 0;
    const cJSON *lab = get(row, "label");
    const char *label = cJSON_IsString(lab) ? lab->valuestring : NULL;
    const cJSON *cs = case_of(params, label, i);
    const cJSON *share = get(row, "share");
    const cJSON *whole = get(share, "whole_plan");
    snprintf(f, sizeof f, "rows[%d]", i++);
    if (i > VAL_MAX_ROWS) break;
    if ((rc = api_get_num(row, "step_ms", f, 1, 1e-6, 1e9, &ms, err))) goto cleanup;
    if (!cs) {
      char lf[112];
      snprintf(lf, sizeof lf, "%s.label", f);
      rc = svc_err_set(err, SVC_BAD_FIELD, lf, "%s: validation %lld has no such case", lf,
                       (long long)j->id);
      goto cleanup;
    }
    if (cJSON_IsFalse(whole)) continue; /* one rank's share: not a whole step */
    if (acc->n == acc->cap) {
      size_t cap = acc->cap ? 2 * acc->cap : 8;
      vrow *g = realloc(acc->v, cap * sizeof *g);
      if (!g) {
        rc = svc_err_set(err, SVC_NOMEM, "", NULL);
        goto cleanup;
      }
      acc->v = g, acc->cap = cap;
    }
    vrow *v = &acc->v[acc->n];
    memset(v, 0, sizeof *v);
    char wp[96], rp[112];
    snprintf(wp, sizeof wp, "params.cases[%s].workload", label ? label : "?");
    snprintf(rp, sizeof rp, "%s.recipe", f);
    if ((rc = api_workload_decode(get(cs, "workload"), wp, &v->s.w, err))) goto cleanup;
    if (v->s.w.kind != COST_WL_DLRM) {
      api_workload_dispose(&v->s.w);
      rc = svc_err_set(err, SVC_BAD_FIELD, wp, "%s: a dlrm_step job prices DLRM workloads", wp);
      goto cleanup;
    }
    cost_workload decoded = v->s.w; /* its tables array; the expanded one is v->tabs */
    rc = expand_tables(&v->s.w, get(cs, "embedding_plan"), &v->tabs, err);
    api_workload_dispose(&decoded);
    if (rc || (rc = recipe_of(row, cs, rp, &v->s.r, err))) {
      free(v->tabs);
      goto cleanup;
    }
    v->s.step_ms = ms;
    v->job = j->id;
    /* the runner's host_mini (validate/gpu/dlrm_step.py _host_mini): the
     * case stepped again at a small batch on the same machine */
    const cJSON *hm = get(row, "host_mini"), *hb = get(hm, "batch"), *hs = get(hm, "step_ms");
    if (cJSON_IsNumber(hb) && cJSON_IsNumber(hs) && hb->valuedouble >= 1 &&
        hb->valuedouble <= 1 << 24 && hs->valuedouble > 0 && isfinite(hs->valuedouble)) {
      v->mini_batch = (int64_t)hb->valuedouble;
      v->mini_ms = hs->valuedouble;
    }
    snprintf(v->label, sizeof v->label, "%s", label ? label : "");
    acc->n++;
  }
cleanup:
  cJSON_Delete(params);
  return rc;
}

/* job's rows if it may calibrate hw: 1 added, 0 skipped (*why), <0 error. */
static int take_job(api_ctx *ctx, const cost_hw *hw, const hwdb_job *j, vrows *acc, char *why,
                    size_t wsize, svc_err *err) {
  cJSON *res = j->result ? cJSON_Parse(j->result) : NULL;
  int rc;
  if (!res) {
    snprintf(why, wsize, "the result is not readable JSON");
    return 0;
  }
  const cJSON *dev = get(res, "device");
  char dwhy[256];
  if (!cJSON_IsObject(dev) || api_device_check(hw, dev, dwhy, sizeof dwhy) != 1) {
    snprintf(why, wsize, "%s",
             cJSON_IsObject(dev) ? dwhy : "the result names no device: it cannot calibrate");
    cJSON_Delete(res);
    return 0;
  }
  rc = job_rows(j, res, acc, err);
  (void)ctx;
  cJSON_Delete(res);
  return rc ? rc : 1;
}

/* The other side's job of the plan validation job ran in (0: none). */
static int64_t partner_of(api_ctx *ctx, const hwdb_job *j) {
  char plan[40];
  hwdb_plan_val links[64];
  size_t n = 0;
  int64_t best = 0, side_idx = -1;
  svc_err e;
  if (hwdb_plan_val_plan_of(ctx->db, j->id, plan, sizeof plan, &e) ||
      hwdb_plan_val_list(ctx->db, plan, links, 64, &n, &e))
    return 0;
  for (size_t i = 0; i < n; i++)
    if (links[i].job_id == j->id) side_idx = (int64_t)i;
  for (size_t i = 0; side_idx >= 0 && i < n; i++) {
    if (!strcmp(links[i].side, links[side_idx].side)) continue;
    if (!best || llabs(links[i].job_id - j->id) < llabs(best - j->id)) best = links[i].job_id;
  }
  for (size_t i = 0; i < n; i++) hwdb_plan_val_dispose(&links[i]);
  return best;
}

static double predict(const cost_hw *hw, const vrow *v) {
  cost_step_result r;
  return cost_step(hw, &v->s.w, &v->s.r, &r) == 0 && r.step_ms > 0 ? r.step_ms : NAN;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The median of v[0..n) (n > 0), sorting v in place. */
static double median_of(double *v, size_t n) {
  qsort(v, n, sizeof *v, cmp_d);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Rows with predicted before/after and the medians of |pred/meas - 1|. */
static cJSON *rows_json(const vrows *r, size_t from, size_t to, double *med_after) {
  cJSON *o = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(o, "rows");
  double eb[VAL_CHECK_JOBS * 2], ea[VAL_CHECK_JOBS * 2];
  size_t m = 0;
  for (size_t i = from; i < to; i++) {
    const vrow *v = &r->v[i];
    cJSON *x = cJSON_CreateObject();
    cJSON_AddNumberToObject(x, "job", (double)v->job);
    cJSON_AddStringToObject(x, "label", v->label);
    cJSON_AddNumberToObject(x, "measured_step_ms", v->s.step_ms);
    if (isfinite(v->before_ms) && isfinite(v->after_ms)) {
      cJSON_AddNumberToObject(x, "predicted_before_ms", v->before_ms);
      cJSON_AddNumberToObject(x, "predicted_after_ms", v->after_ms);
      cJSON_AddNumberToObject(x, "rel_error_before", v->before_ms / v->s.step_ms - 1);
      cJSON_AddNumberToObject(x, "rel_error_after", v->after_ms / v->s.step_ms - 1);
      if (m < sizeof eb / sizeof eb[0]) {
        eb[m] = fabs(v->before_ms / v->s.step_ms - 1);
        ea[m++] = fabs(v->after_ms / v->s.step_ms - 1);
      }
    }
    cJSON_AddItemToArray(arr, x);
  }
  cJSON_AddNumberToObject(o, "n", (double)m);
  *med_after = NAN;
  if (m) {
    double mb = median_of(eb, m), ma = median_of(ea, m);
    cJSON_AddNumberToObject(o, "median_abs_rel_error_before", mb);
    cJSON_AddNumberToObject(o, "median_abs_rel_error_after", ma);
    *med_after = ma;
  }
  return o;
}

/* Add or replace one named entry (0, or -1 when the calibration is full). */
static int calib_set(cost_calib *c, const char *name, double v) {
  for (int i = 0; i < c->n && i < COST_MAX_CALIB; i++)
    if (!strcmp(c->names[i], name)) {
      c->values[i] = v;
      return 0;
    }
  if (c->n >= COST_MAX_CALIB) return -1;
  snprintf(c->names[c->n], sizeof c->names[c->n], "%s", name);
  c->values[c->n++] = v;
  return 0;
}

static cJSON *ids_json(const int64_t *ids, size_t n) {
  cJSON *a = cJSON_CreateArray();
  for (size_t i = 0; i < n; i++) cJSON_AddItemToArray(a, cJSON_CreateNumber((double)ids[i]));
  return a;
}

/* Fitted rows are r->v[0..nfit); the check rows follow. */
static int fit_and_store(api_ctx *ctx, cost_hw *hw, vrows *r, size_t nfit, cJSON *doc,
                         svc_err *err) {
  cost_calib calib = hw->calib;
  cost_step_val_report rep;
  cost_step_sample *fs = malloc((nfit ? nfit : 1) * sizeof *fs);
  char *text = NULL;
  int rc = 0, version = 0;
  if (!fs) return svc_err_set(err, SVC_NOMEM, "", NULL);
  for (size_t i = 0; i < r->n; i++) r->v[i].before_ms = predict(hw, &r->v[i]);
  for (size_t i = 0; i < nfit; i++) fs[i] = r->v[i].s;
  int frc = cost_step_val_fit(hw, fs, nfit, &calib, &rep);
  free(fs);
  if (frc == COST_ENOHW) return svc_err_set(err, SVC_INTERNAL, "", "the calibration is full");
  if (frc)
    return svc_err_set(err, SVC_BAD_FIELD, "rows",
                       "no scale can be fitted on %s: the step model prices none of the fitted "
                       "rows, or their steps are host-bound (GPU and link time hidden)",
                       hw->name);
  cost_hw after = *hw;
  after.calib = calib;
  for (size_t i = 0; i < r->n; i++) r->v[i].after_ms = predict(&after, &r->v[i]);
  cJSON *p = cJSON_AddObjectToObject(doc, "params");
  if (rep.fitted_g) cJSON_AddNumberToObject(p, "step_dlrm_gpu_scale", rep.g);
  if (rep.fitted_u) cJSON_AddNumberToObject(p, "step_uvm_link_scale", rep.u);
  cJSON_AddNumberToObject(doc, "rms_log_error_before", rep.rms_log_before);
  cJSON_AddNumberToObject(doc, "rms_log_error_after", rep.rms_log_after);
  double mf, mc;
  cJSON_AddItemToObject(doc, "fit", rows_json(r, 0, nfit, &mf));
  cJSON *chk = rows_json(r, nfit, r->n, &mc);
  cJSON_AddItemToObject(doc, "check", chk);
  /* the held-out median rides along in the version (no model reads it) for
   * the answers' provenance */
  if (isfinite(mc) && calib_set(&calib, "step_val_check_rel_err", mc))
    return svc_err_set(err, SVC_INTERNAL, "", "the calibration is full");
  if (!(text = api_print(doc))) return svc_err_set(err, SVC_NOMEM, "", NULL);
  rc = api_calib_store(ctx, hw->name, &calib, text, &version, err);
  free(text);
  if (!rc) cJSON_ReplaceItemInObject(doc, "version", cJSON_CreateNumber(version));
  return rc;
}

int api_val_step_at_host(api_ctx *ctx, const hwdb_job *job, cJSON **out, svc_err *err) {
  cost_hw hw;
  vrows r = {0};
  cJSON *res = job->result ? cJSON_Parse(job->result) : NULL, *doc, *arr;
  double e[VAL_MAX_ROWS];
  size_t m = 0, shown = 0;
  int rc;
  *out = NULL;
  if (!res) return 0;
  if ((rc = api_hw_lookup(ctx, job->hw, 1, &hw, err)) || (rc = job_rows(job, res, &r, err))) {
    cJSON_Delete(res);
    vrows_dispose(&r);
    return rc;
  }
  cJSON_Delete(res);
  doc = cJSON_CreateObject();
  arr = cJSON_AddArrayToObject(doc, "rows");
  for (size_t i = 0; i < r.n; i++) {
    vrow *v = &r.v[i];
    cost_recipe rc2 = v->s.r;
    cost_step_result sr;
    svc_err e2;
    int clamped = 0;
    if (!v->mini_batch) continue;
    shown++;
    cJSON *x = cJSON_CreateObject();
    cJSON_AddItemToArray(arr, x);
    cJSON_AddStringToObject(x, "label", v->label);
    cJSON_AddNumberToObject(x, "host_mini_batch", (double)v->mini_batch);
    cJSON_AddNumberToObject(x, "host_mini_step_ms", v->mini_ms);
    cJSON_AddNumberToObject(x, "measured_step_ms", v->s.step_ms);
    rc2.host_op_us = 0;
    rc2.host_mini_batch = v->mini_batch;
    rc2.host_mini_step_ms = v->mini_ms;
    if (api_recipe_host_mini(&hw, &v->s.w, &rc2, "host_mini", &clamped, &e2)) {
      cJSON_AddStringToObject(x, "skipped", e2.message); /* e.g. no op from the host */
      continue;
    }
    if (cost_step(&hw, &v->s.w, &rc2, &sr) || !(sr.step_ms > 0)) {
      cJSON_AddStringToObject(x, "skipped", "the step model cannot price this case");
      continue;
    }
    cJSON_AddNumberToObject(x, "host_op_us", rc2.host_op_us);
    cJSON_AddBoolToObject(x, "clamped", clamped);
    cJSON_AddNumberToObject(x, "predicted_ms", sr.step_ms);
    cJSON_AddNumberToObject(x, "rel_error", sr.step_ms / v->s.step_ms - 1);
    if (m < VAL_MAX_ROWS) e[m++] = fabs(sr.step_ms / v->s.step_ms - 1);
  }
  vrows_dispose(&r);
  if (!shown) { /* no row carries a host_mini: no section */
    cJSON_Delete(doc);
    return 0;
  }
  cJSON_AddStringToObject(
      doc, "meaning",
      "each whole-step case re-priced at the host it ran on: the per-op host time at which the "
      "step model meets the run's own host_mini step (the mini route, docs/step-model.md), "
      "with the calibration in use now");
  if (m) {
    cJSON_AddNumberToObject(doc, "median_abs_rel_error", median_of(e, m));
    cJSON_AddNumberToObject(doc, "max_abs_rel_error", e[m - 1]); /* sorted by median_of */
  }
  *out = doc;
  return 0;
}

int api_val_step_calibrate(api_ctx *ctx, const hwdb_job *job, cJSON **out, svc_err *err) {
  cost_hw hw;
  vrows r = {0};
  hwdb_job *list = NULL, pj = {0};
  size_t nl = 0, nfit = 0;
  int64_t fit_ids[2] = {job->id, 0};
  size_t n_ids = 1;
  char why[300];
  cJSON *doc = NULL, *skipped;
  int rc;
  *out = NULL;
  if ((rc = api_hw_lookup(ctx, job->hw, 1, &hw, err))) return rc;
  doc = cJSON_CreateObject();
  cJSON_AddStringToObject(doc, "kind", "step_validation");
  cJSON_AddStringToObject(doc, "hardware", hw.name);
  cJSON_AddNumberToObject(doc, "version", 0);
  cJSON_AddNumberToObject(doc, "base_version", hw.calib.version);
  /* fitted: the job and its plan partner; both must have run on hw */
  if ((fit_ids[1] = partner_of(ctx, job)) > 0) n_ids = 2;
  for (size_t k = 0; k < n_ids && !rc; k++) {
    const hwdb_job *j = job;
    if (k) {
      if ((rc = hwdb_job_get(ctx->db, fit_ids[k], &pj, err))) break;
      j = &pj;
      if (strcmp(pj.state, "done") || strcmp(pj.kind, "dlrm_step") || strcmp(pj.hw, job->hw)) {
        n_ids = 1; /* the partner has not finished: the job alone */
        break;
      }
    }
    int t = take_job(ctx, &hw, j, &r, why, sizeof why, err);
    if (t == 0)
      rc = svc_err_set(err, SVC_CONFLICT, "device", "validation %lld cannot calibrate %s: %s",
                       (long long)j->id, hw.name, why);
    else if (t < 0)
      rc = t;
  }
  if (rc) goto cleanup;
  nfit = r.n;
  if (nfit == 0) {
    rc = svc_err_set(err, SVC_BAD_FIELD, "rows",
                     "no row of validation %lld is a whole step (each ran a rank's share)",
                     (long long)job->id);
    goto cleanup;
  }
  cJSON *fj = cJSON_AddObjectToObject(doc, "fitted_on");
  cJSON_AddItemToObject(fj, "jobs", ids_json(fit_ids, n_ids));
  cJSON *jr = job->result ? cJSON_Parse(job->result) : NULL;
  if (cJSON_IsObject(get(jr, "device")))
    cJSON_AddItemToObject(fj, "device", cJSON_Duplicate(get(jr, "device"), 1));
  cJSON_Delete(jr);
  /* checked: other finished dlrm_step jobs of this hardware */
  skipped = cJSON_CreateArray();
  /* listed without results (a sweep's is megabytes); a candidate's is read */
  if ((rc = hwdb_job_list_flags(ctx->db, 0, VAL_CHECK_JOBS, HWDB_JOB_NO_RESULT, &list, &nl, err)))
    goto cleanup;
  cJSON *cids = cJSON_CreateArray();
  for (size_t i = 0; i < nl; i++) {
    const hwdb_job *j = &list[i];
    if (j->id == fit_ids[0] || (n_ids > 1 && j->id == fit_ids[1]) || strcmp(j->kind, "dlrm_step") ||
        strcmp(j->hw, job->hw) || strcmp(j->state, "done"))
      continue;
    svc_err e;
    hwdb_job full = {0};
    int t = hwdb_job_get(ctx->db, j->id, &full, &e);
    if (t == 0) t = take_job(ctx, &hw, &full, &r, why, sizeof why, &e);
    hwdb_job_dispose(&full);
    if (t == 1) {
      cJSON_AddItemToArray(cids, cJSON_CreateNumber((double)j->id));
      continue;
    }
    cJSON *s = cJSON_CreateObject();
    cJSON_AddNumberToObject(s, "job", (double)j->id);
    cJSON_AddStringToObject(s, "reason", t < 0 ? e.message : why);
    cJSON_AddItemToArray(skipped, s);
  }
  cJSON *cj = cJSON_AddObjectToObject(doc, "checked_on");
  cJSON_AddItemToObject(cj, "jobs", cids);
  cJSON_AddItemToObject(cj, "skipped", skipped);
  rc = fit_and_store(ctx, &hw, &r, nfit, doc, err);
cleanup:
  hwdb_job_list_free(list, nl);
  hwdb_job_dispose(&pj);
  vrows_dispose(&r);
  if (rc)
    cJSON_Delete(doc);
  else
    *out = doc;
  return rc;
}
