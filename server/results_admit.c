/* results_admit.c: the results route's precheck. A runner's upload may
 * be 16 MiB; without this every connection could make the server buffer
 * that much before the job token was looked at (40 such uploads took the
 * server from 10 to 648 MiB). The token travels in the X-Job-Token
 * header, so it is checked as soon as the headers are in; a refusal is
 * queued before any body byte is read and MHD closes the connection. */
#include "api/api_results.h"
#include "server/server_int.h"

enum MHD_Result srv_validation_results_admit(srv_req *r) {
  svc_err err;
  const char *token = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "X-Job-Token");
  if (api_validation_token_check(r->s->api, r->params[0], token, &err) < 0)
    return srv_reply_error(r, &err);
  return MHD_YES;
}
