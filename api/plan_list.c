/* plan_list.c: GET /v1/plans, the plan history. Pages through the stored
 * plans newest first with a cursor (the id of the last plan shown), so that
 * a page stays stable while new plans are made. Each entry is a summary
 * read from the stored answer: the whole document is GET /v1/plans/{id}.
 * Only the query's two fields come from outside; both are checked here
 * before hwdb sees them.
 */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#include "api/api_plan.h"

static int parse_limit(const char *text, size_t *limit, svc_err *err) {
  *limit = API_PLAN_LIST_DEFAULT;
  if (!text) return 0;
  size_t n = strlen(text);
  if (n == 0 || n > 6 || strspn(text, "0123456789") != n)
    return svc_err_set(err, SVC_BAD_FIELD, "limit", "limit must be an integer from 1 to %d",
                       API_PLAN_LIST_MAX);
  long v = strtol(text, NULL, 10);
  if (v < 1 || v > API_PLAN_LIST_MAX)
    return svc_err_set(err, SVC_BAD_FIELD, "limit", "limit must be an integer from 1 to %d",
                       API_PLAN_LIST_MAX);
  *limit = (size_t)v;
  return 0;
}

/* Plan ids are 16 lower-case hex digits (api/plan.c new_id). */
static int check_after(const char *after, svc_err *err) {
  size_t n = strlen(after);
  if (n != 16 || strspn(after, "0123456789abcdef") != n)
    return svc_err_set(err, SVC_BAD_FIELD, "after", "after must be a plan id (16 hex digits)");
  return 0;
}

static void copy_num(cJSON *dst, const cJSON *src, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(src, key);
  if (cJSON_IsNumber(v))
    cJSON_AddNumberToObject(dst, key, v->valuedouble);
  else
    cJSON_AddNullToObject(dst, key);
}

static void copy_str(cJSON *dst, const cJSON *src, const char *key, const char *dflt) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(src, key);
  cJSON_AddStringToObject(dst, key, cJSON_IsString(v) ? v->valuestring : dflt);
}

/* One entry of the list from a stored plan; a document that no longer
 * parses (it was written by us, so that is our bug) still lists its id. */
static cJSON *summary(const hwdb_plan *p) {
  cJSON *o = cJSON_CreateObject();
  cJSON *doc = cJSON_Parse(p->result);
  cJSON_AddStringToObject(o, "id", p->id);
  cJSON_AddNumberToObject(o, "created_at", p->created_at);
  cJSON_AddStringToObject(o, "hardware", p->hw);
  copy_str(o, doc, "objective", "throughput");
  static const char *const nums[] = {"step_ms",          "samples_per_s", "peak_memory_bytes",
                                     "hbm_usable_bytes", "gap",           "gain"};
  for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) copy_num(o, doc, nums[i]);
  const cJSON *rec = cJSON_GetObjectItemCaseSensitive(doc, "recipe");
  cJSON *r = cJSON_AddObjectToObject(o, "recipe");
  copy_num(r, rec, "gpus");
  copy_num(r, rec, "batch_per_gpu");
  copy_str(r, rec, "precision", "");
  cJSON_Delete(doc);
  return o;
}

int api_plan_list(api_ctx *ctx, const char *limit_text, const char *after, char **out,
                  svc_err *err) {
  hwdb_plan *rows = NULL;
  cJSON *doc = NULL;
  size_t limit, n = 0;
  int more = 0, rc;
  *out = NULL;
  if ((rc = parse_limit(limit_text, &limit, err))) return rc;
  if (after && (rc = check_after(after, err))) return rc;
  if (!(rows = calloc(limit, sizeof *rows))) return svc_err_set(err, SVC_NOMEM, "", NULL);
  if ((rc = hwdb_plan_list(ctx->db, "plan", after, limit, rows, &n, &more, err))) goto cleanup;
  doc = cJSON_CreateObject();
  cJSON *list = cJSON_AddArrayToObject(doc, "plans");
  for (size_t i = 0; i < n; i++) cJSON_AddItemToArray(list, summary(&rows[i]));
  if (more && n > 0)
    cJSON_AddStringToObject(doc, "next_after", rows[n - 1].id);
  else
    cJSON_AddNullToObject(doc, "next_after");
  if (!(*out = api_print(doc))) rc = svc_err_set(err, SVC_NOMEM, "", NULL);
cleanup:
  for (size_t i = 0; i < n; i++) hwdb_plan_dispose(&rows[i]);
  free(rows);
  cJSON_Delete(doc);
  return rc;
}
