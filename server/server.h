/* server: the HTTP transport (libmicrohttpd). Owns the route table, auth,
 * body and URL limits, metrics, static files of the dashboard, and the
 * mapping from svc_code to HTTP status. It calls api/ for every operation
 * and knows nothing of the operations' contents.
 */
#ifndef CDPLAN_SERVER_H
#define CDPLAN_SERVER_H

#include "api/api.h"
#include "common/common.h"

typedef struct srv srv;

typedef struct {
  const char *host;         /* "127.0.0.1" */
  int port;                 /* 0 = any free port; srv_port() tells which */
  const char *token;        /* --token-file's token (every scope); NULL = none. See auth.c */
  const char *web_root;     /* directory of the dashboard's static files; NULL = none */
  const char *openapi_path; /* docs/openapi.yaml to serve at /openapi.yaml */
  unsigned threads;         /* worker threads; 0 = number of cores */
  /* Limits (0 = the default in brackets). */
  double rate;               /* requests/s per client address and per token [off] */
  double burst;              /* bucket size for rate [max(rate, 1) * 2] */
  unsigned max_conns;        /* open connections in all [1024] */
  unsigned timeout_s;        /* idle connection timeout [30] */
  unsigned heavy_max;        /* heavy (plan, compare) handlers at once [max(1, threads / 2)] */
  unsigned max_conns_per_ip; /* open connections from one client address [64] */
  unsigned header_timeout_s; /* from accept (or the previous reply) to complete headers [10] */
  unsigned body_timeout_s;   /* from the headers to the end of the upload [60] */
  size_t max_buffered;       /* bytes of request bodies held at once, all requests [64 MiB] */
} srv_config;

/* Start serving in background threads. ctx stays owned by the caller and
 * must outlive the server. */
int srv_start(srv **out, api_ctx *ctx, const srv_config *cfg, svc_err *err);
int srv_port(const srv *s);
/* Stop accepting, let requests in flight finish, free. NULL-safe. Blocks
 * until every request has ended (a solve runs to its time limit). */
void srv_stop(srv *s);
/* Stop accepting and wait at most grace_s for requests in flight; returns
 * how many still run (0: srv_stop will not block). A process that must
 * exit now (SIGTERM during a long solve) may then exit without srv_stop:
 * every write is its own transaction, so the database stays consistent. */
unsigned srv_drain(srv *s, double grace_s);

#endif
