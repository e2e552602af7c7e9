/* validations.c: validation runs on real GPUs — submit (dispatch), list,
 * get, cancel, the runner's results (authorized by the job's own token in
 * X-Job-Token, so a GPU host needs no API token), and the predicted-vs-
 * measured report. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_validate.h"
#include "server/server_int.h"

enum MHD_Result srv_validation_submit(srv_req *r) {
  char *out = NULL, loc[96];
  svc_err err;
  if (api_validation_submit(r->s->api, r->body, r->body_len, &out, &err) < 0)
    return srv_reply_error(r, &err);
  /* The job document starts {"id":N,...}: its Location names it. */
  const char *p = strstr(out, "\"id\":");
  long id = p ? strtol(p + 5, NULL, 10) : 0;
  if (id > 0) snprintf(loc, sizeof loc, "/v1/validations/%ld", id);
  return srv_reply_created(r, out, id > 0 ? loc : NULL);
}

enum MHD_Result srv_validation_list(srv_req *r) {
  char *out = NULL;
  svc_err err;
  if (api_validation_list(r->s->api, &out, &err) < 0) return srv_reply_error(r, &err);
  return srv_reply_json(r, MHD_HTTP_OK, out);
}

/* GET one job, cancel it, or its report: the same shape, one id. */
static enum MHD_Result by_id(srv_req *r, int (*fn)(api_ctx *, const char *, char **, svc_err *)) {
  char *out = NULL;
  svc_err err;
  if (fn(r->s->api, r->params[0], &out, &err) < 0) return srv_reply_error(r, &err);
  return srv_reply_json(r, MHD_HTTP_OK, out);
}

enum MHD_Result srv_validation_get(srv_req *r) { return by_id(r, api_validation_get); }
enum MHD_Result srv_validation_cancel(srv_req *r) { return by_id(r, api_validation_cancel); }

enum MHD_Result srv_validation_report(srv_req *r) {
  char *out = NULL;
  svc_err err;
  const char *cal = MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, "calibrate");
  int calibrate = cal && (!strcmp(cal, "1") || !strcmp(cal, "true"));
  if (api_validation_report(r->s->api, r->params[0], calibrate, &out, &err) < 0)
    return srv_reply_error(r, &err);
  return srv_reply_json(r, MHD_HTTP_OK, out);
}

enum MHD_Result srv_validation_results(srv_req *r) {
  char *out = NULL;
  svc_err err;
  const char *token = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "X-Job-Token");
  if (api_validation_results(r->s->api, r->params[0], token, r->body, r->body_len, &out, &err) < 0)
    return srv_reply_error(r, &err);
  return srv_reply_json(r, MHD_HTTP_OK, out);
}
