/* cli internals: the subcommand table and the helpers every subcommand
 * shares (option parsing, reading the request, printing results and
 * errors). Exit statuses: 0 ok, 1 the request was refused (a 4xx), 2 bad
 * command line, 3 our own failure (a 5xx). */
#ifndef CDPLAN_CLI_H
#define CDPLAN_CLI_H

#include "api/api.h"
#include "common/common.h"

typedef struct {
  const char *db;     /* --db, else $CDPLAN_DB, else ./cdplan.db */
  const char *hw;     /* --hw NAME or NULL */
  const char *module; /* --module PATH (export torchrec) or NULL */
  const char *server; /* --server URL: send the command to a running server */
  int argc;           /* positional arguments left after the options */
  char **argv;
} cli_opts;

typedef int (*cli_fn)(cli_opts *o);

typedef struct {
  const char *name; /* "hw list" */
  cli_fn fn;
  const char *usage;
  const char *help;
} cli_cmd;

/* Print err as the error document on stderr; returns the exit status. */
int cli_fail(const svc_err *err);
/* Print a JSON document (and a newline) on stdout and free it. */
int cli_emit(char *json);
/* A path named on the command line that is not there, or is (dir 0) a
 * folder or (dir 1) not a folder: a bad_args error (exit 2). 0 when fine. */
int cli_check_path(const char *path, int dir, svc_err *err);
/* Read FILE or "-" (stdin) into a malloc'd buffer of at most API_MAX_BODY. */
int cli_read_input(const char *path, char **out, size_t *len, svc_err *err);
/* An empty o->db: a bad_args error (exit 2). 0 when fine. */
int cli_check_db(const cli_opts *o, svc_err *err);
/* Open the api context on o->db (cli_check_db first). */
int cli_open(cli_opts *o, api_ctx **ctx, svc_err *err);

/* cli/opts.c (getopt_long). Global options before the command: argv[1..]
 * up to the command word, whose index goes to *first. */
int cli_opts_global(int argc, char **argv, cli_opts *o, int *first, int *help, int *version);
/* A malloc'd argv with every "--name=value" after argv[0] split in two;
 * returns its length, -1 without memory. The strings stay argv's. */
int cli_opts_split(int argc, char **argv, char ***out);
/* --db, --hw, --module, --help anywhere; *rest (malloc'd) the positional
 * arguments in order. Non-zero: the exit status (usage printed). */
int cli_opts_common(int argc, char **argv, cli_opts *o, int *help, char ***rest, int *nrest);

/* cli/client.c: one HTTP request to o->server's REST route for the
 * command (CDPLAN_TOKEN as the Bearer token); returns the exit status. */
int cli_remote(const char *name, cli_opts *o);
int cli_remote_call(const char *server, const char *method, const char *path, const char *body,
                    size_t blen, int raw_text);

int cli_serve(cli_opts *o);
int cli_calibrate(cli_opts *o);
int cli_plan(cli_opts *o);            /* cli/plan.c */
int cli_compare(cli_opts *o);         /* cli/plan.c */
int cli_kernels_select(cli_opts *o);  /* cli/kernels.c: parses its own options */
int cli_export_torchrec(cli_opts *o); /* cli/export.c */
int cli_import_torchrec(cli_opts *o);
int cli_token_create(cli_opts *o); /* cli/token.c */
int cli_token_list(cli_opts *o);
int cli_token_revoke(cli_opts *o);
/* cli/validate.c: these parse their own options (see main.c). */
int cli_validate_submit(cli_opts *o);
int cli_validate_status(cli_opts *o);
int cli_validate_cancel(cli_opts *o);
int cli_validate_ingest(cli_opts *o);
int cli_validate_report(cli_opts *o);
int cli_validate_plan(cli_opts *o); /* cli/validate.c: a stored plan's two recipes */

#endif
