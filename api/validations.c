/* /v1/validations and `cdplan validate`: the JSON side of validation runs.
 * validate/ stores and dispatches jobs with params, predictions and
 * results as opaque text; this file is where that text is checked on the
 * way in (request fields, a result's shape and id) and given meaning on
 * the way out (the job document, the predicted-against-measured report).
 *
 * A prediction is {"metric":"ms","cases":[{"value":V,"match":{...}?}]}:
 * case i is compared with the first result row whose fields equal its
 * "match", else with row i; "metric" names the measured field (a dotted
 * path; defaults per kind). An estimate response {"results":[{"ms"}...]}
 * is accepted too and stored in that form.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#include "api/api_validate.h"
#include "api/val_join_int.h"
#include "validate/validate.h"

#define MAX_CASES 100000
_Static_assert(API_MAX_RESULT == VAL_MAX_RESULT, "one result size limit");
#define NAME_CHARS "abcdefghijklmnopqrstuvwxyz0123456789_."

static const char *const submit_fields[] = {
    "kind",     "hardware",  "params",  "prediction", "backend",    "timeout_s", "gpus",
    "gpu_type", "partition", "account", "qos",        "constraint", NULL};

#define SLURM_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-"

/* Slurm placement members of a request (a submission or a plan's
 * validation): names of Slurm's own objects, so letters, digits, '_', '.',
 * '-' (a constraint adds Slurm's operators & | , : * [ ] ( )), starting with
 * a letter or digit; 400 naming the member otherwise. */
int api_slurm_opts(const cJSON *doc, val_slurm_opts *so, svc_err *err) {
  static const char *const keys[5] = {"gpu_type", "partition", "account", "qos", "constraint"};
  const char **dst[5] = {&so->gpu_type, &so->partition, &so->account, &so->qos, &so->constraint};
  int rc;
  memset(so, 0, sizeof *so);
  for (int i = 0; i < 5; i++) {
    const char *v = NULL;
    if ((rc = api_get_str(doc, keys[i], "", 0, 64, i == 4 ? SLURM_CHARS "&|,:*[]()" : SLURM_CHARS,
                          &v, err)))
      return rc;
    if (v && (!*v || !strchr(SLURM_CHARS, *v) || *v == '-' || *v == '.' || *v == '_'))
      return svc_err_set(err, SVC_BAD_FIELD, keys[i], "%s must start with a letter or digit",
                         keys[i]);
    *dst[i] = v;
  }
  return 0;
}

static int parse_id(const char *s, int64_t *id, svc_err *err) {
  char *end = NULL;
  long long v = s && *s >= '1' && *s <= '9' && strlen(s) <= 15 ? strtoll(s, &end, 10) : 0;
  if (v <= 0 || !end || *end)
    return svc_err_set(err, SVC_BAD_FIELD, "id", "a validation id is a positive integer");
  *id = v;
  return 0;
}

/* A runner's result: a JSON object of at most VAL_MAX_RESULT bytes (a
 * large sweep is bigger than a request body may be). */
static int parse_result(const char *text, size_t len, cJSON **out, svc_err *err) {
  if (len > VAL_MAX_RESULT)
    return svc_err_set(err, SVC_TOO_LARGE, "", "a result is at most %u bytes", VAL_MAX_RESULT);
  /* The checks of every body (depth, \u0000, duplicate names, trailing
   * data, an object) at any size: a result past API_MAX_BODY was once only
   * parsed, so a duplicate "id" or trailing junk in a large sweep's result
   * was stored. */
  return api_parse_body_max(text, len, VAL_MAX_RESULT, out, err);
}

/* The result's check (validate/ calls it for output files and POSTs): a
 * JSON object, not an error report, of this job's kind and id. */
static int check_result(void *arg, int64_t id, const char *text, size_t len, svc_err *err) {
  api_ctx *ctx = arg;
  cJSON *doc = NULL;
  hwdb_job job = {0};
  int rc = parse_result(text, len, &doc, err);
  if (rc) return rc;
  const cJSON *e = cJSON_GetObjectItemCaseSensitive(doc, "error");
  const cJSON *jid = cJSON_GetObjectItemCaseSensitive(doc, "id");
  const cJSON *kind = cJSON_GetObjectItemCaseSensitive(doc, "kind");
  if (e) {
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(e, "message");
    rc = svc_err_set(err, SVC_BAD_FIELD, "error", "the runner reported an error: %.300s",
                     cJSON_IsString(m) ? m->valuestring : "(no message)");
  } else if (jid && !(cJSON_IsNumber(jid) && jid->valuedouble == (double)id)) {
    rc = svc_err_set(err, SVC_BAD_FIELD, "id", "the result is for another job (id %s)",
                     cJSON_IsNumber(jid) ? "differs" : "is not a number");
  } else if (kind && (rc = hwdb_job_get(ctx->db, id, &job, err)) == 0 &&
             (!cJSON_IsString(kind) || strcmp(kind->valuestring, job.kind))) {
    rc = svc_err_set(err, SVC_BAD_FIELD, "kind", "the result's kind is not the job's (%s)",
                     job.kind);
  }
  hwdb_job_dispose(&job);
  cJSON_Delete(doc);
  return rc;
}

static int cfg_for(api_ctx *ctx, val_cfg *cfg, svc_err *err) {
  int rc = val_cfg_init(cfg, hwdb_filename(ctx->db), err);
  cfg->check = check_result;
  cfg->check_arg = ctx;
  return rc;
}

int api_validation_bundle(api_ctx *ctx, const char *ids, char **data, size_t *len, svc_err *err) {
  hwdb_job j;
  int64_t id = 0;
  int rc;
  *data = NULL;
  *len = 0;
  if ((rc = parse_id(ids, &id, err)) || (rc = hwdb_job_get(ctx->db, id, &j, err))) return rc;
  if (strcmp(j.backend, "bundle"))
    rc = svc_err_set(err, SVC_CONFLICT, "id", "validation %lld runs on the %s backend: no bundle",
                     (long long)id, j.backend);
  else if (!j.workdir)
    rc = svc_err_set(err, SVC_NOT_FOUND, "id", "validation %lld has no bundle folder",
                     (long long)id);
  else
    rc = val_bundle_tar(j.workdir, id, data, len, err);
  hwdb_job_dispose(&j);
  return rc;
}

/* Poll job id's backend, unless another replica follows the jobs (it
 * polls; this one reads what it stored). */
static int poll_job(api_ctx *ctx, val_cfg *cfg, int64_t id, svc_err *err) {
  int following = 0, rc = api_validation_following(ctx, 0, &following, err);
  return rc ? rc : following ? val_poll(ctx->db, cfg, id, err) : 0;
}

int api_validation_poll_id(api_ctx *ctx, int64_t id, svc_err *err) {
  val_cfg cfg;
  int rc = cfg_for(ctx, &cfg, err);
  return rc ? rc : poll_job(ctx, &cfg, id, err);
}

/* Canonical prediction text (malloc'd) from the request's member. */
static int read_prediction(const cJSON *p, char **out, svc_err *err) {
  cJSON *canon = NULL, *cases;
  const cJSON *list, *it;
  const char *metric = NULL;
  char f[64];
  int rc = 0, i = 0;
  *out = NULL;
  if (!p || cJSON_IsNull(p)) return 0;
  if (!cJSON_IsObject(p))
    return svc_err_set(err, SVC_BAD_FIELD, "prediction", "prediction must be an object");
  canon = cJSON_CreateObject();
  cases = cJSON_AddArrayToObject(canon, "cases");
  list = cJSON_GetObjectItemCaseSensitive(p, "cases");
  int estimate = !list && (list = cJSON_GetObjectItemCaseSensitive(p, "results")) != NULL;
  if (!estimate && (rc = api_get_str(p, "metric", "prediction", 0, 64, NAME_CHARS, &metric, err)))
    goto cleanup;
  if (metric) cJSON_AddStringToObject(canon, "metric", metric);
  if (estimate) cJSON_AddStringToObject(canon, "metric", "ms");
  if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) > MAX_CASES) {
    rc = svc_err_set(err, SVC_BAD_FIELD, "prediction.cases",
                     "prediction needs cases (an array of at most %d)", MAX_CASES);
    goto cleanup;
  }
  cJSON_ArrayForEach(it, list) {
    double v = 0;
    api_path_index(f, sizeof f, "prediction", estimate ? "results" : "cases", i++);
    if (!cJSON_IsObject(it)) {
      rc = svc_err_set(err, SVC_BAD_FIELD, f, "%s must be an object", f);
      goto cleanup;
    }
    if ((rc = api_get_num(it, estimate ? "ms" : "value", f, 1, 1e-12, 1e12, &v, err))) goto cleanup;
    cJSON *c = cJSON_CreateObject();
    cJSON_AddNumberToObject(c, "value", v);
    const cJSON *m = estimate ? NULL : cJSON_GetObjectItemCaseSensitive(it, "match");
    if (m && !cJSON_IsObject(m)) {
      cJSON_Delete(c);
      rc = svc_err_set(err, SVC_BAD_FIELD, f, "%s.match must be an object", f);
      goto cleanup;
    }
    if (m) cJSON_AddItemToObject(c, "match", cJSON_Duplicate(m, 1));
    cJSON_AddItemToArray(cases, c);
  }
  if (!(*out = api_print(canon))) rc = svc_err_set(err, SVC_NOMEM, "", NULL);
cleanup:
  cJSON_Delete(canon);
  return rc;
}

static cJSON *parse_text(const char *text) { return text ? cJSON_Parse(text) : NULL; }

/* The job document; full adds history and result; API_VAL_HIDE_PRIVATE in
 * flags leaves out this host's paths and processes. */
static int job_doc(api_ctx *ctx, const hwdb_job *j, int full, unsigned flags, cJSON **out,
                   svc_err *err) {
  cJSON *d = cJSON_CreateObject(), *h;
  hwdb_job_event *ev = NULL;
  size_t n = 0;
  int rc = 0;
  cJSON_AddNumberToObject(d, "id", (double)j->id);
  cJSON_AddStringToObject(d, "kind", j->kind);
  cJSON_AddStringToObject(d, "hardware", j->hw);
  cJSON_AddStringToObject(d, "backend", j->backend);
  cJSON_AddStringToObject(d, "state", j->state);
  cJSON *params = parse_text(j->params), *pred = parse_text(j->prediction);
  cJSON_AddItemToObject(d, "params", params ? params : cJSON_CreateObject());
  if (pred) cJSON_AddItemToObject(d, "prediction", pred);
  cJSON_AddNumberToObject(d, "timeout_s", (double)j->timeout_s);
  cJSON_AddNumberToObject(d, "gpus", (double)j->gpus);
  cJSON_AddNumberToObject(d, "created_at", j->created_at);
  if (j->started_at > 0) cJSON_AddNumberToObject(d, "started_at", j->started_at);
  if (j->finished_at > 0) cJSON_AddNumberToObject(d, "finished_at", j->finished_at);
  if (j->note) cJSON_AddStringToObject(d, "note", j->note);
  if (j->slurm_id > 0) cJSON_AddNumberToObject(d, "slurm_job_id", (double)j->slurm_id);
  if (!(flags & API_VAL_HIDE_PRIVATE)) {
    if (j->pid > 0) cJSON_AddNumberToObject(d, "pid", (double)j->pid);
    if (j->workdir) cJSON_AddStringToObject(d, "workdir", j->workdir);
  }
  if (full) {
    if ((rc = hwdb_job_history(ctx->db, j->id, &ev, &n, err))) goto cleanup;
    h = cJSON_AddArrayToObject(d, "history");
    for (size_t i = 0; i < n; i++) {
      cJSON *e = cJSON_CreateObject();
      cJSON_AddStringToObject(e, "state", ev[i].state);
      cJSON_AddNumberToObject(e, "at", ev[i].at);
      if (ev[i].note) cJSON_AddStringToObject(e, "note", ev[i].note);
      cJSON_AddItemToArray(h, e);
    }
    cJSON *res = parse_text(j->result);
    if (res) cJSON_AddItemToObject(d, "result", res);
  }
cleanup:
  hwdb_job_history_free(ev, n);
  if (rc) cJSON_Delete(d);
  *out = rc ? NULL : d;
  return rc;
}

/* Print job id (optionally with extra members moved in) into *out. */
/* The job's document in r->json, its id and state beside it. */
static int reply_job_r(api_ctx *ctx, int64_t id, cJSON *extra, unsigned flags, api_reply *r,
                       svc_err *err) {
  hwdb_job j;
  cJSON *d = NULL;
  int rc = hwdb_job_get(ctx->db, id, &j, err);
  if (rc) return rc;
  if (!(rc = job_doc(ctx, &j, 1, flags, &d, err))) {
    while (extra && extra->child) {
      cJSON *it = cJSON_DetachItemViaPointer(extra, extra->child);
      cJSON_AddItemToObject(d, it->string, it);
    }
    if (!(r->json = api_print(d))) rc = svc_err_set(err, SVC_NOMEM, "", NULL);
    snprintf(r->id, sizeof r->id, "%lld", (long long)id);
    snprintf(r->state, sizeof r->state, "%s", j.state);
  }
  hwdb_job_dispose(&j);
  cJSON_Delete(d);
  return rc;
}

static int reply_job(api_ctx *ctx, int64_t id, cJSON *extra, unsigned flags, char **out,
                     svc_err *err) {
  api_reply r = {0};
  int rc = reply_job_r(ctx, id, extra, flags, &r, err);
  *out = r.json;
  return rc;
}

int api_validation_submit_opts(api_ctx *ctx, const char *body, size_t len, const api_val_opts *opts,
                               char **out, svc_err *err) {
  api_reply r = {0};
  int rc = api_validation_submit_reply(ctx, body, len, opts, &r, err);
  *out = r.json;
  return rc;
}

int api_validation_submit_reply(api_ctx *ctx, const char *body, size_t len,
                                const api_val_opts *opts, api_reply *r, svc_err *err) {
  cJSON *doc = NULL, *extra = NULL;
  char *params = NULL, *pred = NULL, token[VAL_TOKEN_LEN + 1];
  val_spec spec = {.backend = "local", .gpus = -1};
  val_cfg cfg;
  cost_hw hw;
  int64_t id = 0;
  int rc;
  size_t max = opts && opts->max_body ? opts->max_body : API_MAX_BODY;
  r->json = NULL;
  if ((rc = api_parse_request_max(ctx, body, len, max < API_MAX_RESULT ? max : API_MAX_RESULT, &doc,
                                  err)) ||
      (rc = api_check_fields(doc, submit_fields, "", err)) ||
      (rc = api_get_str(doc, "kind", "", 1, 32, NULL, &spec.kind, err)) ||
      (rc = api_get_str(doc, "hardware", "", 1, 63, NULL, &spec.hw, err)) ||
      (rc = api_get_str(doc, "backend", "", 0, 16, NULL, &spec.backend, err)) ||
      (rc = api_get_int(doc, "timeout_s", "", 0, 1, VAL_MAX_TIMEOUT_S, &spec.timeout_s, err)) ||
      (rc = api_get_int(doc, "gpus", "", 0, 0, 64, &spec.gpus, err)))
    goto cleanup;
  if (opts && opts->backend) spec.backend = opts->backend;
  if (!val_kind_valid(spec.kind)) {
    char names[256];
    val_kind_names(names, sizeof names);
    rc = svc_err_set(err, SVC_BAD_FIELD, "kind", "kind must be %s", names);
    goto cleanup;
  }
  if (!val_backend_valid(spec.backend)) {
    rc = svc_err_set(err, SVC_BAD_FIELD, "backend", "backend must be local, slurm or bundle");
    goto cleanup;
  }
  if ((rc = api_hw_lookup(ctx, spec.hw, 0, &hw, err))) goto cleanup;
  const cJSON *p = cJSON_GetObjectItemCaseSensitive(doc, "params");
  if (p && !cJSON_IsObject(p)) {
    rc = svc_err_set(err, SVC_BAD_FIELD, "params", "params must be an object");
    goto cleanup;
  }
  /* The runner checks params strictly (and a bad one fails the job with
   * its message); here they only need to be an object. */
  params = p ? api_print(p) : strdup("{}");
  if (!params) {
    rc = svc_err_set(err, SVC_NOMEM, "", NULL);
    goto cleanup;
  }
  if ((rc = read_prediction(cJSON_GetObjectItemCaseSensitive(doc, "prediction"), &pred, err)) ||
      (rc = api_slurm_opts(doc, &spec.slurm, err)))
    goto cleanup;
  spec.params = params;
  spec.prediction = pred;
  spec.bundle_dir = opts ? opts->bundle_dir : NULL;
  if ((rc = cfg_for(ctx, &cfg, err)) || (rc = val_submit(ctx->db, &cfg, &spec, &id, token, err)))
    goto cleanup;
  extra = cJSON_CreateObject();
  cJSON_AddStringToObject(extra, "token", token);
  char *job = val_job_json(spec.kind, id, params);
  cJSON *jd = job ? cJSON_Parse(job) : NULL;
  free(job);
  if (jd) cJSON_AddItemToObject(extra, "job", jd);
  if (spec.bundle_dir) cJSON_AddStringToObject(extra, "bundle_dir", spec.bundle_dir);
  rc = reply_job_r(ctx, id, extra, opts ? opts->flags : 0, r, err);
cleanup:
  cJSON_Delete(doc);
  cJSON_Delete(extra);
  free(params);
  free(pred);
  return rc;
}

int api_validation_submit(api_ctx *ctx, const char *body, size_t len, char **out, svc_err *err) {
  return api_validation_submit_opts(ctx, body, len, NULL, out, err);
}

int api_validation_get(api_ctx *ctx, const char *ids, char **out, svc_err *err) {
  return api_validation_get_flags(ctx, ids, 0, out, err);
}

int api_validation_get_flags(api_ctx *ctx, const char *ids, unsigned flags, char **out,
                             svc_err *err) {
  api_reply r = {0};
  int rc = api_validation_get_reply(ctx, ids, flags, &r, err);
  *out = r.json;
  return rc;
}

int api_validation_get_reply(api_ctx *ctx, const char *ids, unsigned flags, api_reply *r,
                             svc_err *err) {
  val_cfg cfg;
  int64_t id = 0;
  int rc;
  r->json = NULL;
  if ((rc = parse_id(ids, &id, err)) || (rc = cfg_for(ctx, &cfg, err)) ||
      (rc = poll_job(ctx, &cfg, id, err)))
    return rc;
  return reply_job_r(ctx, id, NULL, flags, r, err);
}

int api_validation_list(api_ctx *ctx, char **out, svc_err *err) {
  return api_validation_list_flags(ctx, 0, out, err);
}

int api_validation_list_flags(api_ctx *ctx, unsigned flags, char **out, svc_err *err) {
  hwdb_job *list = NULL;
  size_t n = 0;
  cJSON *doc = NULL, *arr;
  int rc;
  *out = NULL;
  /* The list never prints results: they are not even read (a sweep's is
   * megabytes, and there are up to 200 of them). */
  if ((rc = api_validation_tick(ctx, NULL, err)) ||
      (rc = hwdb_job_list_flags(ctx->db, 0, 200, HWDB_JOB_NO_RESULT, &list, &n, err)))
    return rc;
  doc = cJSON_CreateObject();
  arr = cJSON_AddArrayToObject(doc, "validations");
  for (size_t i = 0; i < n && !rc; i++) {
    cJSON *d = NULL;
    if (!(rc = job_doc(ctx, &list[i], 0, flags, &d, err))) cJSON_AddItemToArray(arr, d);
  }
  if (!rc && !(*out = api_print(doc))) rc = svc_err_set(err, SVC_NOMEM, "", NULL);
  cJSON_Delete(doc);
  hwdb_job_list_free(list, n);
  return rc;
}

int api_validation_cancel(api_ctx *ctx, const char *ids, char **out, svc_err *err) {
  return api_validation_cancel_flags(ctx, ids, 0, out, err);
}

int api_validation_cancel_flags(api_ctx *ctx, const char *ids, unsigned flags, char **out,
                                svc_err *err) {
  val_cfg cfg;
  int64_t id = 0;
  int rc;
  *out = NULL;
  if ((rc = parse_id(ids, &id, err)) || (rc = cfg_for(ctx, &cfg, err)) ||
      (rc = val_cancel(ctx->db, &cfg, id, err)))
    return rc;
  return reply_job(ctx, id, NULL, flags, out, err);
}

static int store(api_ctx *ctx, int64_t id, const char *body, size_t len, unsigned flags, char **out,
                 svc_err *err) {
  val_cfg cfg;
  int rc;
  if ((rc = cfg_for(ctx, &cfg, err)) || (rc = val_store_result(ctx->db, &cfg, id, body, len, err)))
    return rc;
  return reply_job(ctx, id, NULL, flags, out, err);
}

int api_validation_results(api_ctx *ctx, const char *ids, const char *token, const char *body,
                           size_t len, char **out, svc_err *err) {
  return api_validation_results_flags(ctx, ids, token, body, len, 0, out, err);
}

int api_validation_results_flags(api_ctx *ctx, const char *ids, const char *token, const char *body,
                                 size_t len, unsigned flags, char **out, svc_err *err) {
  int64_t id = 0;
  int rc;
  *out = NULL;
  if ((rc = parse_id(ids, &id, err)) || (rc = val_token_check(ctx->db, id, token, err))) return rc;
  return store(ctx, id, body, len, flags, out, err);
}

int api_validation_ingest(api_ctx *ctx, const char *body, size_t len, char **out, svc_err *err) {
  cJSON *doc = NULL;
  int64_t id = 0;
  int rc;
  *out = NULL;
  if ((rc = parse_result(body, len, &doc, err)) ||
      (rc = api_get_int(doc, "id", "", 1, 1, (int64_t)1 << 52, &id, err))) {
    cJSON_Delete(doc);
    return rc;
  }
  cJSON_Delete(doc);
  return store(ctx, id, body, len, 0, out, err);
}

int api_validation_tick(api_ctx *ctx, int *active, svc_err *err) {
  val_cfg cfg;
  int following = 0, rc = api_validation_following(ctx, 0, &following, err);
  if (!rc && !following) { /* another replica follows the jobs */
    int64_t n = 0;
    if (active && !(rc = hwdb_job_count_active(ctx->db, &n, err))) *active = (int)n;
    return rc;
  }
  if (!rc) rc = cfg_for(ctx, &cfg, err);
  return rc ? rc : val_reconcile(ctx->db, &cfg, active, err);
}

/* ---- the report: predicted against measured ---- */

/* obj's member at a dotted path ("result.sum"); NULL when absent. */
static const cJSON *dotted(const cJSON *obj, const char *path) {
  char key[72];
  while (obj && *path) {
    size_t n = strcspn(path, ".");
    if (n >= sizeof key) return NULL;
    memcpy(key, path, n);
    key[n] = '\0';
    obj = cJSON_GetObjectItemCaseSensitive(obj, key);
    path += n + (path[n] == '.');
  }
  return obj;
}

/* One case: its row, measured value and relative error into the report;
 * 1 when it was compared, 0 when no row or value matched it, -1 when out
 * of memory. */
static int compare_case(const cJSON *c, int i, val_joiner *j, val_kbuf *b, const char *metric,
                        cJSON *out, double *rel) {
  const cJSON *match = cJSON_GetObjectItemCaseSensitive(c, "match");
  double pred = cJSON_GetObjectItemCaseSensitive(c, "value")->valuedouble;
  int found = val_find_row(j, match, i, b);
  if (found == -2) return -1;
  const cJSON *row = found >= 0 ? j->rows[found] : NULL;
  const cJSON *mv = row ? dotted(row, metric) : NULL;
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "case", i);
  if (match) cJSON_AddItemToObject(o, "match", cJSON_Duplicate(match, 1));
  cJSON_AddNumberToObject(o, "predicted", pred);
  int ok = cJSON_IsNumber(mv) && mv->valuedouble > 0;
  if (ok) {
    *rel = (pred - mv->valuedouble) / mv->valuedouble;
    cJSON_AddNumberToObject(o, "row", found);
    cJSON_AddNumberToObject(o, "measured", mv->valuedouble);
    cJSON_AddNumberToObject(o, "rel_error", *rel);
  } else {
    cJSON_AddNullToObject(o, "measured");
    cJSON_AddStringToObject(
        o, "reason", row ? "the row has no positive measured value" : "no result row matches");
  }
  cJSON_AddItemToArray(out, o);
  return ok;
}

static cJSON *stats_doc(const double *rel, size_t n) {
  val_stats st;
  cJSON *s = cJSON_CreateObject();
  val_stats_compute(rel, n, &st);
  cJSON_AddNumberToObject(s, "n", (double)st.n);
  if (st.n) {
    cJSON_AddNumberToObject(s, "median_rel_error", st.median);
    cJSON_AddNumberToObject(s, "p90_rel_error", st.p90);
    cJSON_AddNumberToObject(s, "max_rel_error", st.max);
    cJSON_AddNumberToObject(s, "mean_signed_rel_error", st.mean_signed);
  }
  return s;
}

int api_validation_report(api_ctx *ctx, const char *ids, int calibrate, char **out, svc_err *err) {
  hwdb_job j = {0};
  cJSON *doc = NULL, *res = NULL, *pred = NULL, *cases, *wrap = NULL;
  double *rel = NULL;
  size_t n = 0;
  val_joiner join = {0};
  val_kbuf key = {0};
  val_cfg cfg;
  int64_t id = 0;
  int rc;
  *out = NULL;
  if ((rc = parse_id(ids, &id, err)) || (rc = cfg_for(ctx, &cfg, err)) ||
      (rc = poll_job(ctx, &cfg, id, err)) || (rc = hwdb_job_get(ctx->db, id, &j, err)))
    return rc;
  if (strcmp(j.state, "done") || !(res = parse_text(j.result))) {
    rc = svc_err_set(err, SVC_CONFLICT, "id", "validation job %lld is %s: no result to report",
                     (long long)id, j.state);
    goto cleanup;
  }
  const cJSON *rows = cJSON_GetObjectItemCaseSensitive(res, "rows");
  if (!cJSON_IsArray(rows)) { /* a single-case result (cpu_selftest) is its own row */
    wrap = cJSON_CreateArray();
    cJSON_AddItemReferenceToArray(wrap, res);
    rows = wrap;
  }
  pred = parse_text(j.prediction);
  const cJSON *pm = cJSON_GetObjectItemCaseSensitive(pred, "metric");
  const char *metric = cJSON_IsString(pm) ? pm->valuestring : val_kind_metric(j.kind);
  const cJSON *pc = cJSON_GetObjectItemCaseSensitive(pred, "cases"), *c;
  doc = cJSON_CreateObject();
  cJSON_AddNumberToObject(doc, "id", (double)id);
  cJSON_AddStringToObject(doc, "kind", j.kind);
  cJSON_AddStringToObject(doc, "hardware", j.hw);
  cJSON_AddStringToObject(doc, "metric", metric);
  cJSON_AddNumberToObject(doc, "measured_rows", cJSON_GetArraySize(rows));
  cases = cJSON_AddArrayToObject(doc, "cases");
  if (!(rel = calloc((size_t)cJSON_GetArraySize(pc) + 1, sizeof *rel))) {
    rc = svc_err_set(err, SVC_NOMEM, "", NULL);
    goto cleanup;
  }
  int i = 0, nrows = cJSON_GetArraySize(rows);
  if (!(join.rows = malloc(((size_t)nrows + 1) * sizeof *join.rows))) {
    rc = svc_err_set(err, SVC_NOMEM, "", NULL);
    goto cleanup;
  }
  cJSON_ArrayForEach(c, rows) join.rows[join.nrows++] = c;
  cJSON_ArrayForEach(c, pc) {
    int ok = compare_case(c, i++, &join, &key, metric, cases, &rel[n]);
    if (ok < 0) {
      rc = svc_err_set(err, SVC_NOMEM, "", NULL);
      goto cleanup;
    }
    n += (size_t)ok;
  }
  cJSON_AddNumberToObject(doc, "unmatched", (double)((size_t)i - n));
  cJSON_AddItemToObject(doc, "stats", stats_doc(rel, n));
  if (!pred) cJSON_AddStringToObject(doc, "note", "the job carries no prediction");
  if (!strcmp(j.kind, "dlrm_step")) { /* the cases at their machine's own host */
    cJSON *at = NULL;
    svc_err e2;
    if (api_val_step_at_host(ctx, &j, &at, &e2)) { /* the report stands without it */
      at = cJSON_CreateObject();
      cJSON_AddStringToObject(at, "skipped", e2.message);
    }
    if (at) cJSON_AddItemToObject(doc, "at_machine_host", at);
  }
  if (calibrate) {
    char label[48], *cal = NULL, why[256];
    /* a result calibrates only the accelerator it ran on: the device the
     * runner reported must be the job's hardware (a CPU test run, another
     * GPU model, a MIG slice are not) */
    const cJSON *dev = cJSON_GetObjectItemCaseSensitive(res, "device");
    cost_hw jh;
    if (cJSON_IsObject(dev)) {
      if ((rc = api_hw_lookup(ctx, j.hw, 0, &jh, err))) goto cleanup;
      if (api_device_check(&jh, dev, why, sizeof why) == 0) {
        rc = svc_err_set(err, SVC_CONFLICT, "device", "validation %lld cannot calibrate %s: %s",
                         (long long)id, j.hw, why);
        goto cleanup;
      }
    }
    const char *text = j.result;
    size_t len = strlen(j.result);
    snprintf(label, sizeof label, "validation %lld", (long long)id);
    const char *lp = label;
    cJSON *cd = NULL;
    if (!strcmp(j.kind, "dlrm_step")) { /* whole steps: the step-level fit */
      if ((rc = api_val_step_calibrate(ctx, &j, &cd, err))) goto cleanup;
    } else {
      if ((rc = api_calibrate(ctx, j.hw, 1, &text, &len, &lp, &cal, err))) goto cleanup;
      cd = cJSON_Parse(cal);
      free(cal);
    }
    if (cd) cJSON_AddItemToObject(doc, "calibration", cd);
  }
  if (!(*out = api_print(doc))) rc = svc_err_set(err, SVC_NOMEM, "", NULL);
cleanup:
  val_joiner_dispose(&join);
  free(key.s);
  free(rel);
  cJSON_Delete(wrap);
  cJSON_Delete(res);
  cJSON_Delete(pred);
  cJSON_Delete(doc);
  hwdb_job_dispose(&j);
  return rc;
}
