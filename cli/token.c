/* cdplan token create|list|revoke: API tokens for `cdplan serve`.
 * create prints the secret once (in its JSON "token" member); only its
 * SHA-256 is stored, so a lost token is revoked and replaced, never
 * recovered. create parses its own options (--scope, --name, --db). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_tokens.h"
#include "cli/cli.h"

int cli_token_create(cli_opts *o) {
  const char *scope = NULL, *name = NULL;
  api_ctx *ctx = NULL;
  char *out = NULL;
  svc_err err;
  int rc = 0;
  svc_err_clear(&err);
  for (int i = 0; i < o->argc; i++) {
    const char *a = o->argv[i], *v = i + 1 < o->argc ? o->argv[i + 1] : NULL;
    if (!strcmp(a, "--scope") || !strcmp(a, "--name") || !strcmp(a, "--db")) {
      if (!v) {
        rc = svc_err_set(&err, SVC_BAD_ARGS, "", "%s needs a value", a);
        goto cleanup;
      }
      i++;
      if (!strcmp(a, "--scope")) scope = v;
      if (!strcmp(a, "--name")) name = v;
      if (!strcmp(a, "--db")) o->db = v;
    } else {
      rc = svc_err_set(&err, SVC_BAD_ARGS, "", "token create: unknown argument '%s'", a);
      goto cleanup;
    }
  }
  if (!scope) {
    rc = svc_err_set(&err, SVC_BAD_ARGS, "scope",
                     "token create needs --scope with one or more of read,plan,dispatch,admin");
    goto cleanup;
  }
  if ((rc = cli_open(o, &ctx, &err))) goto cleanup;
  rc = api_token_create(ctx, scope, name, &out, &err);
cleanup:
  api_ctx_free(ctx);
  return rc ? cli_fail(&err) : cli_emit(out);
}

int cli_token_list(cli_opts *o) {
  api_ctx *ctx = NULL;
  char *out = NULL;
  svc_err err;
  int rc;
  svc_err_clear(&err);
  if (o->argc != 0) {
    svc_err_set(&err, SVC_BAD_ARGS, "", "token list takes no arguments");
    return cli_fail(&err);
  }
  if (!(rc = cli_open(o, &ctx, &err))) rc = api_token_list(ctx, &out, &err);
  api_ctx_free(ctx);
  return rc ? cli_fail(&err) : cli_emit(out);
}

int cli_token_revoke(cli_opts *o) {
  api_ctx *ctx = NULL;
  char *out = NULL, *end = NULL;
  svc_err err;
  int rc;
  svc_err_clear(&err);
  long long id = o->argc == 1 ? strtoll(o->argv[0], &end, 10) : 0;
  if (o->argc != 1 || !*o->argv[0] || *end || id <= 0) {
    svc_err_set(&err, SVC_BAD_ARGS, "", "token revoke takes one token ID (see cdplan token list)");
    return cli_fail(&err);
  }
  if (!(rc = cli_open(o, &ctx, &err))) rc = api_token_revoke(ctx, (int64_t)id, &out, &err);
  api_ctx_free(ctx);
  return rc ? cli_fail(&err) : cli_emit(out);
}
