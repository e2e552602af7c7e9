/* reply.c: the one way a response leaves the server. Every reply goes
 * through srv_reply_response, which queues it, remembers the status, feeds
 * the metrics and writes the per-request debug line (method, route
 * pattern, status, ms; never headers, which may carry the token). Errors
 * are always the api's error document with the registry's HTTP status.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/server_int.h"

/* Used when even the error document cannot be built (out of memory). */
static const char oom_doc[] =
    "{\"error\":{\"code\":\"nomem\",\"message\":\"out of memory\",\"field\":\"\"}}";

enum MHD_Result srv_reply_response(srv_req *r, unsigned status, struct MHD_Response *resp) {
  if (!resp) return MHD_NO;
  enum MHD_Result ret = MHD_queue_response(r->conn, status, resp);
  MHD_destroy_response(resp);
  r->replied = 1;
  r->status = (int)status;
  double dt = svc_now() - r->t0;
  srv_metrics_observe(r->s->metrics, r->label, r->method, (int)status, dt);
  svc_log(SVC_LOG_DEBUG, "%s %s %u %.2f ms", r->method, srv_metrics_label_text(r->label), status,
          dt * 1e3);
  return ret;
}

/* A JSON response with an optional extra header; json is taken. */
static enum MHD_Result reply_doc(srv_req *r, unsigned status, char *json, const char *hname,
                                 const char *hval) {
  struct MHD_Response *resp;
  if (json)
    resp = MHD_create_response_from_buffer(strlen(json), json, MHD_RESPMEM_MUST_FREE);
  else
    resp = MHD_create_response_from_buffer(sizeof oom_doc - 1, (void *)oom_doc,
                                           MHD_RESPMEM_PERSISTENT);
  if (!resp) {
    free(json);
    return MHD_NO;
  }
  MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
  if (hname) MHD_add_response_header(resp, hname, hval);
  if (!json) status = MHD_HTTP_INTERNAL_SERVER_ERROR;
  return srv_reply_response(r, status, resp);
}

enum MHD_Result srv_reply_json(srv_req *r, unsigned status, char *json) {
  return reply_doc(r, status, json, NULL, NULL);
}

enum MHD_Result srv_reply_text(srv_req *r, unsigned status, char *body, const char *ctype) {
  struct MHD_Response *resp =
      MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE);
  if (!resp) {
    free(body);
    return MHD_NO;
  }
  MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
  return srv_reply_response(r, status, resp);
}

enum MHD_Result srv_reply_created(srv_req *r, char *json, const char *location) {
  return reply_doc(r, MHD_HTTP_CREATED, json, location ? MHD_HTTP_HEADER_LOCATION : NULL, location);
}

enum MHD_Result srv_reply_created_at(srv_req *r, int rc, api_reply *rep, const svc_err *err,
                                     const char *base) {
  char loc[192];
  if (rc < 0) return srv_reply_error(r, err);
  snprintf(loc, sizeof loc, "%s%s", base, rep->id);
  return srv_reply_created(r, rep->json, rep->id[0] ? loc : NULL);
}

enum MHD_Result srv_reply_no_content(srv_req *r) {
  struct MHD_Response *resp = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
  return srv_reply_response(r, MHD_HTTP_NO_CONTENT, resp);
}

static enum MHD_Result reply_error_hdr(srv_req *r, const svc_err *err, const char *hname,
                                       const char *hval) {
  int code = err && err->code > 0 && err->code < SVC__COUNT ? err->code : SVC_INTERNAL;
  int status = svc_code_http(code);
  if (status < 400 || status > 599) status = MHD_HTTP_INTERNAL_SERVER_ERROR;
  /* 503s (busy planner, database or body buffer) are load, not faults. */
  if (status >= 500)
    svc_log(status == MHD_HTTP_SERVICE_UNAVAILABLE ? SVC_LOG_DEBUG : SVC_LOG_ERROR,
            "%s %s: %s (%s)", r->method, srv_metrics_label_text(r->label), svc_code_name(code),
            err ? err->message : "");
  /* A 503 says when to come back (a busy database, a full buffer). */
  if (status == MHD_HTTP_SERVICE_UNAVAILABLE && !hname) {
    hname = MHD_HTTP_HEADER_RETRY_AFTER;
    hval = "1";
  }
  /* A 401 tells the client which scheme to use (RFC 6750). */
  if (status == MHD_HTTP_UNAUTHORIZED && !hname) {
    hname = MHD_HTTP_HEADER_WWW_AUTHENTICATE;
    hval = "Bearer realm=\"cdplan\"";
  }
  svc_err fallback;
  if (!err || code != err->code) {
    svc_err_set(&fallback, SVC_INTERNAL, "", NULL);
    err = &fallback;
  }
  return reply_doc(r, (unsigned)status, api_error_json(err), hname, hval);
}

enum MHD_Result srv_reply_error(srv_req *r, const svc_err *err) {
  return reply_error_hdr(r, err, NULL, NULL);
}

enum MHD_Result srv_reply_fail(srv_req *r, svc_code code, const char *field, const char *message) {
  svc_err err;
  if (message)
    svc_err_set(&err, code, field, "%s", message);
  else
    svc_err_set(&err, code, field, NULL);
  return reply_error_hdr(r, &err, NULL, NULL);
}

enum MHD_Result srv_reply_not_allowed(srv_req *r, const char *allow) {
  svc_err err;
  svc_err_set(&err, SVC_METHOD_NOT_ALLOWED, "", "method %s not allowed; use %s", r->method, allow);
  return reply_error_hdr(r, &err, MHD_HTTP_HEADER_ALLOW, allow);
}

enum MHD_Result srv_reply_retry(srv_req *r, svc_code code, unsigned seconds, const char *message) {
  svc_err err;
  char after[16];
  snprintf(after, sizeof after, "%u", seconds ? seconds : 1);
  if (message)
    svc_err_set(&err, code, "", "%s", message);
  else
    svc_err_set(&err, code, "", NULL);
  return reply_error_hdr(r, &err, MHD_HTTP_HEADER_RETRY_AFTER, after);
}
