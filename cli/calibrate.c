/* cdplan calibrate --hw NAME FILE...: read measurement files, hand them to
 * api_calibrate, print its report. */
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"

int cli_calibrate(cli_opts *o) {
  api_ctx *ctx = NULL;
  char **texts = NULL, *out = NULL;
  size_t *lens = NULL;
  svc_err err;
  int rc = 0, nread = 0;
  svc_err_clear(&err);
  if (!o->hw || o->argc < 1) {
    svc_err_set(&err, SVC_BAD_ARGS, "", "usage: cdplan calibrate --hw NAME FILE...");
    return cli_fail(&err);
  }
  texts = calloc((size_t)o->argc, sizeof *texts);
  lens = calloc((size_t)o->argc, sizeof *lens);
  if (!texts || !lens) {
    rc = svc_err_set(&err, SVC_NOMEM, "", NULL);
    goto cleanup;
  }
  for (; nread < o->argc; nread++) {
    if ((rc = svc_read_file(o->argv[nread], 64 << 20, &texts[nread], &lens[nread], &err)))
      goto cleanup;
  }
  if ((rc = cli_open(o, &ctx, &err))) goto cleanup;
  fprintf(stderr, "calibrating %s on %d file(s)...\n", o->hw, o->argc);
  rc = api_calibrate(ctx, o->hw, (size_t)o->argc, (const char *const *)texts, lens,
                     (const char *const *)o->argv, &out, &err);
cleanup:
  for (int i = 0; texts && i < nread; i++) free(texts[i]);
  free(texts);
  free(lens);
  api_ctx_free(ctx);
  return rc ? cli_fail(&err) : cli_emit(out);
}
