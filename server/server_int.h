/* server internals shared by the server/ files (and the route-coverage
 * test): the route table, the server and per-request bodies, the reply
 * helpers and the metrics registry. Not for use outside server/ except
 * srv_routes(), which tests/http/test_openapi.c reads to hold
 * docs/openapi.yaml to the table.
 *
 * Request lifetime: the URI log callback allocates an srv_req (it is the
 * only place that sees the raw URL with its query, needed for the 414
 * limit); the access handler fills it on its first call, accumulates the
 * body on later calls and runs the route's handler on the last; the
 * completion callback frees it. Exactly one reply is queued per request,
 * always through reply.c, which also records metrics and the log line.
 */
#ifndef CDPLAN_SERVER_INT_H
#define CDPLAN_SERVER_INT_H

#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "server/server.h"

#define SRV_MAX_URL 2048   /* bytes of path + query; longer is 414 */
#define SRV_MAX_PARAMS 4   /* {name} segments per pattern */
#define SRV_STOP_GRACE_S 5 /* how long srv_stop waits for requests in flight */

typedef struct srv_req srv_req;
typedef enum MHD_Result (*srv_handler)(srv_req *r);

/* The scope a route needs (server/auth.c has the rule). READ is 0 so that
 * a row that names none fails closed; ADMIN is 1, what the old `writes`
 * flag's 1 meant. */
typedef enum {
  SRV_SCOPE_READ = 0, /* reads and compute: any valid token, when tokens are in use */
  SRV_SCOPE_ADMIN,    /* catalog writes, calibration */
  SRV_SCOPE_PLAN,     /* POST /v1/plans, /v1/compare */
  SRV_SCOPE_DISPATCH, /* POST /v1/validations (GPU jobs) */
  SRV_SCOPE_OPEN      /* never needs a token: health, metrics, docs, dashboard */
} srv_scope;

/* A route whose JSON body may reach API_MAX_RESULT instead of API_MAX_BODY. */
#define SRV_BODY_LARGE 2

/* One row of the route table. path is written exactly as in
 * docs/openapi.yaml ("/v1/hardware/{name}"); a {param} matches one
 * non-empty path segment. */
typedef struct {
  const char *method; /* "GET", "POST", ... (HEAD is served by GET rows) */
  const char *path;
  srv_handler handler;
  srv_scope scope; /* what a token must hold to call it */
  int body;        /* takes a JSON body (1, or SRV_BODY_LARGE): Content-Type must be JSON */
  int heavy;       /* long compute (plan, compare): at most heavy_max run at once, else 503 */
  /* Optional check run once the headers are in, before any body byte is
   * read (the results route's job token): MHD_YES with nothing queued to
   * go on. */
  srv_handler precheck;
  /* The query names it reads, ",a,b," (docs/openapi.yaml's "in: query");
   * NULL: none. A /v1 route that needs a token refuses any other name. */
  const char *query;
} srv_route;

/* The route table (static storage); *n gets its length. */
const srv_route *srv_routes(size_t *n);

typedef struct srv_metrics srv_metrics;
typedef struct srv_ratelimit srv_ratelimit;
typedef struct srv_conn srv_conn; /* conns.c: one open connection's deadline */

/* A connection's phase (conns.c has the rules). */
enum { SRV_PHASE_HEADER, SRV_PHASE_BODY, SRV_PHASE_BUSY };

#define SRV_AUTH_CACHE 16 /* verified database tokens remembered (auth.c) */

/* auth.c's caches: the count of active tokens and recently verified
 * tokens, each trusted for a short time (AUTH_TTL_S). */
typedef struct {
  pthread_mutex_t lock;
  int64_t active;
  double active_at; /* svc_now() of the count; 0 = never */
  size_t next;
  struct {
    unsigned char hash[32];
    unsigned scopes;
    int64_t id;
    double at; /* 0 = empty */
  } cache[SRV_AUTH_CACHE];
} srv_auth;

struct srv {
  struct MHD_Daemon *daemon;
  api_ctx *api;
  char *token; /* --token-file's token (all scopes); NULL = none */
  char *web_root;
  char *openapi_path;
  int port;
  srv_metrics *metrics;
  pthread_mutex_t inflight_lock;
  pthread_cond_t inflight_cond;
  unsigned inflight; /* requests between URI callback and completion */
  int quiesced;      /* srv_drain has closed the listening socket */
  srv_auth auth;
  srv_ratelimit *rl;        /* NULL = no rate limits */
  unsigned heavy_max;       /* heavy handlers allowed to run at once */
  atomic_uint heavy_active; /* heavy handlers running now */
  /* conns.c: open connections and their deadlines, the reaper thread. */
  pthread_mutex_t conns_lock;
  pthread_cond_t reaper_cond;
  srv_conn *conns;
  pthread_t reaper;
  int reaper_running, reaper_stop;
  atomic_uint reaped; /* connections shut down past their deadline (metrics, tests) */
  double header_timeout_s, body_timeout_s;
  /* Bytes held by request bodies, all requests together, and the cap. */
  atomic_size_t buffered;
  size_t max_buffered;
};

struct srv_req {
  srv *s;
  struct MHD_Connection *conn;
  const srv_route *route; /* NULL for static files and unmatched paths */
  size_t label;           /* metrics label index (see srv_metrics_label) */
  const char *method;
  double t0;
  size_t uri_len; /* raw URL including the query */
  int started;    /* the access handler has seen this request */
  int replied;    /* a response has been queued */
  int too_large;  /* body passed API_MAX_BODY: remaining bytes are dropped */
  int has_token;  /* a token was checked: token_id says which (0 = --token-file's) */
  int64_t token_id;
  /* What the caller may do (API_SCOPE_* bits): its token's scopes, or every
   * scope when the server runs with no tokens at all (nothing to guard). */
  unsigned scopes;
  int status;
  char *body;
  size_t body_len, body_cap; /* body_cap bytes are counted in s->buffered */
  /* The unescaped path, split in place: params point into it. */
  char path[SRV_MAX_URL + 1];
  const char *params[SRV_MAX_PARAMS];
  size_t nparams;
};

/* Handlers, one file per resource. */
enum MHD_Result srv_hw_list(srv_req *r);
enum MHD_Result srv_hw_create(srv_req *r);
enum MHD_Result srv_hw_get(srv_req *r);
enum MHD_Result srv_hw_replace(srv_req *r);
enum MHD_Result srv_hw_delete(srv_req *r);
enum MHD_Result srv_estimate(srv_req *r);
enum MHD_Result srv_health(srv_req *r);
enum MHD_Result srv_metrics_get(srv_req *r);
enum MHD_Result srv_static_index(srv_req *r);
enum MHD_Result srv_static_openapi(srv_req *r);
enum MHD_Result srv_static_file(srv_req *r); /* GET of any other path under web_root */
enum MHD_Result srv_step(srv_req *r);
enum MHD_Result srv_kernels_select(srv_req *r);
enum MHD_Result srv_plan_create(srv_req *r);
enum MHD_Result srv_plan_get(srv_req *r);
enum MHD_Result srv_plan_list(srv_req *r);
enum MHD_Result srv_compare(srv_req *r);
enum MHD_Result srv_plan_validate(srv_req *r);
enum MHD_Result srv_validation_bundle(srv_req *r);
enum MHD_Result srv_validation_submit(srv_req *r);
enum MHD_Result srv_validation_list(srv_req *r);
enum MHD_Result srv_validation_get(srv_req *r);
enum MHD_Result srv_validation_cancel(srv_req *r);
enum MHD_Result srv_validation_report(srv_req *r);
enum MHD_Result srv_validation_calibrate(srv_req *r);
enum MHD_Result srv_validation_results(srv_req *r);
enum MHD_Result srv_validation_results_admit(srv_req *r); /* precheck: the job token */

/* A body-in, document-out api operation replied with status (compute.c):
 * the shape of every thin POST handler. */
typedef int (*srv_api_fn)(api_ctx *, const char *, size_t, char **, svc_err *);
enum MHD_Result srv_reply_api(srv_req *r, srv_api_fn fn, unsigned status);

/* Replies (reply.c). Each queues the one response of r, records metrics
 * and logs the request. json/body ownership passes to the reply helper
 * (freed even on failure). */
enum MHD_Result srv_reply_json(srv_req *r, unsigned status, char *json);
/* A text body (taken, freed by the response) of content type ctype. */
enum MHD_Result srv_reply_text(srv_req *r, unsigned status, char *body, const char *ctype);
/* 201 with a Location header. */
enum MHD_Result srv_reply_created(srv_req *r, char *json, const char *location);
/* An api operation's typed reply: its error when rc < 0, else 201 with
 * Location base + rep->id (none when the reply names nothing); takes
 * rep->json. Ids and catalog names need no escaping in a URL. */
enum MHD_Result srv_reply_created_at(srv_req *r, int rc, api_reply *rep, const svc_err *err,
                                     const char *base);
enum MHD_Result srv_reply_no_content(srv_req *r);
/* The error document for err with svc_code_http(err->code). */
enum MHD_Result srv_reply_error(srv_req *r, const svc_err *err);
/* Build the error in place: code, field ("" for none), message (NULL: the
 * registry's). */
enum MHD_Result srv_reply_fail(srv_req *r, svc_code code, const char *field, const char *message);
/* 405 naming the methods the path accepts. */
enum MHD_Result srv_reply_not_allowed(srv_req *r, const char *allow);
/* An error with a Retry-After header (429, 503). */
enum MHD_Result srv_reply_retry(srv_req *r, svc_code code, unsigned seconds, const char *message);
/* A response built by the caller (static files); it is destroyed here. */
enum MHD_Result srv_reply_response(srv_req *r, unsigned status, struct MHD_Response *resp);

/* Connections (conns.c): MHD's connection notification, the phase of
 * conn's deadline, the reaper, and the buffered-bytes account (reserve:
 * 0, or -1 when n more bytes would pass max_buffered). */
void srv_on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                       enum MHD_ConnectionNotificationCode toe);
void srv_conn_phase(srv *s, struct MHD_Connection *conn, int phase);
int srv_conns_start(srv *s, svc_err *err);
void srv_conns_stop(srv *s);
int srv_buffer_reserve(srv *s, size_t n);
void srv_buffer_release(srv *s, size_t n);
/* Request headers nobody may send (server.c): several Content-Length. */
enum MHD_Result srv_check_headers(srv_req *r);

/* Auth and rate limits (auth.c). Each returns MHD_YES with nothing queued
 * when the request may go on, else the reply it queued. */
enum MHD_Result srv_auth_check(srv_req *r);
enum MHD_Result srv_limit_address(srv_req *r); /* before auth: per client address */
enum MHD_Result srv_limit_token(srv_req *r);   /* after auth: per token */
/* Token buckets (ratelimit.c): rate <= 0 gives *out = NULL (no limits).
 * take: 0 when key may go on, else the seconds until it may (>= 1). */
int srv_ratelimit_new(srv_ratelimit **out, double rate, double burst, svc_err *err);
void srv_ratelimit_free(srv_ratelimit *rl);
unsigned srv_ratelimit_take(srv_ratelimit *rl, const void *key, size_t keylen, double now);

/* Metrics (metrics.c). Labels are the distinct route patterns, then
 * "static" and "unmatched", so that raw paths never become label values. */
int srv_metrics_new(srv_metrics **out, svc_err *err);
void srv_metrics_free(srv_metrics *m);
size_t srv_metrics_label(const char *pattern); /* index of a route pattern */
size_t srv_metrics_label_static(void);
size_t srv_metrics_label_unmatched(void);
const char *srv_metrics_label_text(size_t label); /* the route label's value */
void srv_metrics_observe(srv_metrics *m, size_t label, const char *method, int status,
                         double seconds);

#endif
