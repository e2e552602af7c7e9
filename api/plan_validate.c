/* Validating a stored plan as planned (POST /v1/plans/{id}/validations,
 * `cdplan validate plan ID`): two runner jobs of kind dlrm_step on the same
 * workload, one running the plan's baseline recipe and one its planned
 * recipe, each carrying cdplan's own documents (workload, recipe,
 * embedding_plan) and the step time the plan predicted for it. A compare
 * (its target plan) validates the direct port (the source's tuned recipe
 * and placement run unchanged on the target) against the target's plan;
 * the port's recipe was made for another accelerator and is recorded as
 * such (recipe_for), while the job's hardware is the one it ran on (ran_on),
 * the only one its result may calibrate.
 *
 * The links (hwdb plan_validation) keep what the plan predicted per side;
 * the measurement is the job's result, whichever path stored it. GET
 * /v1/plans/{id} adds "validation": predicted against measured step time,
 * peak memory and gain, and whether the device the runner reported is the
 * accelerator the job was for (api_device_check).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#include "api/api_plan.h"
#include "api/api_validate.h"

#define MAX_LINKS 256 /* validation jobs of one plan read back */

static const char *const req_fields[] = {"backend", "gpus",       "timeout_s",       "steps",
                                         "warmup",  "gpu_type",   "partition",       "account",
                                         "qos",     "constraint", "host_mini_batch", NULL};

/* One side of a plan: borrowed from the stored result document. */
typedef struct {
  const char *side;       /* "baseline" | "planned" */
  const cJSON *recipe;    /* the recipe document */
  const cJSON *emb_plan;  /* embedding_plan or NULL */
  const cJSON *pred;      /* object with step_ms, peak_memory_bytes, samples_per_s */
  const char *recipe_for; /* the accelerator the recipe was made for */
} side_src;

static const cJSON *get(const cJSON *o, const char *k) {
  return cJSON_GetObjectItemCaseSensitive(o, k);
}

static const char *str_of(const cJSON *o, const char *k, const char *dflt) {
  const cJSON *v = get(o, k);
  return cJSON_IsString(v) ? v->valuestring : dflt;
}

static double num_of(const cJSON *o, const char *k) {
  const cJSON *v = get(o, k);
  return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* The two sides of a stored plan or compare; 409 when the stored document
 * lacks what a run needs. */
static int sides_of(const hwdb_plan *p, const cJSON *res, side_src s[2], svc_err *err) {
  memset(s, 0, 2 * sizeof *s);
  s[0].side = "baseline", s[1].side = "planned";
  if (!strcmp(p->kind, "compare")) {
    const cJSON *port = get(res, "direct_port"), *to = get(res, "to");
    const cJSON *tuned = get(res, "tuned_source"), *from = get(res, "from");
    s[0].recipe = get(port, "recipe"), s[0].pred = port;
    s[0].emb_plan = get(tuned, "embedding_plan");
    s[0].recipe_for = str_of(from, "hardware", str_of(tuned, "hardware", p->hw));
    s[1].recipe = get(to, "recipe"), s[1].pred = to, s[1].emb_plan = get(to, "embedding_plan");
    s[1].recipe_for = str_of(to, "hardware", p->hw);
  } else {
    const cJSON *bl = get(res, "baseline");
    s[0].recipe = get(bl, "recipe"), s[0].pred = bl, s[0].emb_plan = get(bl, "embedding_plan");
    s[1].recipe = get(res, "recipe"), s[1].pred = res, s[1].emb_plan = get(res, "embedding_plan");
    s[0].recipe_for = s[1].recipe_for = p->hw;
  }
  for (int i = 0; i < 2; i++)
    if (!cJSON_IsObject(s[i].recipe))
      return svc_err_set(err, SVC_CONFLICT, "id", "plan '%s' stores no %s recipe", p->id,
                         s[i].side);
  return 0;
}

static cJSON *predicted_json(const cJSON *pred) {
  static const char *const keys[] = {"step_ms", "peak_memory_bytes", "samples_per_s"};
  cJSON *o = cJSON_CreateObject();
  for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
    double v = num_of(pred, keys[i]);
    if (isfinite(v))
      cJSON_AddNumberToObject(o, keys[i], v);
    else
      cJSON_AddNullToObject(o, keys[i]);
  }
  return o;
}

/* The runner job of one side, as a POST /v1/validations body. */
static cJSON *job_body(const hwdb_plan *p, const cJSON *workload, const side_src *s,
                       const cJSON *req, const char *backend) {
  static const char *const copy[] = {"gpus",    "timeout_s", "gpu_type",   "partition",
                                     "account", "qos",       "constraint", NULL};
  cJSON *b = cJSON_CreateObject(), *params, *cases, *c, *pred, *pc, *pcase;
  cJSON_AddStringToObject(b, "kind", "dlrm_step");
  cJSON_AddStringToObject(b, "hardware", p->hw);
  cJSON_AddStringToObject(b, "backend", backend);
  for (int i = 0; copy[i]; i++) {
    const cJSON *v = get(req, copy[i]);
    if (v) cJSON_AddItemToObject(b, copy[i], cJSON_Duplicate(v, 1));
  }
  params = cJSON_AddObjectToObject(b, "params");
  if (get(req, "steps"))
    cJSON_AddItemToObject(params, "steps", cJSON_Duplicate(get(req, "steps"), 1));
  if (get(req, "warmup"))
    cJSON_AddItemToObject(params, "warmup", cJSON_Duplicate(get(req, "warmup"), 1));
  /* each one-GPU case stepped again at this small batch: its own host
   * (validate/gpu/dlrm_step.py _host_mini; docs/step-model.md "The mini
   * route") */
  if (get(req, "host_mini_batch"))
    cJSON_AddItemToObject(params, "host_mini_batch",
                          cJSON_Duplicate(get(req, "host_mini_batch"), 1));
  cases = cJSON_AddArrayToObject(params, "cases");
  c = cJSON_CreateObject();
  cJSON_AddStringToObject(c, "label", s->side);
  cJSON_AddItemToObject(c, "workload", cJSON_Duplicate(workload, 1));
  cJSON_AddItemToObject(c, "recipe", cJSON_Duplicate(s->recipe, 1));
  if (cJSON_IsObject(s->emb_plan))
    cJSON_AddItemToObject(c, "embedding_plan", cJSON_Duplicate(s->emb_plan, 1));
  cJSON_AddItemToArray(cases, c);
  double ms = num_of(s->pred, "step_ms");
  if (isfinite(ms) && ms > 0) {
    pred = cJSON_AddObjectToObject(b, "prediction");
    cJSON_AddStringToObject(pred, "metric", "step_ms");
    pc = cJSON_AddArrayToObject(pred, "cases");
    pcase = cJSON_CreateObject();
    cJSON_AddNumberToObject(pcase, "value", ms);
    cJSON *m = cJSON_AddObjectToObject(pcase, "match");
    cJSON_AddStringToObject(m, "label", s->side);
    cJSON_AddItemToArray(pc, pcase);
  }
  return b;
}

static int check_request(api_ctx *ctx, const cJSON *req, const char **backend, svc_err *err) {
  int64_t v = 0;
  int rc;
  (void)ctx;
  if ((rc = api_check_fields(req, req_fields, "", err)) ||
      (rc = api_get_str(req, "backend", "", 0, 16, NULL, backend, err)) ||
      (rc = api_get_int(req, "gpus", "", 0, 1, 64, &v, err)) ||
      (rc = api_get_int(req, "timeout_s", "", 0, 1, 7 * 86400, &v, err)) ||
      (rc = api_get_int(req, "steps", "", 0, 1, 100000, &v, err)) ||
      (rc = api_get_int(req, "warmup", "", 0, 0, 1000, &v, err)) ||
      (rc = api_get_int(req, "host_mini_batch", "", 0, 1, 65536, &v, err)))
    return rc;
  val_slurm_opts so;
  if ((rc = api_slurm_opts(req, &so, err))) return rc;
  if (strcmp(*backend, "local") && strcmp(*backend, "slurm") && strcmp(*backend, "bundle"))
    return svc_err_set(err, SVC_BAD_FIELD, "backend", "backend must be local, slurm or bundle");
  return 0;
}

static int read_plan(api_ctx *ctx, const char *id, hwdb_plan *p, svc_err *err) {
  size_t n = id ? strlen(id) : 0;
  memset(p, 0, sizeof *p);
  if (n != 16 || strspn(id, "0123456789abcdef") != n)
    return svc_err_set(err, SVC_NOT_FOUND, "id", "no plan '%.40s'", id ? id : "");
  return hwdb_plan_get(ctx->db, id, p, err);
}

int api_plan_validate(api_ctx *ctx, const char *id, const char *body, size_t len,
                      const api_plan_val_opts *opts, char **out, svc_err *err) {
  hwdb_plan p;
  cJSON *req = NULL, *res = NULL, *preq = NULL, *doc = NULL, *jobs;
  const char *backend = "local";
  side_src s[2];
  cost_hw hw;
  int rc;
  *out = NULL;
  if ((rc = read_plan(ctx, id, &p, err))) return rc;
  if (!body || len == 0 || (len == 2 && !memcmp(body, "{}", 2)))
    req = cJSON_CreateObject();
  else if ((rc = api_parse_body(body, len, &req, err)))
    goto cleanup;
  if ((rc = check_request(ctx, req, &backend, err))) goto cleanup;
  if (opts && opts->backend) backend = opts->backend;
  if (strcmp(backend, "local") && strcmp(backend, "slurm") && strcmp(backend, "bundle")) {
    rc = svc_err_set(err, SVC_BAD_FIELD, "backend", "backend must be local, slurm or bundle");
    goto cleanup;
  }
  if (!(res = cJSON_Parse(p.result)) || !(preq = cJSON_Parse(p.request))) {
    rc = svc_err_set(err, SVC_INTERNAL, "id", "plan '%s' is stored unreadable", p.id);
    goto cleanup;
  }
  const cJSON *wl = get(preq, "workload");
  if (!cJSON_IsObject(wl) || strcmp(str_of(wl, "kind", ""), "dlrm")) {
    rc = svc_err_set(err, SVC_BAD_FIELD, "id", "only DLRM plans are validated by the runner");
    goto cleanup;
  }
  /* a dense block is priced from its GEMMs or figures only: the runner
   * has no model of it to build */
  if (get(wl, "dense_block")) {
    rc = svc_err_set(err, SVC_BAD_FIELD, "id",
                     "plan '%s': its workload has a dense_block, which the runner cannot build "
                     "(it is priced from its GEMMs or figures only); validate a plan of the "
                     "workload without it",
                     p.id);
    goto cleanup;
  }
  if ((rc = sides_of(&p, res, s, err)) || (rc = api_hw_lookup(ctx, p.hw, 0, &hw, err)))
    goto cleanup;
  doc = cJSON_CreateObject();
  cJSON_AddStringToObject(doc, "plan", p.id);
  cJSON_AddStringToObject(doc, "kind", p.kind);
  jobs = cJSON_AddArrayToObject(doc, "jobs");
  for (int i = 0; i < 2 && !rc; i++) {
    char *text = NULL, *jout = NULL, dir[4096];
    cJSON *jb = job_body(&p, wl, &s[i], req, backend), *jd = NULL, *info = NULL;
    api_val_opts vo = {.backend = NULL, .bundle_dir = NULL, .flags = opts ? opts->flags : 0};
    if (opts && opts->bundle_dir) {
      snprintf(dir, sizeof dir, "%s/%s", opts->bundle_dir, s[i].side);
      vo.bundle_dir = dir;
    }
    if (!(text = api_print(jb))) rc = svc_err_set(err, SVC_NOMEM, "", NULL);
    if (!rc) rc = api_validation_submit_opts(ctx, text, strlen(text), &vo, &jout, err);
    if (!rc && !(jd = cJSON_Parse(jout))) rc = svc_err_set(err, SVC_NOMEM, "", NULL);
    if (!rc) {
      info = cJSON_CreateObject();
      cJSON_AddItemToObject(info, "predicted", predicted_json(s[i].pred));
      cJSON_AddStringToObject(info, "recipe_for", s[i].recipe_for);
      cJSON_AddStringToObject(info, "ran_on", p.hw);
      char *itext = api_print(info);
      int64_t jid = (int64_t)num_of(jd, "id");
      rc = itext ? hwdb_plan_val_add(ctx->db, p.id, s[i].side, jid, itext, err)
                 : svc_err_set(err, SVC_NOMEM, "", NULL);
      free(itext);
      cJSON_AddStringToObject(jd, "side", s[i].side);
      cJSON_AddItemToArray(jobs, jd);
      jd = NULL;
    }
    cJSON_Delete(info);
    cJSON_Delete(jd);
    cJSON_Delete(jb);
    free(text);
    free(jout);
  }
  if (rc) goto cleanup;
  cJSON *v = NULL;
  if ((rc = api_plan_validation_json(ctx, p.id, &v, err))) goto cleanup;
  if (v) cJSON_AddItemToObject(doc, "validation", v);
  if (!(*out = api_print(doc))) rc = svc_err_set(err, SVC_NOMEM, "", NULL);
cleanup:
  hwdb_plan_dispose(&p);
  cJSON_Delete(req);
  cJSON_Delete(res);
  cJSON_Delete(preq);
  cJSON_Delete(doc);
  return rc;
}

/* ---- reading a validation back ------------------------------------------------ */

static void add_num_or_null(cJSON *o, const char *k, double v) {
  if (isfinite(v))
    cJSON_AddNumberToObject(o, k, v);
  else
    cJSON_AddNullToObject(o, k);
}

static double rel(double pred, double meas) {
  return isfinite(pred) && isfinite(meas) && meas > 0 ? (pred - meas) / meas : NAN;
}

/* The row of side's label in a result (rows, else failed), or NULL. */
static const cJSON *row_of(const cJSON *result, const char *side, int *failed) {
  static const char *const lists[] = {"rows", "failed"};
  for (int l = 0; l < 2; l++) {
    const cJSON *r;
    cJSON_ArrayForEach(r, get(result, lists[l])) {
      if (!strcmp(str_of(r, "label", ""), side)) {
        *failed = l;
        return r;
      }
    }
  }
  return NULL;
}

/* One side: the job's state, the prediction, the measurement when the job
 * is done, their relative errors, and whether the device matches. */
static int side_json(api_ctx *ctx, const hwdb_plan_val *v, cJSON **out, double *pred_sps,
                     double *meas_sps, svc_err *err) {
  hwdb_job j;
  cJSON *o = cJSON_CreateObject(), *info = cJSON_Parse(v->info), *result = NULL;
  int rc = api_validation_poll_id(ctx, v->job_id, err);
  if (rc == -SVC_NOT_FOUND) rc = 0;
  if (rc || (rc = hwdb_job_get(ctx->db, v->job_id, &j, err))) {
    cJSON_Delete(o);
    cJSON_Delete(info);
    return rc;
  }
  cJSON *pred = cJSON_DetachItemFromObjectCaseSensitive(info, "predicted");
  cJSON_AddNumberToObject(o, "job", (double)v->job_id);
  cJSON_AddStringToObject(o, "state", j.state);
  cJSON_AddStringToObject(o, "backend", j.backend);
  cJSON_AddStringToObject(o, "ran_on", j.hw);
  const char *rf = str_of(info, "recipe_for", j.hw);
  cJSON_AddStringToObject(o, "recipe_for", rf);
  cJSON_AddBoolToObject(o, "ran_on_other_gpu", strcmp(rf, j.hw) != 0);
  cJSON_AddItemToObject(o, "predicted", pred ? pred : cJSON_CreateObject());
  *pred_sps = num_of(pred, "samples_per_s");
  *meas_sps = NAN;
  if (j.note) cJSON_AddStringToObject(o, "note", j.note);
  int failed = 0;
  const cJSON *row = NULL;
  if (!strcmp(j.state, "done") && (result = cJSON_Parse(j.result)))
    row = row_of(result, v->side, &failed);
  if (row && !failed) {
    static const char *const keys[] = {"step_ms", "peak_memory_bytes", "samples_per_s"};
    cJSON *m = cJSON_AddObjectToObject(o, "measured"), *e = cJSON_CreateObject();
    for (size_t k = 0; k < 3; k++) {
      double mv = num_of(row, keys[k]);
      add_num_or_null(m, keys[k], mv);
      if (k < 2) add_num_or_null(e, keys[k], rel(num_of(pred, keys[k]), mv));
    }
    cJSON_AddItemToObject(o, "rel_error", e);
    *meas_sps = num_of(row, "samples_per_s");
    if (get(row, "share")) cJSON_AddItemToObject(o, "share", cJSON_Duplicate(get(row, "share"), 1));
  } else {
    cJSON_AddNullToObject(o, "measured");
    if (row) cJSON_AddStringToObject(o, "reason", str_of(row, "reason", "the case failed"));
  }
  const cJSON *dev = get(result, "device");
  if (cJSON_IsObject(dev)) {
    cost_hw hw;
    char why[256];
    cJSON_AddItemToObject(o, "device", cJSON_Duplicate(dev, 1));
    cJSON *dc = cJSON_AddObjectToObject(o, "device_check");
    int ok = api_hw_lookup(ctx, j.hw, 0, &hw, err) == 0 &&
             api_device_check(&hw, dev, why, sizeof why) == 1;
    cJSON_AddBoolToObject(dc, "matches", ok);
    if (!ok) cJSON_AddStringToObject(dc, "why", why);
    if (ok)
      cJSON_AddStringToObject(o, "calibrates", j.hw);
    else
      cJSON_AddNullToObject(o, "calibrates");
  }
  hwdb_job_dispose(&j);
  cJSON_Delete(result);
  cJSON_Delete(info);
  *out = o;
  return 0;
}

int api_plan_validation_json(api_ctx *ctx, const char *plan_id, cJSON **out, svc_err *err) {
  hwdb_plan_val *links = NULL;
  size_t n = 0;
  int rc;
  *out = NULL;
  if (!(links = calloc(MAX_LINKS, sizeof *links))) return svc_err_set(err, SVC_NOMEM, "", NULL);
  if ((rc = hwdb_plan_val_list(ctx->db, plan_id, links, MAX_LINKS, &n, err)) || n == 0) goto done;
  /* the latest job of each side (the links come newest first) */
  const hwdb_plan_val *last[2] = {NULL, NULL};
  for (size_t i = n; i-- > 0;) last[strcmp(links[i].side, "baseline") ? 1 : 0] = &links[i];
  cJSON *v = cJSON_CreateObject();
  double ps[2] = {NAN, NAN}, ms[2] = {NAN, NAN};
  cJSON_AddNumberToObject(v, "jobs", (double)n); /* at most MAX_LINKS are read */
  for (int k = 0; k < 2 && !rc; k++) {
    cJSON *sd = NULL;
    if (!last[k]) continue;
    if (!(rc = side_json(ctx, last[k], &sd, &ps[k], &ms[k], err)))
      cJSON_AddItemToObject(v, k ? "planned" : "baseline", sd);
  }
  cJSON *g = cJSON_AddObjectToObject(v, "gain");
  double gp = ps[0] > 0 ? ps[1] / ps[0] : NAN, gm = ms[0] > 0 ? ms[1] / ms[0] : NAN;
  add_num_or_null(g, "predicted", gp);
  add_num_or_null(g, "measured", gm);
  add_num_or_null(g, "rel_error", rel(gp, gm));
  if (rc)
    cJSON_Delete(v);
  else
    *out = v;
done:
  for (size_t i = 0; i < n; i++) hwdb_plan_val_dispose(&links[i]);
  free(links);
  return rc;
}

/* ---- the device a result ran on ------------------------------------------------ */

/* Lower-case alphanumeric tokens of s into tok[][32]; how many. */
static int tokens(const char *s, char tok[][32], int max) {
  int n = 0;
  while (s && *s && n < max) {
    size_t k = 0;
    while (*s &&
           !((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9')))
      s++;
    while (*s &&
           ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9'))) {
      if (k < 31) tok[n][k++] = (char)(*s >= 'A' && *s <= 'Z' ? *s - 'A' + 'a' : *s);
      s++;
    }
    tok[n][k] = '\0';
    if (k) n++;
  }
  return n;
}

int api_device_check(const cost_hw *hw, const cJSON *dev, char *why, size_t size) {
  char ht[4][32], dt[16][32];
  const char *name = str_of(dev, "name", NULL);
  if (!name) {
    snprintf(why, size, "the result names no device");
    return -1;
  }
  /* name family: the descriptor's first name token ("h100" of "h100-sxm",
   * "mi300x") is one of the device's tokens ("NVIDIA H100 80GB HBM3") */
  int nh = tokens(hw->name, ht, 4), nd = tokens(name, dt, 16), fam = 0;
  for (int i = 0; nh && i < nd && !fam; i++) fam = !strcmp(ht[0], dt[i]);
  if (!fam) {
    snprintf(why, size, "the result ran on '%.80s', not a %s", name, hw->name);
    return 0;
  }
  /* memory within 10 %: torch reports total_memory in bytes; descriptors
   * give the HBM capacity, which drivers expose less a few per cent */
  double mem = num_of(dev, "memory_bytes");
  if (!isfinite(mem)) mem = num_of(dev, "mem_bytes");
  if (isfinite(mem) && hw->hbm_bytes > 0 && fabs(mem / hw->hbm_bytes - 1) > 0.10) {
    snprintf(why, size, "the device has %.1f GB, %s has %.1f GB (a partition or another model)",
             mem / 1e9, hw->name, hw->hbm_bytes / 1e9);
    return 0;
  }
  double cu = num_of(dev, "compute_units");
  if (!isfinite(cu)) cu = num_of(dev, "sms");
  if (isfinite(cu) && cu > 0 && hw->compute_units > 0 && (int)cu != hw->compute_units) {
    snprintf(why, size, "the device has %d compute units, %s has %d (a MIG slice or another bin)",
             (int)cu, hw->name, hw->compute_units);
    return 0;
  }
  why[0] = '\0';
  return 1;
}
