/* hardware.c: the hardware catalog resource, /v1/hardware and
 * /v1/hardware/{name}. Each handler decodes the path/query, calls one api
 * operation and replies; validation and storage are the api's.
 */
#include <stdio.h>
#include <stdlib.h>

#include "server/server_int.h"

enum MHD_Result srv_hw_list(srv_req *r) {
  char *out = NULL;
  svc_err err;
  const char *vendor = MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, "vendor");
  if (api_hw_list(r->s->api, vendor, &out, &err) < 0) return srv_reply_error(r, &err);
  return srv_reply_json(r, MHD_HTTP_OK, out);
}

enum MHD_Result srv_hw_get(srv_req *r) {
  char *out = NULL;
  svc_err err;
  if (api_hw_get(r->s->api, r->params[0], &out, &err) < 0) return srv_reply_error(r, &err);
  return srv_reply_json(r, MHD_HTTP_OK, out);
}

enum MHD_Result srv_hw_create(srv_req *r) {
  api_reply rep = {0};
  svc_err err;
  int rc = api_hw_create_reply(r->s->api, r->body, r->body_len, &rep, &err);
  return srv_reply_created_at(r, rc, &rep, &err, "/v1/hardware/");
}

enum MHD_Result srv_hw_replace(srv_req *r) {
  char *out = NULL;
  char loc[192];
  int created = 0;
  svc_err err;
  if (api_hw_replace(r->s->api, r->params[0], r->body, r->body_len, &created, &out, &err) < 0)
    return srv_reply_error(r, &err);
  if (!created) return srv_reply_json(r, MHD_HTTP_OK, out);
  snprintf(loc, sizeof loc, "/v1/hardware/%s", r->params[0]);
  return srv_reply_created(r, out, loc);
}

enum MHD_Result srv_hw_delete(srv_req *r) {
  svc_err err;
  if (api_hw_delete(r->s->api, r->params[0], &err) < 0) return srv_reply_error(r, &err);
  return srv_reply_no_content(r);
}
