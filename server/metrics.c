/* metrics.c: request counters and latency histograms, and GET /metrics in
 * the Prometheus text format (0.0.4): also plans and compares by outcome,
 * 429s, validation jobs by state (read from the store at scrape time), the
 * build, and the process collector's standard names (RSS, CPU seconds,
 * open and max fds, start time; from /proc, as the Go and Python clients
 * export them: https://prometheus.io/docs/instrumenting/writing_clientlibs/
 * "Process metrics").
 *
 * Label values come only from fixed sets: the route patterns of the table
 * (plus "static" and "unmatched"), a few method names and the status code,
 * so a client cannot grow the registry by inventing paths or methods.
 * One mutex guards everything; an update is a few increments, far cheaper
 * than the request it records.
 */
#include <dirent.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "api/api_validate.h"
#include "server/server_int.h"

/* Solve outcomes of POST /v1/plans and POST /v1/compare, by status. */
static const char *const outcomes[] = {"ok", "infeasible", "invalid", "rejected", "error"};
#define NOUTCOMES (sizeof outcomes / sizeof outcomes[0])

static size_t outcome_of(int status) {
  if (status >= 200 && status < 300) return 0;
  if (status == 422) return 1;
  if (status == 429 || status == 503) return 3; /* over a limit: not tried */
  return status >= 400 && status < 500 ? 2 : 4;
}

/* Up to 600 s: a plan may run for its time limit (at most 300 s) and wait
 * for a planning slot before it. */
static const double buckets[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                 1,      2.5,   5,      10,    30,   60,    120,  300, 600};
#define NBUCKETS (sizeof buckets / sizeof buckets[0])

static const char *const methods[] = {"GET",    "HEAD",    "POST",  "PUT",
                                      "DELETE", "OPTIONS", "PATCH", "OTHER"};
#define NMETHODS (sizeof methods / sizeof methods[0])

typedef struct {
  size_t label, method;
  int status;
  unsigned long long count;
} counter;

typedef struct {
  unsigned long long le[NBUCKETS]; /* per bucket, not cumulative: summed on output */
  unsigned long long count;
  double sum;
} histogram;

struct srv_metrics {
  pthread_mutex_t lock;
  size_t nlabels;
  histogram *hist; /* one per label */
  counter *counters;
  size_t ncounters, cap;
  size_t plan_label, compare_label;
  unsigned long long solves[2][NOUTCOMES]; /* [plan, compare][outcome] */
  unsigned long long rate_limited;
};

static size_t nroutes(void) {
  size_t n;
  srv_routes(&n);
  return n;
}

/* A pattern's label is the index of its first row in the table, so rows
 * sharing a path (GET/PUT/DELETE /v1/hardware/{name}) share a histogram. */
size_t srv_metrics_label(const char *pattern) {
  size_t n;
  const srv_route *rt = srv_routes(&n);
  for (size_t i = 0; i < n; i++)
    if (strcmp(rt[i].path, pattern) == 0) return i;
  return n + 1;
}

size_t srv_metrics_label_static(void) { return nroutes(); }

size_t srv_metrics_label_unmatched(void) { return nroutes() + 1; }

const char *srv_metrics_label_text(size_t label) {
  size_t n;
  const srv_route *rt = srv_routes(&n);
  if (label < n) return rt[label].path;
  return label == n ? "static" : "unmatched";
}

int srv_metrics_new(srv_metrics **out, svc_err *err) {
  srv_metrics *m = calloc(1, sizeof *m);
  if (!m) return svc_err_set(err, SVC_NOMEM, "", NULL);
  m->nlabels = nroutes() + 2;
  m->hist = calloc(m->nlabels, sizeof *m->hist);
  if (!m->hist) {
    free(m);
    return svc_err_set(err, SVC_NOMEM, "", NULL);
  }
  m->plan_label = srv_metrics_label("/v1/plans");
  m->compare_label = srv_metrics_label("/v1/compare");
  pthread_mutex_init(&m->lock, NULL);
  *out = m;
  return 0;
}

void srv_metrics_free(srv_metrics *m) {
  if (!m) return;
  pthread_mutex_destroy(&m->lock);
  free(m->hist);
  free(m->counters);
  free(m);
}

static size_t method_index(const char *method) {
  for (size_t i = 0; i + 1 < NMETHODS; i++)
    if (method && strcmp(methods[i], method) == 0) return i;
  return NMETHODS - 1;
}

void srv_metrics_observe(srv_metrics *m, size_t label, const char *method, int status,
                         double seconds) {
  if (!m || label >= m->nlabels) return;
  size_t mi = method_index(method);
  pthread_mutex_lock(&m->lock);
  histogram *h = &m->hist[label];
  size_t b = 0;
  while (b < NBUCKETS && seconds > buckets[b]) b++;
  if (b < NBUCKETS) h->le[b]++;
  h->count++;
  h->sum += seconds;
  if (status == 429) m->rate_limited++;
  if (!strcmp(methods[mi], "POST") && (label == m->plan_label || label == m->compare_label))
    m->solves[label == m->compare_label][outcome_of(status)]++;
  size_t i = 0;
  while (i < m->ncounters && !(m->counters[i].label == label && m->counters[i].method == mi &&
                               m->counters[i].status == status))
    i++;
  if (i == m->ncounters) {
    if (m->ncounters == m->cap) {
      size_t cap = m->cap ? m->cap * 2 : 32;
      counter *nc = realloc(m->counters, cap * sizeof *nc);
      if (!nc) goto unlock; /* a lost sample beats a failed request */
      m->counters = nc;
      m->cap = cap;
    }
    m->counters[i] = (counter){label, mi, status, 0};
    m->ncounters++;
  }
  m->counters[i].count++;
unlock:
  pthread_mutex_unlock(&m->lock);
}

/* A growing text buffer; a failed append leaves ok = 0. */
typedef struct {
  char *p;
  size_t len, cap;
  int ok;
} text;

static void put(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(text *t, const char *fmt, ...) {
  if (!t->ok) return;
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t->p + t->len, t->cap - t->len, fmt, ap);
    va_end(ap);
    if (n < 0) {
      t->ok = 0;
      return;
    }
    if ((size_t)n < t->cap - t->len) {
      t->len += (size_t)n;
      return;
    }
    size_t cap = t->cap * 2 + (size_t)n;
    char *np = realloc(t->p, cap);
    if (!np) {
      t->ok = 0;
      return;
    }
    t->p = np;
    t->cap = cap;
  }
}

/* The process collector's figures from /proc (Linux); absent elsewhere. */
static void render_process(text *t) {
  long page = sysconf(_SC_PAGESIZE), tick = sysconf(_SC_CLK_TCK);
  unsigned long long vsize = 0, utime = 0, stime = 0, start = 0, btime = 0;
  long long rss = 0;
  char buf[1024];
  FILE *f = fopen("/proc/self/stat", "r");
  int ok = 0;
  if (f) {
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    /* fields from 3 on (proc(5)); comm may hold spaces, so from its ')' */
    const char *p = strrchr(buf, ')');
    ok = p && sscanf(p + 2,
                     "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d %*d "
                     "%*d %llu %llu %lld",
                     &utime, &stime, &start, &vsize, &rss) == 5;
  }
  if ((f = fopen("/proc/stat", "r"))) {
    while (fgets(buf, sizeof buf, f))
      if (sscanf(buf, "btime %llu", &btime) == 1) break;
    fclose(f);
  }
  if (ok && tick > 0) {
    put(t,
        "# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.\n"
        "# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total %.2f\n",
        (double)(utime + stime) / (double)tick);
    put(t,
        "# HELP process_resident_memory_bytes Resident memory size in bytes.\n"
        "# TYPE process_resident_memory_bytes gauge\nprocess_resident_memory_bytes %lld\n",
        rss * (long long)page);
    put(t,
        "# HELP process_virtual_memory_bytes Virtual memory size in bytes.\n"
        "# TYPE process_virtual_memory_bytes gauge\nprocess_virtual_memory_bytes %llu\n",
        vsize);
    if (btime)
      put(t,
          "# HELP process_start_time_seconds Start time of the process since unix epoch in "
          "seconds.\n# TYPE process_start_time_seconds gauge\nprocess_start_time_seconds %.2f\n",
          (double)btime + (double)start / (double)tick);
  }
  DIR *d = opendir("/proc/self/fd");
  if (d) {
    long n = -1; /* the directory's own descriptor */
    while (readdir(d)) n++;
    closedir(d);
    put(t,
        "# HELP process_open_fds Number of open file descriptors.\n"
        "# TYPE process_open_fds gauge\nprocess_open_fds %ld\n",
        n - 2); /* . and .. */
  }
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
    put(t,
        "# HELP process_max_fds Maximum number of open file descriptors.\n"
        "# TYPE process_max_fds gauge\nprocess_max_fds %llu\n",
        (unsigned long long)rl.rlim_cur);
}

/* Jobs by state, read from the store; left out when the store fails. */
static void render_validations(srv *s, text *t) {
  int64_t counts[API_VAL_NSTATES];
  svc_err err;
  if (api_validation_state_counts(s->api, counts, &err)) return;
  put(t, "# HELP cdplan_validations Validation jobs in the store, by state.\n"
         "# TYPE cdplan_validations gauge\n");
  for (size_t i = 0; i < API_VAL_NSTATES; i++)
    put(t, "cdplan_validations{state=\"%s\"} %lld\n", api_validation_states[i],
        (long long)counts[i]);
}

/* Whether this replica follows validation jobs (issue 29); only where
 * replicas elect one (a PostgreSQL store): an embedded store's only
 * process always does, and its /metrics stays as it was. */
static void render_leader(srv *s, text *t) {
  int leader = api_validation_leader(s->api);
  if (leader < 0) return;
  put(t,
      "# HELP cdplan_job_leader Whether this replica holds the leader lock and follows "
      "validation jobs.\n# TYPE cdplan_job_leader gauge\ncdplan_job_leader %d\n",
      leader);
}

static void render(srv *s, text *t) {
  srv_metrics *m = s->metrics;
  put(t,
      "# HELP cdplan_build_info The running build (always 1).\n"
      "# TYPE cdplan_build_info gauge\ncdplan_build_info{version=\"%s\"} 1\n",
      api_version());
  render_process(t);
  render_validations(s, t);
  render_leader(s, t);
  put(t, "# HELP cdplan_up Whether the server is serving.\n# TYPE cdplan_up gauge\ncdplan_up 1\n");
  put(t, "# HELP cdplan_http_requests_total HTTP requests answered, by route pattern.\n"
         "# TYPE cdplan_http_requests_total counter\n");
  pthread_mutex_lock(&m->lock);
  for (size_t i = 0; i < m->ncounters; i++) {
    const counter *c = &m->counters[i];
    put(t, "cdplan_http_requests_total{route=\"%s\",method=\"%s\",status=\"%d\"} %llu\n",
        srv_metrics_label_text(c->label), methods[c->method], c->status, c->count);
  }
  put(t, "# HELP cdplan_http_request_duration_seconds Time from request line to reply.\n"
         "# TYPE cdplan_http_request_duration_seconds histogram\n");
  for (size_t l = 0; l < m->nlabels; l++) {
    const histogram *h = &m->hist[l];
    if (h->count == 0) continue;
    const char *route = srv_metrics_label_text(l);
    unsigned long long cum = 0;
    for (size_t b = 0; b < NBUCKETS; b++) {
      cum += h->le[b];
      put(t, "cdplan_http_request_duration_seconds_bucket{route=\"%s\",le=\"%g\"} %llu\n", route,
          buckets[b], cum);
    }
    put(t, "cdplan_http_request_duration_seconds_bucket{route=\"%s\",le=\"+Inf\"} %llu\n", route,
        h->count);
    put(t, "cdplan_http_request_duration_seconds_sum{route=\"%s\"} %.9g\n", route, h->sum);
    put(t, "cdplan_http_request_duration_seconds_count{route=\"%s\"} %llu\n", route, h->count);
  }
  put(t, "# HELP cdplan_plans_total Plan and compare requests answered, by outcome (ok, "
         "infeasible: 422, invalid: another 4xx, rejected: 429/503 over a limit, error: 5xx).\n"
         "# TYPE cdplan_plans_total counter\n");
  for (size_t k = 0; k < 2; k++)
    for (size_t o = 0; o < NOUTCOMES; o++)
      put(t, "cdplan_plans_total{kind=\"%s\",outcome=\"%s\"} %llu\n", k ? "compare" : "plan",
          outcomes[o], m->solves[k][o]);
  put(t,
      "# HELP cdplan_http_rate_limited_total Requests refused with 429 (rate limit).\n"
      "# TYPE cdplan_http_rate_limited_total counter\ncdplan_http_rate_limited_total %llu\n",
      m->rate_limited);
  pthread_mutex_unlock(&m->lock);
}

enum MHD_Result srv_metrics_get(srv_req *r) {
  text t = {malloc(4096), 0, 4096, 1};
  if (!t.p) return srv_reply_fail(r, SVC_NOMEM, "", NULL);
  render(r->s, &t);
  if (!t.ok) {
    free(t.p);
    return srv_reply_fail(r, SVC_NOMEM, "", NULL);
  }
  struct MHD_Response *resp = MHD_create_response_from_buffer(t.len, t.p, MHD_RESPMEM_MUST_FREE);
  if (!resp) {
    free(t.p);
    return MHD_NO;
  }
  MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
                          "text/plain; version=0.0.4; charset=utf-8");
  return srv_reply_response(r, MHD_HTTP_OK, resp);
}
