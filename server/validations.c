/* validations.c: validation runs on real GPUs — submit (dispatch), list,
 * get, cancel, the runner's results (authorized by the job's own token in
 * X-Job-Token, so a GPU host needs no API token), and the predicted-vs-
 * measured report. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_tokens.h"
#include "api/api_validate.h"
#include "server/server_int.h"

/* A job document names this host's paths and processes (workdir, pid):
 * only admin callers see them. */
static unsigned view(const srv_req *r) {
  return api_scope_allows(r->scopes, API_SCOPE_ADMIN) ? 0 : API_VAL_HIDE_PRIVATE;
}

enum MHD_Result srv_validation_submit(srv_req *r) {
  api_reply rep = {0};
  svc_err err;
  api_val_opts opts = {.flags = view(r)};
  int rc = api_validation_submit_reply(r->s->api, r->body, r->body_len, &opts, &rep, &err);
  return srv_reply_created_at(r, rc, &rep, &err, "/v1/validations/");
}

enum MHD_Result srv_validation_list(srv_req *r) {
  char *out = NULL;
  svc_err err;
  if (api_validation_list_flags(r->s->api, view(r), &out, &err) < 0)
    return srv_reply_error(r, &err);
  return srv_reply_json(r, MHD_HTTP_OK, out);
}

/* GET one job or cancel it: the same shape, one id. */
static enum MHD_Result by_id(srv_req *r,
                             int (*fn)(api_ctx *, const char *, unsigned, char **, svc_err *)) {
  char *out = NULL;
  svc_err err;
  if (fn(r->s->api, r->params[0], view(r), &out, &err) < 0) return srv_reply_error(r, &err);
  return srv_reply_json(r, MHD_HTTP_OK, out);
}

enum MHD_Result srv_validation_get(srv_req *r) { return by_id(r, api_validation_get_flags); }
enum MHD_Result srv_validation_cancel(srv_req *r) { return by_id(r, api_validation_cancel_flags); }

/* The bundle's tarball (application/x-tar), named for the job. */
enum MHD_Result srv_validation_bundle(srv_req *r) {
  char *data = NULL, disp[96];
  size_t len = 0;
  svc_err err;
  if (api_validation_bundle(r->s->api, r->params[0], &data, &len, &err) < 0)
    return srv_reply_error(r, &err);
  struct MHD_Response *resp = MHD_create_response_from_buffer(len, data, MHD_RESPMEM_MUST_FREE);
  if (!resp) {
    free(data);
    return srv_reply_fail(r, SVC_NOMEM, "", NULL);
  }
  snprintf(disp, sizeof disp, "attachment; filename=\"cdplan-job-%.20s.tar\"", r->params[0]);
  MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/x-tar");
  MHD_add_response_header(resp, "Content-Disposition", disp);
  MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
  return srv_reply_response(r, MHD_HTTP_OK, resp);
}

/* The report only reads. ?calibrate= used to store a calibration from a
 * GET (any reader could, cross-site too): it is refused, naming the route
 * that does it now, rather than ignored, so that a caller relying on it
 * learns that nothing was calibrated. */
enum MHD_Result srv_validation_report(srv_req *r) {
  char *out = NULL;
  svc_err err;
  if (MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, "calibrate"))
    return srv_reply_fail(r, SVC_BAD_FIELD, "calibrate",
                          "the report only reads; calibrate with POST "
                          "/v1/validations/{id}/calibrate (admin scope)");
  if (api_validation_report(r->s->api, r->params[0], 0, &out, &err) < 0)
    return srv_reply_error(r, &err);
  return srv_reply_json(r, MHD_HTTP_OK, out);
}

/* The report, and a calibration fitted to the job's result stored as the
 * hardware's next version (admin). */
enum MHD_Result srv_validation_calibrate(srv_req *r) {
  char *out = NULL;
  svc_err err;
  if (api_validation_report(r->s->api, r->params[0], 1, &out, &err) < 0)
    return srv_reply_error(r, &err);
  return srv_reply_json(r, MHD_HTTP_OK, out);
}

enum MHD_Result srv_validation_results(srv_req *r) {
  char *out = NULL;
  svc_err err;
  const char *token = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "X-Job-Token");
  if (api_validation_results_flags(r->s->api, r->params[0], token, r->body, r->body_len, view(r),
                                   &out, &err) < 0)
    return srv_reply_error(r, &err);
  return srv_reply_json(r, MHD_HTTP_OK, out);
}
