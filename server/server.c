/* server.c: the daemon and the request pipeline. Owns the route table,
 * daemon setup and teardown (bind address, thread pool, timeouts, MHD's
 * error log), per-request state, the checks every request passes before a
 * handler runs (URL length, route, method, auth, Content-Type, body size)
 * and body accumulation under API_MAX_BODY.
 *
 * The checks run on the access handler's first call, before any body byte
 * is read, so that a refused request costs no buffering: MHD then closes
 * the connection instead of reading the rest of the upload.
 */
#include <arpa/inet.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "api/api_validate.h"
#include "server/server_int.h"

/* Order matters only for readability: matching needs a full path match,
 * and a path that matches with another method is a 405, not a 404. To add
 * an endpoint: one row here, one handler in its resource's file, and the
 * path in docs/openapi.yaml (test_openapi fails until it is there).
 * Columns: method, path, handler, scope (server/auth.c: READ, ADMIN, PLAN,
 * DISPATCH, OPEN), takes a JSON body, heavy (plan/compare/report: at most
 * heavy_max at once, else 503), precheck (run before the body is read). */
static const srv_route routes[] = {
    {"GET", "/healthz", srv_health, SRV_SCOPE_OPEN, 0, 0, NULL, NULL},
    {"GET", "/metrics", srv_metrics_get, SRV_SCOPE_OPEN, 0, 0, NULL, NULL},
    {"GET", "/openapi.yaml", srv_static_openapi, SRV_SCOPE_OPEN, 0, 0, NULL, NULL},
    {"GET", "/", srv_static_index, SRV_SCOPE_OPEN, 0, 0, NULL, NULL},
    {"GET", "/v1/hardware", srv_hw_list, SRV_SCOPE_READ, 0, 0, NULL, ",vendor,"},
    {"POST", "/v1/hardware", srv_hw_create, SRV_SCOPE_ADMIN, 1, 0, NULL, NULL},
    {"GET", "/v1/hardware/{name}", srv_hw_get, SRV_SCOPE_READ, 0, 0, NULL, NULL},
    {"PUT", "/v1/hardware/{name}", srv_hw_replace, SRV_SCOPE_ADMIN, 1, 0, NULL, NULL},
    {"DELETE", "/v1/hardware/{name}", srv_hw_delete, SRV_SCOPE_ADMIN, 0, 0, NULL, NULL},
    /* Compute endpoints only read the catalog. */
    {"POST", "/v1/estimate", srv_estimate, SRV_SCOPE_READ, 1, 0, NULL, NULL},
    {"POST", "/v1/step", srv_step, SRV_SCOPE_READ, 1, 0, NULL, NULL},
    {"POST", "/v1/kernels/select", srv_kernels_select, SRV_SCOPE_READ, 1, 0, NULL, NULL},
    /* Planning solves an ILP: heavy, and it needs the plan scope. */
    {"POST", "/v1/plans", srv_plan_create, SRV_SCOPE_PLAN, 1, 1, NULL, NULL},
    {"GET", "/v1/plans", srv_plan_list, SRV_SCOPE_READ, 0, 0, NULL, ",limit,after,"},
    {"GET", "/v1/plans/{id}", srv_plan_get, SRV_SCOPE_READ, 0, 0, NULL, ",format,module,"},
    {"POST", "/v1/compare", srv_compare, SRV_SCOPE_PLAN, 1, 1, NULL, NULL},
    /* Running a plan's two recipes dispatches runner jobs. */
    {"POST", "/v1/plans/{id}/validations", srv_plan_validate, SRV_SCOPE_DISPATCH, 1, 0, NULL, NULL},
    /* Validation runs dispatch work to GPUs. The runner posts its results
     * with the job's own token (X-Job-Token), checked by the api. */
    {"POST", "/v1/validations", srv_validation_submit, SRV_SCOPE_DISPATCH, 1, 0, NULL, NULL},
    {"GET", "/v1/validations", srv_validation_list, SRV_SCOPE_READ, 0, 0, NULL, NULL},
    {"GET", "/v1/validations/{id}", srv_validation_get, SRV_SCOPE_READ, 0, 0, NULL, NULL},
    {"POST", "/v1/validations/{id}/cancel", srv_validation_cancel, SRV_SCOPE_DISPATCH, 0, 0, NULL,
     NULL},
    /* A bundle job's files as one tarball, for the host that will run it. */
    {"GET", "/v1/validations/{id}/bundle", srv_validation_bundle, SRV_SCOPE_DISPATCH, 0, 0, NULL,
     NULL},
    /* The report joins a job's cases to its rows: bounded work, but heavy.
     * ?calibrate is refused by its handler, naming the route that does it. */
    {"GET", "/v1/validations/{id}/report", srv_validation_report, SRV_SCOPE_READ, 0, 1, NULL,
     ",calibrate,"},
    /* Calibrating from a job stores a new calibration for everyone: admin,
     * and a POST (a GET that writes is open to cross-site requests). */
    {"POST", "/v1/validations/{id}/calibrate", srv_validation_calibrate, SRV_SCOPE_ADMIN, 0, 1,
     NULL, NULL},
    {"POST", "/v1/validations/{id}/results", srv_validation_results, SRV_SCOPE_OPEN, SRV_BODY_LARGE,
     0, srv_validation_results_admit, NULL},
};

/* Served for GET/HEAD paths no row matches, when a web root is set. */
static const srv_route static_route = {"GET", "/{file}", srv_static_file, SRV_SCOPE_OPEN, 0, 0,
                                       NULL,  NULL};

/* The body limit of r's route: a runner's results (a whole sweep) may be
 * larger than a request. */
static size_t body_max(const srv_req *r) {
  return r->route && r->route->body == SRV_BODY_LARGE ? API_MAX_RESULT : API_MAX_BODY;
}

const srv_route *srv_routes(size_t *n) {
  *n = sizeof routes / sizeof routes[0];
  return routes;
}

/* Does path match pattern? With r, also capture the {param} segments:
 * they are cut out of r->path in place (so call it with r only once, for
 * the route chosen). */
static int match(const char *pattern, srv_req *r, const char *path) {
  const char *p = pattern, *u = path;
  size_t np = 0;
  size_t offs[SRV_MAX_PARAMS], lens[SRV_MAX_PARAMS];
  while (*p && *u) {
    if (*p == '{') {
      const char *pe = strchr(p, '}');
      size_t n = strcspn(u, "/");
      if (!pe || n == 0 || np == SRV_MAX_PARAMS) return 0;
      offs[np] = (size_t)(u - path);
      lens[np++] = n;
      p = pe + 1;
      u += n;
    } else if (*p++ != *u++) {
      return 0;
    }
  }
  if (*p || *u) return 0;
  if (r) {
    for (size_t i = 0; i < np; i++) {
      r->path[offs[i] + lens[i]] = '\0';
      r->params[i] = r->path + offs[i];
    }
    r->nparams = np;
  }
  return 1;
}

static int same_method(const char *route_method, const char *method) {
  if (strcmp(route_method, method) == 0) return 1;
  /* HEAD is GET without the body; MHD drops the body for us. */
  return strcmp(method, MHD_HTTP_METHOD_HEAD) == 0 && strcmp(route_method, "GET") == 0;
}

/* Find r's route; allow gets the methods of rows whose path matches and
 * *path_row the first such row (for the metrics label of a 405). */
static const srv_route *find_route(srv_req *r, char *allow, size_t allow_size,
                                   const srv_route **path_row) {
  const srv_route *found = NULL;
  size_t used = 0;
  allow[0] = '\0';
  *path_row = NULL;
  for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++) {
    if (!match(routes[i].path, NULL, r->path)) continue;
    if (!*path_row) *path_row = &routes[i];
    if (!found && same_method(routes[i].method, r->method)) found = &routes[i];
    int w = snprintf(allow + used, allow_size - used, "%s%s%s", used ? ", " : "", routes[i].method,
                     strcmp(routes[i].method, "GET") == 0 ? ", HEAD" : "");
    if (w > 0 && (size_t)w < allow_size - used) used += (size_t)w;
  }
  if (found) match(found->path, r, r->path);
  return found;
}

/* application/json, with parameters (charset) allowed. */
static int is_json_type(const char *ct) {
  static const char want[] = "application/json";
  if (!ct) return 0;
  while (*ct == ' ' || *ct == '\t') ct++;
  if (strncasecmp(ct, want, sizeof want - 1) != 0) return 0;
  char c = ct[sizeof want - 1];
  return c == '\0' || c == ';' || c == ' ' || c == '\t';
}

/* Counts the Content-Length headers of a request (MHD keeps each). */
static enum MHD_Result count_length(void *cls, enum MHD_ValueKind kind, const char *key,
                                    const char *value) {
  (void)kind;
  (void)value;
  if (key && !strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH)) (*(int *)cls)++;
  return MHD_YES;
}

/* Two Content-Length headers (differing or not) make the body's end
 * ambiguous between us and any proxy in front (request smuggling, RFC 9112
 * 6.3): refused. */
enum MHD_Result srv_check_headers(srv_req *r) {
  int n = 0;
  MHD_get_connection_values(r->conn, MHD_HEADER_KIND, count_length, &n);
  if (n > 1)
    return srv_reply_fail(r, SVC_BAD_FIELD, "Content-Length",
                          "a request may carry one Content-Length header");
  return MHD_YES;
}

/* Reserve n more body bytes for r in the server's account; else the 503. */
static enum MHD_Result reserve(srv_req *r, size_t n) {
  if (srv_buffer_reserve(r->s, n) == 0) return MHD_YES;
  return srv_reply_retry(r, SVC_UNAVAILABLE, 1,
                         "too many request bodies are being received; retry shortly");
}

typedef struct {
  const char *allowed; /* ",a,b," or "" */
  char bad[64];
} query_check;

static enum MHD_Result query_name_ok(void *cls, enum MHD_ValueKind kind, const char *key,
                                     const char *value) {
  query_check *q = cls;
  char probe[72];
  (void)kind;
  (void)value;
  int n = snprintf(probe, sizeof probe, ",%s,", key ? key : "");
  if (key && !strchr(key, ',') && n > 0 && (size_t)n < sizeof probe && strstr(q->allowed, probe))
    return MHD_YES;
  svc_strlcpy(q->bad, key && *key ? key : "(empty name)", sizeof q->bad);
  return MHD_NO; /* stop at the first unknown name */
}

/* A query name the route does not read (its row's query) is refused,
 * naming it, instead of ignored (a typo such as ?vendr=amd answered with
 * the whole catalog). The routes that need no token (health, metrics, the
 * dashboard's files) take any query: probes and cache-busters add their
 * own. */
static enum MHD_Result check_query(srv_req *r) {
  query_check q = {.allowed = r->route->query ? r->route->query : ""};
  if (r->route->scope == SRV_SCOPE_OPEN || strncmp(r->route->path, "/v1/", 4)) return MHD_YES;
  MHD_get_connection_values(r->conn, MHD_GET_ARGUMENT_KIND, query_name_ok, &q);
  if (!q.bad[0]) return MHD_YES;
  char msg[160];
  size_t len = strlen(q.allowed);
  if (len > 2)
    snprintf(msg, sizeof msg, "unknown query parameter '%s'; %s %s reads only: %.*s", q.bad,
             r->method, r->route->path, (int)(len - 2), q.allowed + 1);
  else
    snprintf(msg, sizeof msg, "unknown query parameter '%s'; %s %s reads none", q.bad, r->method,
             r->route->path);
  return srv_reply_fail(r, SVC_BAD_FIELD, q.bad, msg);
}

/* The checks before any body byte is read. Returns MHD_YES with nothing
 * queued when the request may go on. */
static enum MHD_Result admit(srv_req *r, const char *url) {
  char allow[128];
  const srv_route *path_row;
  enum MHD_Result ok;
  /* Per address before anything else: static files, 404, 405 and 414
   * cost a request too, and guessing tokens is slowed as well. */
  r->label = srv_metrics_label_unmatched();
  ok = srv_limit_address(r);
  if (r->replied || ok != MHD_YES) return ok;
  ok = srv_check_headers(r);
  if (r->replied || ok != MHD_YES) return ok;
  if (r->uri_len > SRV_MAX_URL) {
    r->label = srv_metrics_label_unmatched();
    return srv_reply_fail(r, SVC_URI_TOO_LONG, "", NULL);
  }
  svc_strlcpy(r->path, url, sizeof r->path);
  r->route = find_route(r, allow, sizeof allow, &path_row);
  if (!r->route) {
    int is_get = strcmp(r->method, "GET") == 0 || strcmp(r->method, "HEAD") == 0;
    if (path_row) {
      r->label = srv_metrics_label(path_row->path);
      return srv_reply_not_allowed(r, allow);
    }
    if (is_get && r->s->web_root) {
      r->route = &static_route;
      r->label = srv_metrics_label_static();
      return MHD_YES;
    }
    r->label = srv_metrics_label_unmatched();
    return srv_reply_fail(r, SVC_NOT_FOUND, "", "no such path");
  }
  r->label = srv_metrics_label(r->route->path);
  ok = srv_auth_check(r);
  if (r->replied || ok != MHD_YES) return ok;
  ok = srv_limit_token(r);
  if (r->replied || ok != MHD_YES) return ok;
  ok = check_query(r);
  if (r->replied || ok != MHD_YES) return ok;
  if (r->route->body) {
    const char *ct =
        MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
    if (!is_json_type(ct)) return srv_reply_fail(r, SVC_UNSUPPORTED_MEDIA, "Content-Type", NULL);
  }
  if (r->route->precheck) {
    ok = r->route->precheck(r);
    if (r->replied || ok != MHD_YES) return ok;
  }
  const char *cl =
      MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
  if (cl) {
    unsigned long long n = strtoull(cl, NULL, 10);
    if (n > body_max(r)) return srv_reply_fail(r, SVC_TOO_LARGE, "", NULL);
    /* Size the buffer once when the client says how much is coming. */
    if (n > 0) {
      ok = reserve(r, (size_t)n + 1);
      if (r->replied || ok != MHD_YES) return ok;
      r->body = malloc((size_t)n + 1);
      if (!r->body) {
        srv_buffer_release(r->s, (size_t)n + 1);
        return srv_reply_fail(r, SVC_NOMEM, "", NULL);
      }
      r->body_cap = (size_t)n + 1;
    }
  }
  return MHD_YES;
}

static void drop_body(srv_req *r) {
  free(r->body);
  srv_buffer_release(r->s, r->body_cap);
  r->body = NULL;
  r->body_len = r->body_cap = 0;
}

/* Append an upload chunk; past the route's limit the request is marked and the
 * rest is dropped unbuffered (chunked uploads have no Content-Length to
 * refuse early). -1: out of memory, -2: the server's buffer account is
 * full. */
static int take_body(srv_req *r, const char *data, size_t n) {
  size_t max = body_max(r);
  if (r->too_large) return 0;
  if (n > max - r->body_len) {
    r->too_large = 1;
    drop_body(r);
    return 0;
  }
  if (r->body_len + n + 1 > r->body_cap) {
    size_t cap = r->body_cap ? r->body_cap : 4096;
    while (cap < r->body_len + n + 1) cap *= 2;
    if (cap > max + 1) cap = max + 1;
    if (srv_buffer_reserve(r->s, cap - r->body_cap) < 0) return -2;
    char *nb = realloc(r->body, cap);
    if (!nb) {
      srv_buffer_release(r->s, cap - r->body_cap);
      return -1;
    }
    r->body = nb;
    r->body_cap = cap;
  }
  memcpy(r->body + r->body_len, data, n);
  r->body_len += n;
  r->body[r->body_len] = '\0';
  return 0;
}

/* A heavy handler (a solve) runs only while fewer than heavy_max others
 * do, so that the rest of the pool stays free for cheap requests; past
 * that the client is told to come back. Handlers run to completion on
 * this thread, so the slot is held exactly while one computes. */
static enum MHD_Result run_heavy(srv_req *r) {
  srv *s = r->s;
  if (atomic_fetch_add(&s->heavy_active, 1) >= s->heavy_max) {
    atomic_fetch_sub(&s->heavy_active, 1);
    return srv_reply_retry(r, SVC_UNAVAILABLE, 1, "the planner is busy; retry shortly");
  }
  enum MHD_Result ret = r->route->handler(r);
  atomic_fetch_sub(&s->heavy_active, 1);
  return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **req_cls) {
  srv_req *r = *req_cls;
  if (!r) return MHD_NO; /* the URI callback could not allocate: drop */
  if (!r->started) {
    r->started = 1;
    r->conn = conn;
    r->method = method;
    srv_conn_phase(r->s, conn, SRV_PHASE_BODY);
    return admit(r, url);
  }
  if (*upload_data_size != 0) {
    /* After an early reply MHD may still hand us bytes: swallow them. */
    int tb = r->replied ? 0 : take_body(r, upload_data, *upload_data_size);
    *upload_data_size = 0;
    if (tb == -1) return srv_reply_fail(r, SVC_NOMEM, "", NULL);
    if (tb == -2) {
      drop_body(r);
      return srv_reply_retry(r, SVC_UNAVAILABLE, 1,
                             "too many request bodies are being received; retry shortly");
    }
    return MHD_YES;
  }
  srv_conn_phase(r->s, conn, SRV_PHASE_BUSY);
  if (r->replied) return MHD_YES;
  if (r->too_large) return srv_reply_fail(r, SVC_TOO_LARGE, "", NULL);
  if (!r->route->heavy) return r->route->handler(r);
  return run_heavy(r);
}

/* Called by MHD with the raw request target (path + query) before the
 * access handler: the one place the full URL length is known. What it
 * returns becomes the request's state. */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *conn) {
  srv *s = cls;
  srv_req *r = calloc(1, sizeof *r);
  if (!r) return NULL;
  r->s = s;
  r->t0 = svc_now();
  r->uri_len = uri ? strlen(uri) : 0;
  pthread_mutex_lock(&s->inflight_lock);
  s->inflight++;
  pthread_mutex_unlock(&s->inflight_lock);
  return r;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **req_cls,
                         enum MHD_RequestTerminationCode toe) {
  srv *s = cls;
  srv_req *r = *req_cls;
  if (!r) return;
  drop_body(r);
  free(r);
  *req_cls = NULL;
  /* A kept-alive connection waits for its next request's headers. */
  srv_conn_phase(s, conn, SRV_PHASE_HEADER);
  pthread_mutex_lock(&s->inflight_lock);
  if (--s->inflight == 0) pthread_cond_broadcast(&s->inflight_cond);
  pthread_mutex_unlock(&s->inflight_lock);
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap) {
  char line[512];
  vsnprintf(line, sizeof line, fmt, ap);
  size_t n = strlen(line);
  while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = '\0';
  /* A client's doing (a refused connection, a peer that went away, a
   * header too big) is one line per connection: at warn, a hostile client
   * could fill the log. Those are debug; MHD's own trouble stays a warning. */
  static const char *const client[] = {"connection limit", "closed when reading",
                                       "Closing connection", "timed out", "Connection reset"};
  for (size_t i = 0; i < sizeof client / sizeof client[0]; i++) {
    if (strstr(line, client[i])) {
      svc_log(SVC_LOG_DEBUG, "http: %s", line);
      return;
    }
  }
  svc_log(SVC_LOG_WARN, "http: %s", line);
}

/* Resolve host (a literal or a name such as "localhost") to the first
 * address it has; MHD binds exactly that. */
static int resolve(const char *host, int port, struct sockaddr_storage *ss, svc_err *err) {
  struct addrinfo hints = {0}, *res = NULL;
  char portstr[16];
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  snprintf(portstr, sizeof portstr, "%d", port);
  int gai = getaddrinfo(host, portstr, &hints, &res);
  if (gai != 0 || !res)
    return svc_err_set(err, SVC_BAD_ARGS, "listen", "cannot resolve %s: %s", host,
                       gai_strerror(gai));
  memcpy(ss, res->ai_addr, res->ai_addrlen);
  freeaddrinfo(res);
  return 0;
}

static char *dup_or_null(const char *s) { return s && *s ? strdup(s) : NULL; }

int srv_start(srv **out, api_ctx *ctx, const srv_config *cfg, svc_err *err) {
  srv *s = NULL;
  struct sockaddr_storage ss;
  int rc = 0;
  *out = NULL;
  if (cfg->port < 0 || cfg->port > 65535)
    return svc_err_set(err, SVC_BAD_ARGS, "listen", "port %d out of range", cfg->port);
  rc = resolve(cfg->host ? cfg->host : "127.0.0.1", cfg->port, &ss, err);
  if (rc < 0) return rc;

  s = calloc(1, sizeof *s);
  if (!s) return svc_err_set(err, SVC_NOMEM, "", NULL);
  pthread_mutex_init(&s->inflight_lock, NULL);
  pthread_cond_init(&s->inflight_cond, NULL);
  pthread_mutex_init(&s->auth.lock, NULL);
  pthread_mutex_init(&s->conns_lock, NULL);
  pthread_cond_init(&s->reaper_cond, NULL);
  s->api = ctx;
  s->header_timeout_s = cfg->header_timeout_s ? cfg->header_timeout_s : 10;
  s->body_timeout_s = cfg->body_timeout_s ? cfg->body_timeout_s : 60;
  s->max_buffered = cfg->max_buffered ? cfg->max_buffered : (size_t)64 << 20;
  /* An empty token means none: a server must not accept "Bearer ". */
  s->token = dup_or_null(cfg->token);
  s->web_root = dup_or_null(cfg->web_root);
  s->openapi_path = dup_or_null(cfg->openapi_path);
  if ((cfg->token && *cfg->token && !s->token) ||
      (cfg->web_root && *cfg->web_root && !s->web_root) ||
      (cfg->openapi_path && *cfg->openapi_path && !s->openapi_path)) {
    rc = svc_err_set(err, SVC_NOMEM, "", NULL);
    goto cleanup;
  }
  rc = srv_metrics_new(&s->metrics, err);
  if (rc < 0) goto cleanup;
  double burst = cfg->burst > 0 ? cfg->burst : (cfg->rate > 1 ? cfg->rate : 1) * 2;
  if ((rc = srv_ratelimit_new(&s->rl, cfg->rate, burst, err)) < 0) goto cleanup;

  unsigned threads = cfg->threads;
  if (threads == 0) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    threads = n > 0 ? (unsigned)n : 1;
  }
  /* Heavy handlers may take half the cores: the rest stays for cheap calls. */
  s->heavy_max = cfg->heavy_max ? cfg->heavy_max : threads / 2 ? threads / 2 : 1;
  unsigned max_conns = cfg->max_conns ? cfg->max_conns : 1024;
  unsigned timeout_s = cfg->timeout_s ? cfg->timeout_s : 30;
  unsigned per_ip = cfg->max_conns_per_ip ? cfg->max_conns_per_ip : 64;
  /* A thread per connection, not a pool: handlers run to completion on
   * their connection's thread, and with a pool a solve of minutes stalled
   * every kept-alive client that MHD had put on the same pool thread (a
   * /healthz waited out the solve). Connections are bounded by max_conns
   * and per_ip, so threads are too; idle ones sleep in poll. */
  struct MHD_OptionItem pool[] = {{MHD_OPTION_END, 0, NULL}};
  /* ITC lets srv_stop quiesce the daemon safely. */
  unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
                   MHD_USE_ERROR_LOG | MHD_USE_ITC | MHD_USE_AUTO;
  if (ss.ss_family == AF_INET6) flags |= MHD_USE_IPv6;
  s->daemon = MHD_start_daemon(
      flags, (uint16_t)cfg->port, NULL, NULL, on_request, s,
      /* First, so that MHD logs even its option parsing through us. */
      MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, s, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
      MHD_OPTION_ARRAY, pool,
      /* An idle or trickling client holds a connection at
       * most timeout_s; past max_conns new ones are
       * refused at accept. */
      MHD_OPTION_CONNECTION_TIMEOUT, timeout_s, MHD_OPTION_CONNECTION_LIMIT, max_conns,
      /* One address may not take every slot (slowloris):
       * past per_ip its new connections are closed at
       * accept; conns.c adds header and body deadlines. */
      MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_ip, MHD_OPTION_NOTIFY_CONNECTION, srv_on_connection,
      s, MHD_OPTION_URI_LOG_CALLBACK, on_uri, s, MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
      MHD_OPTION_END);
  if (!s->daemon) {
    rc = svc_err_set(err, SVC_IO, "listen", "cannot listen on %s:%d",
                     cfg->host ? cfg->host : "127.0.0.1", cfg->port);
    goto cleanup;
  }
  if ((rc = srv_conns_start(s, err)) < 0) goto cleanup;
  const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
  s->port = info ? info->port : cfg->port;
  svc_log(SVC_LOG_DEBUG, "http: port %d, %u threads, %u heavy, %u connections, %u s timeout%s",
          s->port, threads, s->heavy_max, max_conns, timeout_s, s->rl ? ", rate limited" : "");
  *out = s;
  s = NULL;

cleanup:
  srv_stop(s);
  return rc;
}

int srv_port(const srv *s) { return s ? s->port : 0; }

unsigned srv_drain(srv *s, double grace_s) {
  if (!s || !s->daemon) return 0;
  /* Stop accepting first, then give requests in flight a bounded time
   * to finish: MHD_stop_daemon would cut them off. */
  if (!s->quiesced) {
    MHD_socket fd = MHD_quiesce_daemon(s->daemon);
    if (fd != MHD_INVALID_SOCKET) close(fd);
    s->quiesced = 1;
  }
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  double whole = floor(grace_s);
  until.tv_sec += (time_t)whole;
  until.tv_nsec += (long)((grace_s - whole) * 1e9);
  if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
  pthread_mutex_lock(&s->inflight_lock);
  while (s->inflight > 0) {
    if (pthread_cond_timedwait(&s->inflight_cond, &s->inflight_lock, &until) != 0) break;
  }
  unsigned left = s->inflight;
  pthread_mutex_unlock(&s->inflight_lock);
  return left;
}

void srv_stop(srv *s) {
  if (!s) return;
  if (s->daemon) {
    srv_drain(s, SRV_STOP_GRACE_S);
    MHD_stop_daemon(s->daemon);
  }
  srv_conns_stop(s);
  srv_metrics_free(s->metrics);
  srv_ratelimit_free(s->rl);
  pthread_mutex_destroy(&s->auth.lock);
  pthread_mutex_destroy(&s->inflight_lock);
  pthread_mutex_destroy(&s->conns_lock);
  pthread_cond_destroy(&s->reaper_cond);
  pthread_cond_destroy(&s->inflight_cond);
  free(s->token);
  free(s->web_root);
  free(s->openapi_path);
  free(s);
}
