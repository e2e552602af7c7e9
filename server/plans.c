/* plans.c: the planner's resources — POST /v1/plans (solve and store a
 * plan), GET /v1/plans (the history, paged), GET /v1/plans/{id}, POST /v1/compare (direct port vs
 * re-plan), POST /v1/plans/{id}/validations (run its baseline and planned recipes). Plans and
 * compares are "heavy" routes: the route table caps how many run at once so the other endpoints
 * always keep worker threads (503 with Retry-After beyond the cap). */
#include <stdio.h>
#include <string.h>

#include "api/api_plan.h"
#include "api/api_torchrec.h"
#include "api/api_tokens.h"
#include "api/api_validate.h"
#include "server/server_int.h"

enum MHD_Result srv_plan_create(srv_req *r) {
  api_reply rep = {0};
  svc_err err;
  int rc = api_plan_reply(r->s->api, r->body, r->body_len, &rep, &err);
  return srv_reply_created_at(r, rc, &rep, &err, "/v1/plans/");
}

enum MHD_Result srv_plan_list(srv_req *r) {
  char *out = NULL;
  svc_err err;
  const char *limit = MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, "limit");
  const char *after = MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, "after");
  if (api_plan_list(r->s->api, limit, after, &out, &err) < 0) return srv_reply_error(r, &err);
  return srv_reply_json(r, MHD_HTTP_OK, out);
}

/* ?format=json (the default) or torchrec (the Python module of
 * api/api_torchrec.h, for the EmbeddingBagCollection at ?module=). */
enum MHD_Result srv_plan_get(srv_req *r) {
  char *out = NULL;
  svc_err err;
  const char *fmt = MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, "format");
  const char *module = MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, "module");
  if (fmt && !strcmp(fmt, "torchrec")) {
    if (api_plan_torchrec(r->s->api, r->params[0], module, &out, &err) < 0)
      return srv_reply_error(r, &err);
    return srv_reply_text(r, MHD_HTTP_OK, out, "text/x-python; charset=utf-8");
  }
  if (fmt && strcmp(fmt, "json"))
    return srv_reply_fail(r, SVC_BAD_FIELD, "format", "format must be json or torchrec");
  if (api_plan_get(r->s->api, r->params[0], &out, &err) < 0) return srv_reply_error(r, &err);
  return srv_reply_json(r, MHD_HTTP_OK, out);
}

enum MHD_Result srv_compare(srv_req *r) { return srv_reply_api(r, api_compare, MHD_HTTP_OK); }

/* Two runner jobs for the plan's recipes: 201 with the jobs (their tokens
 * shown once) and the plan's validation so far. Job documents name this
 * host's paths and processes to admin callers only. */
enum MHD_Result srv_plan_validate(srv_req *r) {
  char *out = NULL, loc[128];
  svc_err err;
  api_plan_val_opts opts = {
      .flags = api_scope_allows(r->scopes, API_SCOPE_ADMIN) ? 0 : API_VAL_HIDE_PRIVATE};
  if (api_plan_validate(r->s->api, r->params[0], r->body, r->body_len, &opts, &out, &err) < 0)
    return srv_reply_error(r, &err);
  snprintf(loc, sizeof loc, "/v1/plans/%.40s", r->params[0]);
  return srv_reply_created(r, out, loc);
}
