/* client.c: `cdplan --server URL COMMAND ...` sends the command's request
 * to a running `cdplan serve` instead of opening a database: the same JSON
 * in and out, so pipelines need no curl. CDPLAN_TOKEN, when set, goes as
 * `Authorization: Bearer`. Plain http:// only (TLS belongs to a proxy in
 * front of the server). One request per process, Connection: close; the
 * answer's body is read to the end (at most CLIENT_MAX_BODY).
 * Exit statuses as for local commands: 2xx -> 0 (body on stdout), 4xx -> 1,
 * 5xx or no answer -> 3 (the error document on stderr). */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "api/api_step.h"
#include "cli/cli.h"

#define CLIENT_MAX_BODY (64u << 20)
#define CLIENT_TIMEOUT_S 330 /* a plan may solve for 300 s */

typedef struct {
  char host[256], port[8], prefix[256];
} url_parts;

static int parse_url(const char *url, url_parts *u, svc_err *err) {
  memset(u, 0, sizeof *u);
  if (strncmp(url, "http://", 7))
    return svc_err_set(err, SVC_BAD_ARGS, "server", "--server takes http://HOST[:PORT][/PREFIX]");
  const char *h = url + 7, *end = h + strcspn(h, "/"), *colon = memchr(h, ':', (size_t)(end - h));
  const char *hend = colon ? colon : end;
  if (hend == h || (size_t)(hend - h) >= sizeof u->host)
    return svc_err_set(err, SVC_BAD_ARGS, "server", "--server: no host in %.100s", url);
  memcpy(u->host, h, (size_t)(hend - h));
  if (colon) {
    size_t n = (size_t)(end - colon - 1);
    if (n == 0 || n >= sizeof u->port || strspn(colon + 1, "0123456789") < n)
      return svc_err_set(err, SVC_BAD_ARGS, "server", "--server: bad port in %.100s", url);
    memcpy(u->port, colon + 1, n);
  } else {
    strcpy(u->port, "80");
  }
  if (strlen(end) >= sizeof u->prefix)
    return svc_err_set(err, SVC_BAD_ARGS, "server", "--server: path too long");
  strcpy(u->prefix, end);
  size_t pl = strlen(u->prefix);
  if (pl && u->prefix[pl - 1] == '/') u->prefix[pl - 1] = '\0';
  return 0;
}

static int dial(const url_parts *u, svc_err *err) {
  struct addrinfo hints = {0}, *ai = NULL, *p;
  hints.ai_socktype = SOCK_STREAM;
  int rc = getaddrinfo(u->host, u->port, &hints, &ai), fd = -1;
  if (rc)
    return svc_err_set(err, SVC_UNAVAILABLE, "server", "cannot resolve %s: %s", u->host,
                       gai_strerror(rc));
  for (p = ai; p && fd < 0; p = p->ai_next) {
    fd = socket(p->ai_family, p->ai_socktype, p->ai_protocol);
    if (fd < 0) continue;
    struct timeval tv = {CLIENT_TIMEOUT_S, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    if (connect(fd, p->ai_addr, p->ai_addrlen)) {
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(ai);
  if (fd < 0)
    return svc_err_set(err, SVC_UNAVAILABLE, "server", "cannot connect to %s:%s: %s", u->host,
                       u->port, strerror(errno));
  return fd;
}

static int send_all(int fd, const char *p, size_t n) {
  while (n) {
    ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    p += w, n -= (size_t)w;
  }
  return 0;
}

/* The whole answer into *resp (NUL-terminated); -1 on a read error. */
static int read_all(int fd, char **resp, size_t *len) {
  size_t cap = 65536, n = 0;
  char *b = malloc(cap);
  if (!b) return -1;
  for (;;) {
    if (n + 1 >= cap) {
      char *nb = cap > CLIENT_MAX_BODY ? NULL : realloc(b, cap * 2);
      if (!nb) {
        free(b);
        return -1;
      }
      b = nb, cap *= 2;
    }
    ssize_t r = recv(fd, b + n, cap - n - 1, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      free(b);
      return -1;
    }
    if (r == 0) break;
    n += (size_t)r;
  }
  b[n] = '\0';
  *resp = b, *len = n;
  return 0;
}

int cli_remote_call(const char *server, const char *method, const char *path, const char *body,
                    size_t blen, int raw_text) {
  url_parts u;
  svc_err err;
  char *resp = NULL, *head = NULL;
  size_t rlen = 0;
  int fd = -1, status = 0, rc = 3;
  const char *token = getenv("CDPLAN_TOKEN");
  svc_err_clear(&err);
  if (parse_url(server, &u, &err)) return cli_fail(&err);
  size_t hcap = 1024 + strlen(path) + strlen(u.prefix) + (token ? strlen(token) : 0);
  if (!(head = malloc(hcap))) return 3;
  int hn = snprintf(head, hcap,
                    "%s %s%s HTTP/1.1\r\nHost: %s:%s\r\nConnection: close\r\n"
                    "Accept: application/json\r\nUser-Agent: cdplan/%s\r\n%s%s%s",
                    method, u.prefix, path, u.host, u.port, api_version(),
                    token && *token ? "Authorization: Bearer " : "", token && *token ? token : "",
                    token && *token ? "\r\n" : "");
  if (body)
    hn += snprintf(head + hn, hcap - (size_t)hn,
                   "Content-Type: application/json\r\nContent-Length: %zu\r\n", blen);
  hn += snprintf(head + hn, hcap - (size_t)hn, "\r\n");
  if ((fd = dial(&u, &err)) < 0) goto fail;
  if (send_all(fd, head, (size_t)hn) || (body && send_all(fd, body, blen)) ||
      read_all(fd, &resp, &rlen)) {
    svc_err_set(&err, SVC_UNAVAILABLE, "server", "no answer from %s:%s: %s", u.host, u.port,
                strerror(errno));
    goto fail;
  }
  char *sep = strstr(resp, "\r\n\r\n");
  if (!sep || sscanf(resp, "HTTP/1.%*d %d", &status) != 1) {
    svc_err_set(&err, SVC_UNAVAILABLE, "server", "%s:%s did not answer HTTP", u.host, u.port);
    goto fail;
  }
  const char *b = sep + 4;
  size_t bl = rlen - (size_t)(b - resp);
  FILE *out = status >= 200 && status < 300 ? stdout : stderr;
  fwrite(b, 1, bl, out);
  if (!raw_text || out == stderr)
    if (bl == 0 || b[bl - 1] != '\n') fputc('\n', out);
  rc = status >= 200 && status < 300 ? 0 : status < 500 ? 1 : 3;
  if (fflush(stdout)) rc = 3;
  goto done;
fail:
  rc = cli_fail(&err);
done:
  if (fd >= 0) close(fd);
  free(head);
  free(resp);
  return rc;
}

/* s percent-encoded into buf (unreserved characters kept). */
static void encode(char *buf, size_t size, const char *s) {
  size_t n = 0;
  for (; *s && n + 4 < size; s++) {
    unsigned char c = (unsigned char)*s;
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '.' || c == '_' || c == '~')
      buf[n++] = (char)c;
    else
      n += (size_t)snprintf(buf + n, size - n, "%%%02X", c);
  }
  buf[n] = '\0';
}

/* The request body of a command that reads FILE|- (with --hw applied). */
static int request_body(cli_opts *o, char **body, size_t *len) {
  char *in = NULL, *over = NULL;
  size_t n = 0, on = 0;
  svc_err err;
  svc_err_clear(&err);
  if (o->argc != 1) {
    svc_err_set(&err, SVC_BAD_ARGS, "", "expected one request file or - for stdin");
    return cli_fail(&err);
  }
  if (cli_read_input(o->argv[0], &in, &n, &err) ||
      (o->hw && api_override_hardware(in, n, o->hw, &over, &on, &err))) {
    free(in);
    return cli_fail(&err);
  }
  if (over) {
    free(in);
    in = over, n = on;
  }
  *body = in, *len = n;
  return 0;
}

int cli_remote(const char *name, cli_opts *o) {
  static const char *const posts[][2] = {{"estimate", "/v1/estimate"},
                                         {"step", "/v1/step"},
                                         {"plan", "/v1/plans"},
                                         {"compare", "/v1/compare"},
                                         {"hw add", "/v1/hardware"}};
  char path[640], a[256], b[256];
  svc_err err;
  for (size_t i = 0; i < sizeof posts / sizeof posts[0]; i++) {
    if (strcmp(name, posts[i][0])) continue;
    char *body = NULL;
    size_t len = 0;
    int rc = request_body(o, &body, &len);
    if (rc) return rc;
    rc = cli_remote_call(o->server, "POST", posts[i][1], body, len, 0);
    free(body);
    return rc;
  }
  if (!strcmp(name, "hw list") && o->argc <= 1) {
    encode(a, sizeof a, o->argc ? o->argv[0] : "");
    snprintf(path, sizeof path, "/v1/hardware%s%s", o->argc ? "?vendor=" : "", a);
    return cli_remote_call(o->server, "GET", path, NULL, 0, 0);
  }
  if (!strcmp(name, "hw show") && (o->argc == 1 || (o->argc == 0 && o->hw))) {
    encode(a, sizeof a, o->argc ? o->argv[0] : o->hw);
    snprintf(path, sizeof path, "/v1/hardware/%s", a);
    return cli_remote_call(o->server, "GET", path, NULL, 0, 0);
  }
  if (!strcmp(name, "export torchrec") && o->argc == 1) {
    encode(a, sizeof a, o->argv[0]);
    encode(b, sizeof b, o->module ? o->module : "");
    snprintf(path, sizeof path, "/v1/plans/%s?format=torchrec%s%s", a, o->module ? "&module=" : "",
             b);
    return cli_remote_call(o->server, "GET", path, NULL, 0, 1);
  }
  svc_err_set(&err, SVC_BAD_ARGS, "server",
              "--server runs estimate, step, plan, compare, hw list|show|add and export torchrec "
              "(with their arguments); run %s locally",
              name);
  return cli_fail(&err);
}
