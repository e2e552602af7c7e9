/* cdplan validate submit|status|cancel|ingest|report: validation runs from
 * the command line. These subcommands parse their own options (--backend,
 * --out, --calibrate, --wait beside the common --db and --hw) and call one
 * api function each (api/api_validate.h). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/api_plan.h"
#include "api/api_validate.h"
#include "cli/cli.h"

typedef struct {
  const char *backend, *out, *gpus, *steps, *warmup, *host_mini;
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
               !strcmp(s, "--steps") || !strcmp(s, "--warmup") || !strcmp(s, "--host-mini")) {
      if (!has_val) return bad_args("option needs a value: ", s);
      const char *v = o->argv[++i];
      if (!strcmp(s, "--db")) o->db = v;
      if (!strcmp(s, "--hw")) o->hw = v;
      if (!strcmp(s, "--backend")) a->backend = v;
      if (!strcmp(s, "--out")) a->out = v;
      if (!strcmp(s, "--gpus")) a->gpus = v;
      if (!strcmp(s, "--steps")) a->steps = v;
      if (!strcmp(s, "--warmup")) a->warmup = v;
      if (!strcmp(s, "--host-mini")) a->host_mini = v;
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

/* The options of a command with exactly one argument (usage otherwise). */
static int parse_one(cli_opts *o, val_args *a, const char *usage) {
  int rc = parse(o, a, 1);
  return rc ? rc : a->npos != 1 ? bad_args(usage, NULL) : 0;
}

/* --out and --backend bundle go together. 0 or an exit status. */
static int check_bundle(const val_args *a) {
  if (a->out && (!a->backend || strcmp(a->backend, "bundle")))
    return bad_args("--out goes with --backend bundle", NULL);
  if (a->backend && !strcmp(a->backend, "bundle") && !a->out)
    return bad_args("--backend bundle needs --out DIR", NULL);
  /* a folder, made when missing; a file there failed only after the job
   * was recorded (exit 3) */
  struct stat st;
  if (a->out && stat(a->out, &st) == 0 && !S_ISDIR(st.st_mode))
    return bad_args("--out must name a folder, not the file ", a->out);
  return 0;
}

/* Get id's reply until it is no longer active (a job or a plan's jobs
 * final) or wait_s passes; *out the last reply's document. */
typedef int (*get_reply_fn)(api_ctx *ctx, const char *id, api_reply *r, svc_err *err);
static int poll_reply(api_ctx *ctx, get_reply_fn get, const char *id, double wait_s, char **out,
                      svc_err *err) {
  double deadline = svc_now() + wait_s;
  for (;;) {
    api_reply rep = {0};
    int rc = get(ctx, id, &rep, err);
    *out = rep.json;
    if (rc || !api_reply_active(&rep) || svc_now() >= deadline) return rc;
    free(*out);
    *out = NULL;
    usleep(200000);
  }
}

static int job_reply(api_ctx *ctx, const char *id, api_reply *r, svc_err *err) {
  return api_validation_get_reply(ctx, id, 0, r, err);
}

/* A command on one request file or - (stdin): read it (a file of at most
 * file_max bytes; 0: as any request, cli_read_input), then call. bundle:
 * the command takes --backend bundle --out DIR. */
typedef int (*input_fn)(api_ctx *ctx, const val_args *a, const char *in, size_t len, char **out,
                        svc_err *err);
static int on_input(cli_opts *o, const char *usage, int bundle, size_t file_max, input_fn call) {
  api_ctx *ctx = NULL;
  char *in = NULL, *out = NULL;
  size_t len = 0;
  val_args a;
  svc_err err;
  int rc;
  svc_err_clear(&err);
  if ((rc = parse_one(o, &a, usage)) || (bundle && (rc = check_bundle(&a)))) return rc;
  if (!file_max || !strcmp(a.pos[0], "-"))
    rc = cli_read_input(a.pos[0], &in, &len, &err);
  else if (!(rc = cli_check_path(a.pos[0], 0, &err)))
    rc = svc_read_file(a.pos[0], file_max, &in, &len, &err);
  if (!rc && !(rc = cli_open(o, &ctx, &err))) rc = call(ctx, &a, in, len, &out, &err);
  free(in);
  return finish(ctx, rc, out, &err);
}

static int submit(api_ctx *ctx, const val_args *a, const char *in, size_t len, char **out,
                  svc_err *err) {
  api_val_opts opts = {.backend = a->backend, .bundle_dir = a->out};
  return api_validation_submit_opts(ctx, in, len, &opts, out, err);
}

int cli_validate_submit(cli_opts *o) {
  return on_input(o, "submit takes one request FILE or -", 1, 0, submit);
}

/* A command on one validation ID (usage NULL: at most one): call(ctx, a)
 * prints *out. */
typedef int (*id_fn)(api_ctx *ctx, const val_args *a, char **out, svc_err *err);
static int on_id(cli_opts *o, const char *usage, id_fn call) {
  api_ctx *ctx = NULL;
  char *out = NULL;
  val_args a;
  svc_err err;
  int rc;
  svc_err_clear(&err);
  if ((rc = usage ? parse_one(o, &a, usage) : parse(o, &a, 1))) return rc;
  if (!(rc = cli_open(o, &ctx, &err))) rc = call(ctx, &a, &out, &err);
  return finish(ctx, rc, out, &err);
}

/* No ID: the list. With --wait, poll until the job is final or the time
 * is up. */
static int status(api_ctx *ctx, const val_args *a, char **out, svc_err *err) {
  if (a->npos == 0) return api_validation_list(ctx, out, err);
  return poll_reply(ctx, job_reply, a->pos[0], a->wait_s, out, err);
}

int cli_validate_status(cli_opts *o) { return on_id(o, NULL, status); }

static int cancel(api_ctx *ctx, const val_args *a, char **out, svc_err *err) {
  return api_validation_cancel(ctx, a->pos[0], out, err);
}

int cli_validate_cancel(cli_opts *o) { return on_id(o, "cancel takes one validation ID", cancel); }

static int ingest(api_ctx *ctx, const val_args *a, const char *in, size_t len, char **out,
                  svc_err *err) {
  return api_validation_ingest(ctx, in, len, out, err);
}

/* A sweep's result may be larger than a request body. */
int cli_validate_ingest(cli_opts *o) {
  return on_input(o, "ingest takes one RESULT.json or -", 0, API_MAX_RESULT, ingest);
}

static int report(api_ctx *ctx, const val_args *a, char **out, svc_err *err) {
  return api_validation_report(ctx, a->pos[0], a->calibrate, out, err);
}

int cli_validate_report(cli_opts *o) { return on_id(o, "report takes one validation ID", report); }

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
  if ((rc = parse_one(o, &a, "plan takes one plan ID")) || (rc = check_bundle(&a))) return rc;
  b = cJSON_CreateObject();
  if (add_count(b, "gpus", a.gpus)) rc = bad_args("--gpus takes a count, not ", a.gpus);
  if (!rc && add_count(b, "steps", a.steps)) rc = bad_args("--steps takes a count, not ", a.steps);
  if (!rc && add_count(b, "warmup", a.warmup))
    rc = bad_args("--warmup takes a count, not ", a.warmup);
  if (!rc && add_count(b, "host_mini_batch", a.host_mini))
    rc = bad_args("--host-mini takes a batch, not ", a.host_mini);
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
  rc = poll_reply(ctx, api_plan_get_reply, a.pos[0], a.wait_s, &out, &err);
cleanup:
  free(body);
  return finish(ctx, rc, out, &err);
}
