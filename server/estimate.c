/* estimate.c: POST /v1/estimate, pricing a list of ops on one
 * accelerator. A compute endpoint: it only reads the catalog, so it is
 * open even when writes need a token.
 */
#include "server/server_int.h"

enum MHD_Result srv_estimate(srv_req *r) { return srv_reply_api(r, api_estimate, MHD_HTTP_OK); }
