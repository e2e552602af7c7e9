/* cdplan kernels select FILE|- [--hw NAME] [--format json|triton|triton-heuristic]
 * [--db PATH]: the request of POST /v1/kernels/select from a file or stdin,
 * answered by api_kernels_select. --format triton prints, per problem, a
 * comment line naming the problem and its paste-ready triton.Config list
 * instead of the JSON document; --format triton-heuristic a Python module
 * with one chosen config per shape (no autotuning: config_for(M, N, K,
 * dtype), and heuristics(dtype) for @triton.heuristics), both made by
 * api_kernels_select_as. Parses its own options (main.c lists it beside
 * serve). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_kernels.h"
#include "cli/cli.h"

static int bad_args(const char *msg, const char *arg) {
  svc_err err;
  svc_err_set(&err, SVC_BAD_ARGS, "", "%s%s (see cdplan kernels select --help)", msg, arg);
  return cli_fail(&err);
}

int cli_kernels_select(cli_opts *o) {
  const char *file = NULL, *format = "json";
  api_ctx *ctx = NULL;
  char *in = NULL, *out = NULL;
  size_t len = 0;
  svc_err err;
  int rc;
  svc_err_clear(&err);
  for (int i = 0; i < o->argc; i++) {
    const char *a = o->argv[i];
    if (!strcmp(a, "--hw") || !strcmp(a, "--db") || !strcmp(a, "--format")) {
      if (i + 1 >= o->argc) return bad_args("a value is needed after ", a);
      if (!strcmp(a, "--hw"))
        o->hw = o->argv[++i];
      else if (!strcmp(a, "--db"))
        o->db = o->argv[++i];
      else
        format = o->argv[++i];
    } else if (a[0] == '-' && a[1] != '\0') {
      return bad_args("unknown option ", a);
    } else if (file) {
      return bad_args("expected one request file or - for stdin, got also ", a);
    } else {
      file = a;
    }
  }
  if (!file) return bad_args("expected one request file or - for stdin", "");
  if (strcmp(format, "json") && strcmp(format, "triton") && strcmp(format, "triton-heuristic"))
    return bad_args("--format must be json, triton or triton-heuristic, not ", format);
  if ((rc = cli_read_input(file, &in, &len, &err))) goto cleanup;
  if ((rc = cli_open(o, &ctx, &err))) goto cleanup;
  rc = api_kernels_select_as(ctx, in, len,
                             !strcmp(format, "json")     ? API_KERNELS_JSON
                             : !strcmp(format, "triton") ? API_KERNELS_TRITON
                                                         : API_KERNELS_TRITON_HEURISTIC,
                             &out, &err);
cleanup:
  free(in);
  api_ctx_free(ctx);
  if (rc) return cli_fail(&err);
  if (!strcmp(format, "json")) return cli_emit(out);
  fputs(out, stdout);
  free(out);
  return fflush(stdout) == 0 ? 0 : 3;
}
