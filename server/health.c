/* health.c: GET /healthz, for load balancers and the CLI's readiness
 * check. It goes through the api (and so the database), so a 200 means
 * the catalog can be read, not only that the socket is open.
 */
#include "server/server_int.h"

enum MHD_Result srv_health(srv_req *r) {
  char *out = NULL;
  svc_err err;
  if (api_health(r->s->api, &out, &err) < 0) return srv_reply_error(r, &err);
  return srv_reply_json(r, MHD_HTTP_OK, out);
}
