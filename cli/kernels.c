/* cdplan kernels select FILE|- [--hw NAME] [--format json|triton] [--db PATH]:
 * the request of POST /v1/kernels/select from a file or stdin, answered by
 * api_kernels_select. --format triton prints, per problem, a comment line
 * naming the problem and its paste-ready triton.Config list instead of the
 * JSON document. Parses its own options (main.c lists it beside serve). */
#include <cjson/cJSON.h>
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

/* The "triton" text of each result, one problem per block. */
static int emit_triton(char *json) {
  cJSON *doc = cJSON_Parse(json);
  const cJSON *results = cJSON_GetObjectItemCaseSensitive(doc, "results"), *r;
  free(json);
  if (!doc) return 3;
  cJSON_ArrayForEach(r, results) {
    const cJSON *tx = cJSON_GetObjectItemCaseSensitive(r, "triton");
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(r, "dtype");
    printf("# m=%.0f n=%.0f k=%.0f dtype=%s\n%s\n",
           cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(r, "m")),
           cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(r, "n")),
           cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(r, "k")),
           cJSON_IsString(dt) ? dt->valuestring : "?", cJSON_IsString(tx) ? tx->valuestring : "[]");
  }
  cJSON_Delete(doc);
  return 0;
}

int cli_kernels_select(cli_opts *o) {
  const char *file = NULL, *format = "json";
  api_ctx *ctx = NULL;
  char *in = NULL, *body = NULL, *out = NULL;
  size_t len = 0, blen = 0;
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
  if (strcmp(format, "json") != 0 && strcmp(format, "triton") != 0)
    return bad_args("--format must be json or triton, not ", format);
  if ((rc = cli_read_input(file, &in, &len, &err))) goto cleanup;
  if (o->hw && (rc = api_override_hardware(in, len, o->hw, &body, &blen, &err))) goto cleanup;
  if ((rc = cli_open(o, &ctx, &err))) goto cleanup;
  rc = api_kernels_select(ctx, body ? body : in, body ? blen : len, &out, &err);
cleanup:
  free(in);
  free(body);
  api_ctx_free(ctx);
  if (rc) return cli_fail(&err);
  return strcmp(format, "triton") ? cli_emit(out) : emit_triton(out);
}
