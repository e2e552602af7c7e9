/* cdplan validate submit|status|cancel|ingest|report: validation runs from
 * the command line. These subcommands parse their own options (--backend,
 * --out, --calibrate, --wait beside the common --db and --hw) and call one
 * api function each (api/api_validate.h). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/api_plan.h"
#include "api/api_validate.h"
#include "cli/cli.h"

typedef struct {
  const char *backend, *out, *gpus, *steps, *warmup;
  const char *slurm[5]; /* --gpu-type, --partition, --account, --qos, --constraint */
  int calibrate, show;
  double wait_s;
  const char *pos[4];
  int npos;
} val_args;

static int bad_args(const char *msg, const char *arg) {
  svc_err err;
  svc_err_set(&err, SVC_BAD_ARGS, "", "%s%s (see cdplan validate COMMAND --help)", msg,
              arg ? arg : "");
  return cli_fail(&err);
}

static const char *const slurm_flags[5] = {"--gpu-type", "--partition", "--account", "--qos",
                                           "--constraint"};
static const char *const slurm_keys[5] = {"gpu_type", "partition", "account", "qos", "constraint"};
static int slurm_opt(const char *s) {
  for (int i = 0; i < 5; i++)
    if (!strcmp(s, slurm_flags[i])) return i;
  return -1;
}

/* Options anywhere; at most max positionals. 0 or an exit status. */
static int parse(cli_opts *o, val_args *a, int max) {
  memset(a, 0, sizeof *a);
  for (int i = 0; i < o->argc; i++) {
    const char *s = o->argv[i];
    int has_val = i + 1 < o->argc;
    if (!strcmp(s, "--calibrate")) {
      a->calibrate = 1;
    } else if (!strcmp(s, "--show")) {
      a->show = 1;
    } else if (!strcmp(s, "--db") || !strcmp(s, "--hw") || !strcmp(s, "--backend") ||
               !strcmp(s, "--out") || !strcmp(s, "--wait") || !strcmp(s, "--gpus") ||
               !strcmp(s, "--steps") || !strcmp(s, "--warmup")) {
      if (!has_val) return bad_args("option needs a value: ", s);
      const char *v = o->argv[++i];
      if (!strcmp(s, "--db")) o->db = v;
      if (!strcmp(s, "--hw")) o->hw = v;
      if (!strcmp(s, "--backend")) a->backend = v;
      if (!strcmp(s, "--out")) a->out = v;
      if (!strcmp(s, "--gpus")) a->gpus = v;
      if (!strcmp(s, "--steps")) a->steps = v;
      if (!strcmp(s, "--warmup")) a->warmup = v;
      if (!strcmp(s, "--wait")) {
        char *end = NULL;
        a->wait_s = strtod(v, &end);
        if (!end || *end || !(a->wait_s >= 0 && a->wait_s <= 86400))
          return bad_args("--wait takes seconds (0 to 86400), not ", v);
      }
    } else if (slurm_opt(s) >= 0) {
      if (!has_val) return bad_args("option needs a value: ", s);
      a->slurm[slurm_opt(s)] = o->argv[++i];
    } else if (s[0] == '-' && s[1] != '\0') {
      return bad_args("unknown option ", s);
    } else {
      if (a->npos >= max) return bad_args("too many arguments at ", s);
      a->pos[a->npos++] = s;
    }
  }
  return 0;
}

static int finish(api_ctx *ctx, int rc, char *out, const svc_err *err) {
  api_ctx_free(ctx);
  return rc ? cli_fail(err) : cli_emit(out);
}

int cli_validate_submit(cli_opts *o) {
  api_ctx *ctx = NULL;
  char *in = NULL, *out = NULL;
  size_t len = 0;
  val_args a;
  svc_err err;
  int rc;
  svc_err_clear(&err);
  if ((rc = parse(o, &a, 1))) return rc;
  if (a.npos != 1) return bad_args("submit takes one request FILE or -", NULL);
  if (a.out && (!a.backend || strcmp(a.backend, "bundle")))
    return bad_args("--out goes with --backend bundle", NULL);
  if (a.backend && !strcmp(a.backend, "bundle") && !a.out)
    return bad_args("--backend bundle needs --out DIR", NULL);
  if ((rc = cli_read_input(a.pos[0], &in, &len, &err))) goto cleanup;
  if ((rc = cli_open(o, &ctx, &err))) goto cleanup;
  api_val_opts opts = {.backend = a.backend, .bundle_dir = a.out};
  rc = api_validation_submit_opts(ctx, in, len, &opts, &out, &err);
cleanup:
  free(in);
  return finish(ctx, rc, out, &err);
}

/* With --wait, poll until the job is final or the time is up. */
int cli_validate_status(cli_opts *o) {
  api_ctx *ctx = NULL;
  char *out = NULL;
  val_args a;
  svc_err err;
  int rc;
  svc_err_clear(&err);
  if ((rc = parse(o, &a, 1))) return rc;
  if ((rc = cli_open(o, &ctx, &err))) return finish(ctx, rc, out, &err);
  if (a.npos == 0) {
    rc = api_validation_list(ctx, &out, &err); /* before finish() reads out */
    return finish(ctx, rc, out, &err);
  }
  double deadline = svc_now() + a.wait_s;
  for (;;) {
    api_reply rep = {0};
    rc = api_validation_get_reply(ctx, a.pos[0], 0, &rep, &err);
    out = rep.json;
    if (rc || !api_reply_active(&rep) || svc_now() >= deadline) break;
    free(out);
    out = NULL;
    usleep(200000);
  }
  return finish(ctx, rc, out, &err);
}

int cli_validate_cancel(cli_opts *o) {
  api_ctx *ctx = NULL;
  char *out = NULL;
  val_args a;
  svc_err err;
  int rc;
  svc_err_clear(&err);
  if ((rc = parse(o, &a, 1))) return rc;
  if (a.npos != 1) return bad_args("cancel takes one validation ID", NULL);
  if (!(rc = cli_open(o, &ctx, &err))) rc = api_validation_cancel(ctx, a.pos[0], &out, &err);
  return finish(ctx, rc, out, &err);
}

int cli_validate_ingest(cli_opts *o) {
  api_ctx *ctx = NULL;
  char *in = NULL, *out = NULL;
  size_t len = 0;
  val_args a;
  svc_err err;
  int rc;
  svc_err_clear(&err);
  if ((rc = parse(o, &a, 1))) return rc;
  if (a.npos != 1) return bad_args("ingest takes one RESULT.json or -", NULL);
  /* A sweep's result may be larger than a request body. */
  rc = strcmp(a.pos[0], "-") ? svc_read_file(a.pos[0], API_MAX_RESULT, &in, &len, &err)
                             : cli_read_input(a.pos[0], &in, &len, &err);
  if (!rc && !(rc = cli_open(o, &ctx, &err))) rc = api_validation_ingest(ctx, in, len, &out, &err);
  free(in);
  return finish(ctx, rc, out, &err);
}

int cli_validate_report(cli_opts *o) {
  api_ctx *ctx = NULL;
  char *out = NULL;
  val_args a;
  svc_err err;
  int rc;
  svc_err_clear(&err);
  if ((rc = parse(o, &a, 1))) return rc;
  if (a.npos != 1) return bad_args("report takes one validation ID", NULL);
  if (!(rc = cli_open(o, &ctx, &err)))
    rc = api_validation_report(ctx, a.pos[0], a.calibrate, &out, &err);
  return finish(ctx, rc, out, &err);
}

/* A count option's value as a JSON member: digits only (the api checks the
 * range and names the field). */
static int add_count(cJSON *body, const char *key, const char *v) {
  if (!v) return 0;
  if (!*v || strspn(v, "0123456789") != strlen(v) || strlen(v) > 9) return -1;
  cJSON_AddNumberToObject(body, key, (double)strtol(v, NULL, 10));
  return 0;
}

/* cdplan validate plan ID: run the plan's baseline and planned recipes
 * (api_plan_validate); --wait polls the plan until both jobs are final and
 * prints it with its validation; --show only prints the plan. */
int cli_validate_plan(cli_opts *o) {
  api_ctx *ctx = NULL;
  char *out = NULL, *body = NULL;
  cJSON *b = NULL;
  val_args a;
  svc_err err;
  int rc;
  svc_err_clear(&err);
  if ((rc = parse(o, &a, 1))) return rc;
  if (a.npos != 1) return bad_args("plan takes one plan ID", NULL);
  if (a.out && (!a.backend || strcmp(a.backend, "bundle")))
    return bad_args("--out goes with --backend bundle", NULL);
  if (a.backend && !strcmp(a.backend, "bundle") && !a.out)
    return bad_args("--backend bundle needs --out DIR", NULL);
  b = cJSON_CreateObject();
  if (add_count(b, "gpus", a.gpus)) rc = bad_args("--gpus takes a count, not ", a.gpus);
  if (!rc && add_count(b, "steps", a.steps)) rc = bad_args("--steps takes a count, not ", a.steps);
  if (!rc && add_count(b, "warmup", a.warmup))
    rc = bad_args("--warmup takes a count, not ", a.warmup);
  if (rc) {
    cJSON_Delete(b);
    return rc;
  }
  if (a.backend) cJSON_AddStringToObject(b, "backend", a.backend);
  for (int i = 0; i < 5; i++)
    if (a.slurm[i]) cJSON_AddStringToObject(b, slurm_keys[i], a.slurm[i]);
  body = cJSON_PrintUnformatted(b);
  cJSON_Delete(b);
  if (!body) {
    svc_err_set(&err, SVC_NOMEM, "", NULL);
    return cli_fail(&err);
  }
  if ((rc = cli_open(o, &ctx, &err))) goto cleanup;
  if (!a.show) {
    api_plan_val_opts opts = {.backend = NULL, .bundle_dir = a.out};
    if ((rc = api_plan_validate(ctx, a.pos[0], body, strlen(body), &opts, &out, &err)) ||
        a.wait_s <= 0)
      goto cleanup;
    free(out);
    out = NULL;
  }
  double deadline = svc_now() + a.wait_s;
  for (;;) {
    api_reply rep = {0};
    rc = api_plan_get_reply(ctx, a.pos[0], &rep, &err);
    out = rep.json;
    if (rc || !api_reply_active(&rep) || svc_now() >= deadline) break;
    free(out);
    out = NULL;
    usleep(200000);
  }
cleanup:
  free(body);
  return finish(ctx, rc, out, &err);
}
