/* compute.c: the compute resources that only read the catalog —
 * POST /v1/step (training-step time and memory) and POST /v1/kernels/select
 * (GEMM tile configs ranked by the model). Thin: the body goes to one api
 * operation, its document comes back. */
#include "api/api_kernels.h"
#include "api/api_step.h"
#include "server/server_int.h"

enum MHD_Result srv_reply_api(srv_req *r, srv_api_fn fn, unsigned status) {
  char *out = NULL;
  svc_err err;
  if (fn(r->s->api, r->body, r->body_len, &out, &err) < 0) return srv_reply_error(r, &err);
  return srv_reply_json(r, status, out);
}

enum MHD_Result srv_step(srv_req *r) { return srv_reply_api(r, api_step, MHD_HTTP_OK); }

enum MHD_Result srv_kernels_select(srv_req *r) {
  return srv_reply_api(r, api_kernels_select, MHD_HTTP_OK);
}
