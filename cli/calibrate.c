/* cdplan calibrate [--hw NAME] [--rows fit|all] FILE...: read measurement
 * files, hand them to api_calibrate (or, with --rows, to the published
 * per-architecture fit; with --host-probe, one runner result's host probe
 * to api_calibrate_host), print its report. Parses its own options. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "api/api_published.h"
#include "cli/cli.h"

int cli_calibrate(cli_opts *o) {
  api_ctx *ctx = NULL;
  char **texts = NULL, *out = NULL;
  const char **files = NULL;
  size_t *lens = NULL;
  svc_err err;
  int rc = 0, nread = 0, nfiles = 0, all_rows = -1, host_probe = 0;
  svc_err_clear(&err);
  if (!(files = calloc((size_t)o->argc + 1, sizeof *files))) {
    svc_err_set(&err, SVC_NOMEM, "", NULL);
    return cli_fail(&err);
  }
  for (int i = 0; i < o->argc; i++) {
    const char *a = o->argv[i];
    if (!strcmp(a, "--db") || !strcmp(a, "--hw") || !strcmp(a, "--rows")) {
      if (i + 1 >= o->argc) {
        rc = svc_err_set(&err, SVC_BAD_ARGS, "", "a value is needed after %s", a);
        goto cleanup;
      }
      const char *v = o->argv[++i];
      if (!strcmp(a, "--db")) o->db = v;
      if (!strcmp(a, "--hw")) o->hw = v;
      if (!strcmp(a, "--rows")) {
        if (strcmp(v, "fit") && strcmp(v, "all")) {
          rc = svc_err_set(&err, SVC_BAD_ARGS, "rows", "--rows takes fit or all, not %s", v);
          goto cleanup;
        }
        all_rows = !strcmp(v, "all");
      }
    } else if (!strcmp(a, "--host-probe")) {
      host_probe = 1;
    } else if (a[0] == '-' && a[1] != '\0') {
      rc = svc_err_set(&err, SVC_BAD_ARGS, "", "unknown option %s", a);
      goto cleanup;
    } else {
      files[nfiles++] = a;
    }
  }
  if (host_probe && (nfiles != 1 || all_rows >= 0)) {
    rc = svc_err_set(&err, SVC_BAD_ARGS, "",
                     "usage: cdplan calibrate --hw NAME --host-probe RESULT.json (one file)");
    goto cleanup;
  }
  if (nfiles < 1) {
    rc = svc_err_set(&err, SVC_BAD_ARGS, "",
                     "usage: cdplan calibrate [--hw NAME] [--rows fit|all] FILE...");
    goto cleanup;
  }
  texts = calloc((size_t)nfiles, sizeof *texts);
  lens = calloc((size_t)nfiles, sizeof *lens);
  if (!texts || !lens) {
    rc = svc_err_set(&err, SVC_NOMEM, "", NULL);
    goto cleanup;
  }
  for (; nread < nfiles; nread++) {
    if ((rc = cli_check_path(files[nread], 0, &err)) ||
        (rc = svc_read_file(files[nread], 64 << 20, &texts[nread], &lens[nread], &err)))
      goto cleanup;
  }
  if ((rc = cli_open(o, &ctx, &err))) goto cleanup;
  fprintf(stderr, "calibrating %s on %d file(s)...\n", o->hw ? o->hw : "per architecture", nfiles);
  if (host_probe) {
    rc = api_calibrate_host(ctx, o->hw, texts[0], lens[0], files[0], &out, &err);
  } else if (all_rows >= 0 && !api_published_is(texts[0], lens[0])) {
    rc = svc_err_set(&err, SVC_BAD_ARGS, "rows",
                     "--rows applies to published-measurement files only");
  } else if (all_rows >= 0) {
    rc = api_calibrate_published(ctx, o->hw, all_rows, (size_t)nfiles, (const char *const *)texts,
                                 lens, files, &out, &err);
  } else {
    rc = api_calibrate(ctx, o->hw, (size_t)nfiles, (const char *const *)texts, lens, files, &out,
                       &err);
  }
cleanup:
  for (int i = 0; texts && i < nread; i++) free(texts[i]);
  free(texts);
  free(lens);
  free(files);
  api_ctx_free(ctx);
  return rc ? cli_fail(&err) : cli_emit(out);
}
