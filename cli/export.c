/* cdplan export torchrec PLAN_ID [--module PATH]: a stored plan as a
 * TorchRec ShardingPlan module (Python text on stdout); cdplan import
 * torchrec FILE|-: TorchRec table configs as a workload (api/api_torchrec.h). */
#include <stdio.h>
#include <stdlib.h>

#include "api/api_torchrec.h"
#include "cli/cli.h"

int cli_export_torchrec(cli_opts *o) {
  api_ctx *ctx = NULL;
  char *out = NULL;
  svc_err err;
  int rc;
  svc_err_clear(&err);
  if (o->argc != 1) {
    svc_err_set(&err, SVC_BAD_ARGS, "", "export torchrec takes one PLAN_ID (see cdplan --help)");
    return cli_fail(&err);
  }
  if (!(rc = cli_open(o, &ctx, &err)))
    rc = api_plan_torchrec(ctx, o->argv[0], o->module, &out, &err);
  api_ctx_free(ctx);
  if (rc) return cli_fail(&err);
  fputs(out, stdout);
  free(out);
  return fflush(stdout) == 0 ? 0 : 3;
}

int cli_import_torchrec(cli_opts *o) {
  char *in = NULL, *out = NULL;
  size_t len = 0;
  svc_err err;
  int rc;
  svc_err_clear(&err);
  if (o->argc != 1) {
    svc_err_set(&err, SVC_BAD_ARGS, "", "import torchrec takes one FILE or - (see cdplan --help)");
    return cli_fail(&err);
  }
  if (!(rc = cli_read_input(o->argv[0], &in, &len, &err)))
    rc = api_torchrec_import(in, len, &out, &err);
  free(in);
  return rc ? cli_fail(&err) : cli_emit(out);
}
