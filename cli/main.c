/* cdplan: the command-line front end. Each subcommand reads its request
 * from a file argument or "-", calls one api function, writes JSON to
 * stdout; errors are the same JSON documents as the REST API's, on stderr,
 * with a non-zero exit status. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "api/api_step.h"
#include "cli/cli.h"

int cli_fail(const svc_err *err) {
  char *doc = api_error_json(err);
  fprintf(stderr, "%s\n", doc ? doc : "{\"error\":{\"code\":\"nomem\"}}");
  free(doc);
  int http = svc_code_http(err->code);
  return err->code == SVC_BAD_ARGS ? 2 : http >= 500 ? 3 : 1;
}

int cli_emit(char *json) {
  if (!json) return 3;
  fputs(json, stdout);
  fputc('\n', stdout);
  free(json);
  return fflush(stdout) == 0 ? 0 : 3;
}

/* A file that is not there is a command-line mistake (exit 2), not ours. */
int cli_check_path(const char *path, int dir, svc_err *err) {
  struct stat st;
  const char *field = dir ? "dir" : "file";
  if (stat(path, &st) != 0)
    return svc_err_set(err, SVC_BAD_ARGS, field, "cannot read input %s %s: %s", field, path,
                       strerror(errno));
  if (!dir && S_ISDIR(st.st_mode))
    return svc_err_set(err, SVC_BAD_ARGS, field, "input %s is a directory, not a file", path);
  if (dir && !S_ISDIR(st.st_mode))
    return svc_err_set(err, SVC_BAD_ARGS, field, "input %s is not a directory", path);
  return 0;
}

int cli_read_input(const char *path, char **out, size_t *len, svc_err *err) {
  if (strcmp(path, "-") != 0) {
    int rc = cli_check_path(path, 0, err);
    return rc ? rc : svc_read_file(path, API_MAX_BODY, out, len, err);
  }
  size_t cap = 65536, n = 0;
  char *buf = malloc(cap);
  if (!buf) return svc_err_set(err, SVC_NOMEM, "", NULL);
  for (;;) {
    if (n + 1 >= cap) {
      if (cap > API_MAX_BODY) {
        free(buf);
        return svc_err_set(err, SVC_TOO_LARGE, "", "input is larger than %d bytes", API_MAX_BODY);
      }
      char *nb = realloc(buf, cap * 2);
      if (!nb) {
        free(buf);
        return svc_err_set(err, SVC_NOMEM, "", NULL);
      }
      buf = nb;
      cap *= 2;
    }
    size_t got = fread(buf + n, 1, cap - n - 1, stdin);
    if (got == 0) break;
    n += got;
  }
  if (n > API_MAX_BODY) {
    free(buf);
    return svc_err_set(err, SVC_TOO_LARGE, "", "input is larger than %d bytes", API_MAX_BODY);
  }
  buf[n] = '\0';
  *out = buf;
  *len = n;
  return 0;
}

/* --hw applies to every request that names hardware, after it is parsed. */
/* SQLite opens a private temporary database for "": what a command wrote
 * there (a token printed once) would be lost, so an empty --db (as
 * --db=$UNSET gives) is refused. */
int cli_check_db(const cli_opts *o, svc_err *err) {
  if (o->db && *o->db) return 0;
  return svc_err_set(err, SVC_BAD_ARGS, "db", "--db needs a database path, not an empty one");
}

int cli_open(cli_opts *o, api_ctx **ctx, svc_err *err) {
  int rc = cli_check_db(o, err);
  if (!rc) rc = api_ctx_new(ctx, o->db, err);
  if (!rc) api_ctx_set_hardware(*ctx, o->hw);
  return rc;
}

/* A command-line mistake: exit 2 with the error document. */
static int usage_error(const char *what, const char *arg) {
  svc_err err;
  svc_err_set(&err, SVC_BAD_ARGS, "", "%s%s (see cdplan --help)", what, arg);
  return cli_fail(&err);
}

/* A subcommand that takes one request (FILE or -) and one api call. */
typedef int (*request_fn)(api_ctx *, const char *, size_t, char **, svc_err *);

static int run_request(cli_opts *o, request_fn fn) {
  /* A descriptor names no hardware to override: hw add --hw has always
   * added the member to its text (and the api refuses it). */
  int text_hw = fn == api_hw_create;
  api_ctx *ctx = NULL;
  char *in = NULL, *body = NULL, *out = NULL;
  size_t len = 0, blen = 0;
  svc_err err;
  int rc;
  svc_err_clear(&err);
  if (o->argc != 1) return usage_error("expected one request file or - for stdin", "");
  if ((rc = cli_read_input(o->argv[0], &in, &len, &err))) goto cleanup;
  if (o->hw && text_hw) {
    if ((rc = api_override_hardware(in, len, o->hw, &body, &blen, &err))) goto cleanup;
  }
  if ((rc = cli_open(o, &ctx, &err))) goto cleanup;
  rc = fn(ctx, body ? body : in, body ? blen : len, &out, &err);
cleanup:
  free(in);
  free(body);
  api_ctx_free(ctx);
  return rc ? cli_fail(&err) : cli_emit(out);
}

static int cmd_estimate(cli_opts *o) { return run_request(o, api_estimate); }
static int cmd_step(cli_opts *o) { return run_request(o, api_step); }
static int cmd_hw_add(cli_opts *o) { return run_request(o, api_hw_create); }

static int cmd_hw_list(cli_opts *o) {
  api_ctx *ctx = NULL;
  char *out = NULL;
  svc_err err;
  const char *vendor = NULL;
  int rc;
  if (o->argc > 1) return usage_error("hw list takes at most one vendor", "");
  if (o->argc == 1) vendor = o->argv[0];
  if (!(rc = cli_open(o, &ctx, &err))) rc = api_hw_list(ctx, vendor, &out, &err);
  api_ctx_free(ctx);
  return rc ? cli_fail(&err) : cli_emit(out);
}

static int cmd_hw_show(cli_opts *o) {
  api_ctx *ctx = NULL;
  char *out = NULL;
  svc_err err;
  int rc;
  const char *name = o->argc == 1 ? o->argv[0] : o->hw;
  if (!name || o->argc > 1) return usage_error("hw show takes one hardware NAME", "");
  if (!(rc = cli_open(o, &ctx, &err))) rc = api_hw_get(ctx, name, &out, &err);
  api_ctx_free(ctx);
  return rc ? cli_fail(&err) : cli_emit(out);
}

static int cmd_hw_import(cli_opts *o) {
  api_ctx *ctx = NULL;
  char *out = NULL;
  svc_err err;
  int rc;
  if (o->argc != 1) return usage_error("hw import takes one DIR", "");
  if (!(rc = cli_check_path(o->argv[0], 1, &err)) && !(rc = cli_open(o, &ctx, &err)))
    rc = api_hw_import_dir(ctx, o->argv[0], &out, &err);
  api_ctx_free(ctx);
  return rc ? cli_fail(&err) : cli_emit(out);
}

static const cli_cmd commands[] = {
    {"serve", cli_serve,
     "cdplan serve [--listen ADDR:PORT] [--db PATH] [--token-file FILE] [--web DIR]\n"
     "               [--threads N] [--rate N] [--burst N] [--max-conns N] [--timeout S]\n"
     "               [--max-conns-per-ip N] [--header-timeout S] [--body-timeout S]\n"
     "               [--max-buffered-mib N]",
     "Serve the REST API and the dashboard (default 127.0.0.1:8080). Prints\n"
     "{\"listening\":\"http://ADDR:PORT\"} once ready; SIGTERM or SIGINT stop it cleanly.\n"
     "Tokens ('Authorization: Bearer TOKEN'): once `cdplan token create` has made one,\n"
     "every /v1 route needs a token with its scope; with --token-file only, writes need\n"
     "that token (it holds every scope). --rate N limits each client address and each\n"
     "token to N requests/s (bursts of --burst, default 2N; 429 beyond; default off).\n"
     "--max-conns (default 1024) and --timeout (idle seconds, default 30) bound connections;\n"
     "--max-conns-per-ip (64) caps one address's; --header-timeout (10 s, from accept or\n"
     "the previous reply) and --body-timeout (60 s) are deadlines trickled bytes do not\n"
     "reset; --max-buffered-mib (64) caps request bodies held at once (503 beyond).\n"
     "Each number is checked (exit 2 otherwise): --threads 0-1024 (0: one per core),\n"
     "--rate 0-1e6 (0: off), --burst >= 1, the counts >= 1, the timeouts >= 1 s."},
    {"hw list", cmd_hw_list, "cdplan hw list [VENDOR] [--db PATH]",
     "List the hardware catalog, optionally one vendor's (nvidia, amd, ...)."},
    {"hw show", cmd_hw_show, "cdplan hw show NAME [--db PATH]",
     "Show one hardware descriptor with its latest calibration."},
    {"hw add", cmd_hw_add, "cdplan hw add FILE|- [--db PATH]",
     "Add a hardware descriptor (JSON, see data/hardware/README.md). Fails if the name exists."},
    {"hw import", cmd_hw_import, "cdplan hw import DIR [--db PATH]",
     "Add or replace every *.json descriptor in DIR, all or nothing."},
    {"estimate", cmd_estimate, "cdplan estimate FILE|- [--hw NAME] [--db PATH]",
     "Predict op times: {\"hardware\":NAME,\"ops\":[...]} (see docs/openapi.yaml)."},
    {"plan", cli_plan, "cdplan plan FILE|- [--hw NAME] [--db PATH]",
     "Plan batch, precision, checkpointing, DDP/FSDP, padding and the embedding sharding\n"
     "for a DLRM workload on one accelerator (see docs/planner.md); progress on stderr."},
    {"compare", cli_compare, "cdplan compare FILE|- [--db PATH]",
     "Run the recipe tuned for \"from\" unchanged on \"to\" (the direct port) against the\n"
     "plan made for \"to\": both predictions and the gain split by change."},
    {"step", cmd_step, "cdplan step FILE|- [--hw NAME] [--db PATH]",
     "Predict one training step: {\"hardware\":NAME,\"workload\":{...},\"recipe\":{...}}\n"
     "-> step_ms, samples_per_s, peak_memory_bytes, breakdown, memory, kernel_classes\n"
     "(see docs/step-model.md and data/workloads/)."},
    {"kernels select", cli_kernels_select,
     "cdplan kernels select FILE|- [--hw NAME] [--format json|triton|triton-heuristic] [--db PATH]",
     "Rank Triton GEMM tile configs per problem without autotuning:\n"
     "{\"hardware\":NAME,\"problems\":[{\"m\",\"n\",\"k\",\"dtype\"}],\"candidates\"?:[...]}.\n"
     "--format triton prints each problem's paste-ready triton.Config list (docs/kernels.md);\n"
     "--format triton-heuristic a Python module with the one chosen config per shape\n"
     "(config_for(M, N, K, dtype), heuristics(dtype) for @triton.heuristics). AMD configs\n"
     "carry waves_per_eu, matrix_instr_nonkdim and kpack."},
    {"calibrate", cli_calibrate,
     "cdplan calibrate [--hw NAME] [--rows fit|all] [--host-probe] FILE... [--db PATH]",
     "Fit the cost model's efficiency parameters for NAME to measurement files\n"
     "(formats of data/measurements/h200), store them as a new calibration version,\n"
     "and print the fit's error. Published-measurement files (the row format of\n"
     "data/measurements/published/gemm.json) fit each architecture's achievable\n"
     "fraction of the peak per dtype instead, on the \"fit\" rows (--rows all: every\n"
     "row), stored per arch for every accelerator without a calibration of its own;\n"
     "--hw then restricts the fit to that accelerator's arch. --host-probe FILE (a runner\n"
     "dlrm_step result) stores that machine's host speed in NAME's calibration instead:\n"
     "step_host_op_us = 0.344 x host_probe.step_kernel_us, used by step and plan answers\n"
     "whose recipe gives no host_op_us (host_op_source \"calibration\", host_op_probe)."},
    {"validate submit", cli_validate_submit,
     "cdplan validate submit FILE|- [--backend local|slurm|bundle] [--out DIR] [--hw NAME] "
     "[--db PATH]",
     "Submit a validation run: {\"kind\",\"hardware\",\"params\",\"prediction\"?,\"backend\"?}.\n"
     "local runs validate/gpu/runner.py here; slurm submits it with sbatch; bundle writes\n"
     "job.json, runner.py and run.sh to --out DIR to run anywhere. Prints the job and its token."},
    {"validate status", cli_validate_status,
     "cdplan validate status [ID] [--wait SECONDS] [--db PATH]",
     "Show one validation job (polled against its backend first), or list them all.\n"
     "--wait polls until the job is done, failed or cancelled, or the time is up."},
    {"validate cancel", cli_validate_cancel, "cdplan validate cancel ID [--db PATH]",
     "Stop a queued or running validation job."},
    {"validate ingest", cli_validate_ingest, "cdplan validate ingest RESULT.json|- [--db PATH]",
     "Store a runner's result (from a bundle); the result's \"id\" names the job."},
    {"validate report", cli_validate_report, "cdplan validate report ID [--calibrate] [--db PATH]",
     "Predicted against measured per case with median, p90 and max relative error;\n"
     "--calibrate also fits a new calibration version from the measurements; for a\n"
     "dlrm_step job (a plan validated as planned) the step-level scales\n"
     "step_dlrm_gpu_scale and step_uvm_link_scale, fitted on the job and its plan's\n"
     "other side, scored on the hardware's other dlrm_step jobs, stored over the\n"
     "latest version with the jobs and device (409 naming device for another GPU)."},
    {"export torchrec", cli_export_torchrec,
     "cdplan export torchrec PLAN_ID [--module PATH] [--db PATH]",
     "Print a stored plan (or a compare's plan for \"to\") as a Python module whose\n"
     "build_plan(ebc) returns TorchRec's ShardingPlan, built with TorchRec's helpers\n"
     "(table_wise, row_wise, column_wise, table_row_wise, data_parallel), for the\n"
     "EmbeddingBagCollection at --module (default sparse_arch.embedding_bag_collection)."},
    {"import torchrec", cli_import_torchrec, "cdplan import torchrec FILE|-",
     "Read TorchRec table configs (a JSON list of EmbeddingBagConfig fields, or\n"
     "{\"tables\",\"constraints\":{NAME:{\"pooling_factors\"}},\"dense_features\",...})\n"
     "and print {\"workload\",\"recipe\":{\"embedding_precision\"}} for cdplan step/plan."},
    {"validate plan", cli_validate_plan,
     "cdplan validate plan ID [--backend local|slurm|bundle] [--out DIR] [--gpus N] [--steps N] "
     "[--warmup N] [--host-mini B] [--gpu-type T] [--partition P] [--account A] [--qos Q] "
     "[--constraint C] [--wait SECONDS] [--show] [--db PATH]",
     "Run a stored plan's (or compare's) baseline and planned recipes on its workload as two\n"
     "dlrm_step runner jobs and link them to the plan; the plan (cdplan validate plan ID --show,\n"
     "GET /v1/plans/ID) then shows predicted against measured step time, memory and gain.\n"
     "--host-mini B also steps each one-GPU case at batch B after its timed steps (result\n"
     "host_mini: its own host, for recipe host_mini_batch + host_mini_step_ms).\n"
     "--wait polls until both jobs are final and prints the plan; bundle writes DIR/baseline\n"
     "and DIR/planned; slurm places the jobs with --gres=gpu:TYPE:N and the other options\n"
     "(else $CDPLAN_SLURM_GPU_TYPE, _PARTITION, _ACCOUNT, _QOS, _CONSTRAINT)."},
    {"token create", cli_token_create,
     "cdplan token create --scope read,plan,dispatch,admin [--name NAME] [--db PATH]",
     "Make an API token for `cdplan serve` and print it once: {\"id\",...,\"token\":SECRET}.\n"
     "Only its SHA-256 is stored. Scopes: read (GET, estimate, step, kernels), plan\n"
     "(plans, compare), dispatch (validation jobs), admin (catalog, calibration; implies\n"
     "all). Once any token exists, a running server requires one on every /v1 route."},
    {"token list", cli_token_list, "cdplan token list [--db PATH]",
     "List API tokens (id, name, scopes, created_at, revoked_at); never their secrets."},
    {"token revoke", cli_token_revoke, "cdplan token revoke ID [--db PATH]",
     "Revoke a token; a running server refuses it within a second."},
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

static void print_help(FILE *f) {
  fprintf(f, "cdplan %s: hardware-model co-design planner\n\nUsage:\n", api_version());
  for (size_t i = 0; i < N_COMMANDS; i++) fprintf(f, "  %s\n", commands[i].usage);
  fprintf(f, "\nEvery command writes JSON to stdout; errors are JSON on stderr with a non-zero\n"
             "exit status (1 refused request, 2 bad command line, 3 internal failure).\n"
             "--db defaults to $CDPLAN_DB, else ./cdplan.db; a new database is seeded with\n"
             "the built-in hardware catalog. 'cdplan COMMAND --help' explains one command.\n"
             "Options take --name=value or --name value; --db and --hw may come before the\n"
             "command. --server http://HOST:PORT (before the command) sends estimate, step,\n"
             "plan, compare, hw list|show|add and export torchrec to a running server instead,\n"
             "with $CDPLAN_TOKEN as the Bearer token.\n");
}

/* Each command's name, then a tab and each long option its usage names. */
static void list_commands(void) {
  for (size_t i = 0; i < N_COMMANDS; i++) {
    const char *u = commands[i].usage;
    fputs(commands[i].name, stdout);
    while ((u = strstr(u, "--"))) {
      size_t n = 2 + strspn(u + 2, "abcdefghijklmnopqrstuvwxyz-");
      if (n > 2) printf("\t%.*s", (int)n, u);
      u += n;
    }
    fputc('\n', stdout);
  }
}

/* The command after the global options: av[1] (and av[2]) name it. */
static const cli_cmd *find_command(int ac, char **av, int *skip) {
  for (size_t i = 0; i < N_COMMANDS; i++) {
    const char *name = commands[i].name, *sp = strchr(name, ' ');
    if (!sp && !strcmp(av[1], name)) {
      *skip = 2;
      return &commands[i];
    }
    if (sp && ac >= 3 && strlen(av[1]) == (size_t)(sp - name) &&
        !strncmp(av[1], name, (size_t)(sp - name)) && !strcmp(av[2], sp + 1)) {
      *skip = 3;
      return &commands[i];
    }
  }
  return NULL;
}

/* A command group ("hw", "validate", ...) without a known subcommand: list
 * the group's commands; -1 when av[1] is no group. */
static int group_usage(int ac, char **av) {
  size_t glen = strlen(av[1]);
  int group = 0, ghelp = ac >= 3 && (!strcmp(av[2], "--help") || !strcmp(av[2], "-h"));
  FILE *gout = ghelp ? stdout : stderr;
  for (size_t i = 0; i < N_COMMANDS; i++) {
    if (!strncmp(commands[i].name, av[1], glen) && commands[i].name[glen] == ' ') {
      if (!group++) fprintf(gout, "Usage: cdplan %s COMMAND, one of\n", av[1]);
      fprintf(gout, "  %s\n", commands[i].usage);
    }
  }
  return group ? (ghelp ? 0 : 2) : -1;
}

/* serve, validate, token create, kernels select and calibrate read their
 * own options (from an argv with --name=value split). */
static int own_options(const cli_cmd *cmd) {
  return !strcmp(cmd->name, "serve") || !strncmp(cmd->name, "validate ", 9) ||
         !strcmp(cmd->name, "token create") || !strcmp(cmd->name, "kernels select") ||
         !strcmp(cmd->name, "calibrate");
}

static int run_command(const cli_cmd *cmd, cli_opts *o, int ac, char **av) {
  char **rest = NULL;
  int help = 0, n = 0, rc;
  if (own_options(cmd)) {
    o->argc = ac, o->argv = av;
    for (int i = 0; i < ac; i++)
      if (!strcmp(av[i], "--help") || !strcmp(av[i], "-h")) help = 1;
    if (help) {
      printf("Usage: %s\n\n%s\n", cmd->usage, cmd->help);
      return 0;
    }
    return o->server ? cli_remote(cmd->name, o) : cmd->fn(o);
  }
  if ((rc = cli_opts_common(ac, av, o, &help, &rest, &n))) return rc < 0 ? 3 : rc;
  if (help) {
    printf("Usage: %s\n\n%s\n", cmd->usage, cmd->help);
    free(rest);
    return 0;
  }
  o->argc = n;
  o->argv = rest;
  rc = o->server ? cli_remote(cmd->name, o) : cmd->fn(o);
  free(rest);
  return rc;
}

int main(int argc, char **argv) {
  cli_opts o = {0};
  const cli_cmd *cmd = NULL;
  int help = 0, version = 0, first = 1, skip = 0, rc, ac;
  char **av = NULL;
  /* Hidden: the command table, one command a line, then its options as
   * "\t--opt" (read from its usage text), for the generated completion. */
  if (argc == 2 && !strcmp(argv[1], "--commands")) {
    list_commands();
    return 0;
  }
  o.db = getenv("CDPLAN_DB");
  if (!o.db || !*o.db) o.db = "cdplan.db";
  if ((rc = cli_opts_global(argc, argv, &o, &first, &help, &version))) return rc;
  if (version) {
    printf("cdplan %s\n", api_version());
    return 0;
  }
  if (first >= argc || !strcmp(argv[first], "help")) {
    print_help(stdout);
    return first >= argc && !help ? 2 : 0;
  }
  /* av: the program name, then the command and its arguments, split */
  if ((ac = cli_opts_split(argc - first + 1, argv + first - 1, &av)) < 0) return 3;
  av[0] = argv[0];
  if (!(cmd = find_command(ac, av, &skip))) {
    rc = group_usage(ac, av);
    if (rc < 0) rc = usage_error("unknown command ", av[1]);
    free(av);
    return rc;
  }
  if (help) {
    printf("Usage: %s\n\n%s\n", cmd->usage, cmd->help);
    free(av);
    return 0;
  }
  rc = run_command(cmd, &o, ac - skip, av + skip);
  free(av);
  return rc;
}
