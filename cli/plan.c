/* cdplan plan / cdplan compare: one request (FILE or -) to api_plan_ex /
 * api_compare_ex. Solves longer than a second show their progress
 * (incumbent, bound, gap) on stderr, one line rewritten in place, when
 * stderr is a terminal (a log file or pipe gets no \r lines). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/api_plan.h"
#include "cli/cli.h"

int cli_plan(cli_opts *o);
int cli_compare(cli_opts *o);

typedef struct {
  int shown;
  int tty; /* stderr is a terminal */
} progress_state;

static int progress(void *user, double incumbent_ms, double bound_ms, double gap,
                    double elapsed_s) {
  progress_state *s = user;
  if (elapsed_s < 1.0 || !s->tty) return 0;
  fprintf(stderr, "\rplanning %5.1fs: slowest rank %.3f ms, bound %.3f ms, gap %.2f%%   ",
          elapsed_s, incumbent_ms, bound_ms, gap * 100);
  fflush(stderr);
  s->shown = 1;
  return 0;
}

typedef int (*plan_call)(api_ctx *, const char *, size_t, plan_progress_fn, void *, char **,
                         svc_err *);

static int run(cli_opts *o, plan_call fn, int takes_hw) {
  api_ctx *ctx = NULL;
  char *in = NULL, *out = NULL;
  size_t len = 0;
  progress_state ps = {0, isatty(fileno(stderr))};
  svc_err err;
  int rc;
  svc_err_clear(&err);
  if (o->argc != 1) {
    svc_err_set(&err, SVC_BAD_ARGS, "",
                "expected one request file or - for stdin (see cdplan --help)");
    return cli_fail(&err);
  }
  if ((rc = cli_read_input(o->argv[0], &in, &len, &err))) goto cleanup;
  if ((rc = cli_open(o, &ctx, &err))) goto cleanup;
  if (!takes_hw) api_ctx_set_hardware(ctx, NULL);
  rc = fn(ctx, in, len, progress, &ps, &out, &err);
  if (ps.shown) fputc('\n', stderr);
cleanup:
  free(in);
  api_ctx_free(ctx);
  return rc ? cli_fail(&err) : cli_emit(out);
}

int cli_plan(cli_opts *o) { return run(o, api_plan_ex, 1); }
int cli_compare(cli_opts *o) { return run(o, api_compare_ex, 0); }
