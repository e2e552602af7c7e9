/* cdplan serve: open the database, start the HTTP server, wait for SIGTERM
 * or SIGINT, then stop cleanly (requests in flight finish, the database
 * closes). The token is read from a file so that it never shows in the
 * process list; it is never printed. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "api/api_tokens.h"
#include "api/api_validate.h"
#include "server/server.h"

#ifndef CDPLAN_SOURCE_DIR
#define CDPLAN_SOURCE_DIR "."
#endif

static int parse_listen(const char *s, char *host, size_t hostsz, int *port, svc_err *err) {
  const char *colon = strrchr(s, ':');
  char *end = NULL;
  if (!colon || colon == s || (size_t)(colon - s) >= hostsz)
    return svc_err_set(err, SVC_BAD_ARGS, "listen", "--listen wants ADDR:PORT, got '%s'", s);
  long p = strtol(colon + 1, &end, 10);
  if (!*(colon + 1) || *end || p < 0 || p > 65535)
    return svc_err_set(err, SVC_BAD_ARGS, "listen", "--listen port must be 0-65535, got '%s'",
                       colon + 1);
  memcpy(host, s, (size_t)(colon - s));
  host[colon - s] = '\0';
  *port = (int)p;
  return 0;
}

static int read_token(const char *path, char **token, svc_err *err) {
  size_t len = 0;
  int rc = cli_check_path(path, 0, err);
  if (!rc) rc = svc_read_file(path, 4096, token, &len, err);
  if (rc) return rc;
  while (len > 0 && isspace((unsigned char)(*token)[len - 1])) (*token)[--len] = '\0';
  if (len < 8) {
    free(*token);
    *token = NULL;
    return svc_err_set(err, SVC_BAD_ARGS, "token-file",
                       "the token in %s must be at least 8 characters", path);
  }
  return 0;
}

static int is_dir(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The store for the log: a URL's password (scheme://user:PASSWORD@host)
 * becomes ***; a file path is shown as it is. */
static void shown_db(const char *db, char *out, size_t size) {
  const char *scheme = strstr(db, "://"), *at = scheme ? strchr(scheme + 3, '@') : NULL;
  const char *colon = at ? memchr(scheme + 3, ':', (size_t)(at - scheme - 3)) : NULL;
  if (colon)
    snprintf(out, size, "%.*s:***%s", (int)(colon - db), db, at);
  else
    snprintf(out, size, "%s", db);
}

/* One numeric option's value: the whole of v a number in [min, max]
 * (whole when integer). "--rate abc" was read as 0 (rate limiting off),
 * "--timeout 0" as the default, "--threads 100000" as given. */
static int num_arg(const char *a, const char *v, double min, double max, int integer, double *out,
                   svc_err *err) {
  char *end = NULL;
  errno = 0;
  double x = strtod(v, &end);
  if (end == v || *end || errno || !isfinite(x) || x < min || x > max || (integer && x != floor(x)))
    return svc_err_set(err, SVC_BAD_ARGS, a, "%s must be %s from %g to %g, not '%s'", a,
                       integer ? "a whole number" : "a number", min, max, v);
  *out = x;
  return 0;
}

/* serve's numeric options into threads and limits; 0 for other options. */
static int numeric_opt(const char *a, const char *v, unsigned *threads, srv_config *l,
                       svc_err *err) {
  double x = 0;
  int rc = 0;
  if (!strcmp(a, "--threads")) { /* 0: one per core */
    if (!(rc = num_arg(a, v, 0, 1024, 1, &x, err))) *threads = (unsigned)x;
  } else if (!strcmp(a, "--rate")) { /* 0: off */
    if (!(rc = num_arg(a, v, 0, 1e6, 0, &x, err))) l->rate = x;
  } else if (!strcmp(a, "--burst")) {
    if (!(rc = num_arg(a, v, 1, 1e7, 0, &x, err))) l->burst = x;
  } else if (!strcmp(a, "--max-conns")) {
    if (!(rc = num_arg(a, v, 1, 1e6, 1, &x, err))) l->max_conns = (unsigned)x;
  } else if (!strcmp(a, "--timeout")) {
    if (!(rc = num_arg(a, v, 1, 86400, 1, &x, err))) l->timeout_s = (unsigned)x;
  } else if (!strcmp(a, "--max-conns-per-ip")) {
    if (!(rc = num_arg(a, v, 1, 1e6, 1, &x, err))) l->max_conns_per_ip = (unsigned)x;
  } else if (!strcmp(a, "--header-timeout")) {
    if (!(rc = num_arg(a, v, 1, 3600, 1, &x, err))) l->header_timeout_s = (unsigned)x;
  } else if (!strcmp(a, "--body-timeout")) {
    if (!(rc = num_arg(a, v, 1, 86400, 1, &x, err))) l->body_timeout_s = (unsigned)x;
  } else if (!strcmp(a, "--max-buffered-mib")) {
    if (!(rc = num_arg(a, v, 1, 65536, 1, &x, err))) l->max_buffered = (size_t)x << 20;
  }
  return rc;
}

/* How long SIGTERM lets requests in flight finish. */
#define SRV_DRAIN_GRACE_S 5

int cli_serve(cli_opts *o) {
  const char *listen = "127.0.0.1:8080", *token_file = NULL, *web = NULL;
  char host[256], *token = NULL, openapi[4096], webdef[4096];
  int port = 0, rc = 0;
  unsigned threads = 0;
  srv_config limits = {0}; /* --rate, --burst, --max-conns, --timeout and the rest */
  api_ctx *ctx = NULL;
  srv *s = NULL;
  svc_err err;
  sigset_t set;
  svc_err_clear(&err);
  for (int i = 0; i < o->argc; i++) {
    const char *a = o->argv[i];
    const char *v = i + 1 < o->argc ? o->argv[i + 1] : NULL;
    if (!strcmp(a, "--listen") || !strcmp(a, "--db") || !strcmp(a, "--token-file") ||
        !strcmp(a, "--web") || !strcmp(a, "--threads") || !strcmp(a, "--rate") ||
        !strcmp(a, "--burst") || !strcmp(a, "--max-conns") || !strcmp(a, "--timeout") ||
        !strcmp(a, "--max-conns-per-ip") || !strcmp(a, "--header-timeout") ||
        !strcmp(a, "--body-timeout") || !strcmp(a, "--max-buffered-mib")) {
      if (!v) {
        rc = svc_err_set(&err, SVC_BAD_ARGS, "", "%s needs a value", a);
        goto cleanup;
      }
      i++;
      if (!strcmp(a, "--listen")) listen = v;
      if (!strcmp(a, "--db")) o->db = v;
      if (!strcmp(a, "--token-file")) token_file = v;
      if (!strcmp(a, "--web")) web = v;
      if ((rc = numeric_opt(a, v, &threads, &limits, &err))) goto cleanup;
    } else if (!strcmp(a, "--verbose") || !strcmp(a, "-v")) {
      svc_log_threshold = SVC_LOG_DEBUG;
    } else {
      rc = svc_err_set(&err, SVC_BAD_ARGS, "", "serve: unknown argument '%s'", a);
      goto cleanup;
    }
  }
  if ((rc = parse_listen(listen, host, sizeof host, &port, &err))) goto cleanup;
  if (token_file && (rc = read_token(token_file, &token, &err))) goto cleanup;
  /* Files beside the working directory first (an installed layout such as
   * the container's), then the source tree this binary was built from. */
  if (access("docs/openapi.yaml", R_OK) == 0)
    snprintf(openapi, sizeof openapi, "docs/openapi.yaml");
  else
    snprintf(openapi, sizeof openapi, "%s/docs/openapi.yaml", CDPLAN_SOURCE_DIR);
  /* A --web that is not a folder would serve 404s for the dashboard with
   * nothing said: the same command-line mistake as a missing input file. */
  if (web && !is_dir(web)) {
    rc = svc_err_set(&err, SVC_BAD_ARGS, "web", "--web %s: not a readable folder", web);
    goto cleanup;
  }
  if (!web) {
    snprintf(webdef, sizeof webdef, "%s/web", CDPLAN_SOURCE_DIR);
    web = is_dir("web") ? "web" : is_dir(webdef) ? webdef : NULL;
  }
  if ((rc = cli_check_db(o, &err)) || (rc = api_ctx_new(&ctx, o->db, &err))) goto cleanup;
  /* Block the stop signals before the server's threads start so that only
   * sigwait below receives them. */
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, NULL);
  signal(SIGPIPE, SIG_IGN);
  srv_config cfg = {.host = host,
                    .port = port,
                    .token = token,
                    .web_root = web,
                    .openapi_path = openapi,
                    .threads = threads,
                    .rate = limits.rate,
                    .burst = limits.burst,
                    .max_conns = limits.max_conns,
                    .timeout_s = limits.timeout_s,
                    .max_conns_per_ip = limits.max_conns_per_ip,
                    .header_timeout_s = limits.header_timeout_s,
                    .body_timeout_s = limits.body_timeout_s,
                    .max_buffered = limits.max_buffered};
  if ((rc = srv_start(&s, ctx, &cfg, &err))) goto cleanup;
  printf("{\"listening\":\"http://%s:%d\"}\n", host, srv_port(s));
  fflush(stdout);
  int64_t ntokens = 0;
  api_tokens_active(ctx, &ntokens, NULL);
  char dbshown[512];
  shown_db(o->db, dbshown, sizeof dbshown);
  svc_log(SVC_LOG_INFO, "serving on http://%s:%d (db %s; %s)", host, srv_port(s), dbshown,
          ntokens ? "every /v1 route needs a token"
          : token ? "writes need the token file's token; reads are open"
                  : "open to anyone who can connect: no tokens (see cdplan token create)");
  /* Wait for a stop signal; between signals, follow validation jobs (the
   * first tick also reconciles jobs a previous run left in flight). */
  int sig = -1;
  while (sig < 0) {
    svc_err terr;
    if (api_validation_tick(ctx, NULL, &terr) < 0)
      svc_log(SVC_LOG_WARN, "validation poll: %s", terr.message);
    struct timespec wait = {.tv_sec = 2, .tv_nsec = 0};
    sig = sigtimedwait(&set, NULL, &wait);
  }
  svc_log(SVC_LOG_INFO, "signal %d: stopping", sig);
  /* A solve may run for its whole time limit (minutes): stop within the
   * grace period whatever is in flight. */
  unsigned left = srv_drain(s, SRV_DRAIN_GRACE_S);
  if (left) {
    svc_log(SVC_LOG_WARN,
            "%u request(s) still running after %d s (a plan being solved): exiting without "
            "them; the database is consistent (every write is one transaction)",
            left, SRV_DRAIN_GRACE_S);
    fflush(NULL);
    _exit(0);
  }
cleanup:
  srv_stop(s);
  api_ctx_free(ctx);
  if (token) {
    memset(token, 0, strlen(token));
    free(token);
  }
  return rc ? cli_fail(&err) : 0;
}
