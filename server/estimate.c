/* estimate.c: POST /v1/estimate, pricing a list of ops on one
 * accelerator. A compute endpoint: it only reads the catalog, so it is
 * open even when writes need a token.
 */
#include "server/server_int.h"

enum MHD_Result srv_estimate(srv_req *r) {
  char *out = NULL;
  svc_err err;
  if (api_estimate(r->s->api, r->body, r->body_len, &out, &err) < 0)
    return srv_reply_error(r, &err);
  return srv_reply_json(r, MHD_HTTP_OK, out);
}
