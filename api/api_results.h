/* api_results: the check a runner's results upload passes before its body
 * is read (the server calls it once the headers are in), so that an
 * upload without the job's token costs no buffering. */
#ifndef CDPLAN_API_RESULTS_H
#define CDPLAN_API_RESULTS_H

#include "api/api.h"

/* 0 when token is job id's token (ids as in the URL); else 400 bad id,
 * 401 no token, 403 wrong token, 404 no such job. */
int api_validation_token_check(api_ctx *ctx, const char *ids, const char *token, svc_err *err);

#endif
