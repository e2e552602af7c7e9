/* http_client.c: see http_client.h. Reads until the server closes (we
 * always ask for Connection: close) and then trims the body to
 * Content-Length or decodes a chunked body. */
#include "http_client.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

int http_connect_from(int port, const char *src) {
  struct sockaddr_in sa = {0}, from = {0};
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sa.sin_family = AF_INET;
  sa.sin_port = htons((uint16_t)port);
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  from.sin_family = AF_INET;
  if ((src && (inet_pton(AF_INET, src, &from.sin_addr) != 1 ||
               bind(fd, (struct sockaddr *)&from, sizeof from) != 0)) ||
      connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

int http_connect(int port) { return http_connect_from(port, NULL); }

/* Write all of buf unless the server starts answering first. */
static int send_until_answer(int fd, const char *buf, size_t len) {
  size_t off = 0;
  while (off < len) {
    struct pollfd p = {fd, POLLIN | POLLOUT, 0};
    if (poll(&p, 1, 10000) <= 0) return -1;
    if (p.revents & (POLLIN | POLLHUP | POLLERR)) return 1; /* answered early */
    size_t chunk = len - off > 65536 ? 65536 : len - off;
    ssize_t n = send(fd, buf + off, chunk, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return 1; /* reset or pipe closed: the answer may still be readable */
    }
    off += (size_t)n;
  }
  return 0;
}

static int read_all(int fd, char **out, size_t *len) {
  size_t cap = 8192, n = 0;
  char *buf = malloc(cap);
  if (!buf) return -1;
  for (;;) {
    struct pollfd p = {fd, POLLIN, 0};
    if (poll(&p, 1, 15000) <= 0) break;
    if (n + 4096 + 1 > cap) {
      char *nb = realloc(buf, cap *= 2);
      if (!nb) {
        free(buf);
        return -1;
      }
      buf = nb;
    }
    ssize_t got = recv(fd, buf + n, cap - n - 1, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break; /* close, or a reset after the answer */
    n += (size_t)got;
  }
  buf[n] = '\0';
  *out = buf;
  *len = n;
  return 0;
}

const char *http_header(const http_resp *r, const char *name, char *buf, size_t size) {
  size_t nl = strlen(name);
  for (const char *line = r->headers; line && *line;) {
    const char *end = strstr(line, "\r\n");
    size_t ll = end ? (size_t)(end - line) : strlen(line);
    if (ll > nl && line[nl] == ':' && strncasecmp(line, name, nl) == 0) {
      const char *v = line + nl + 1;
      while (*v == ' ') v++;
      size_t vl = ll - (size_t)(v - line);
      if (vl >= size) vl = size - 1;
      memcpy(buf, v, vl);
      buf[vl] = '\0';
      return buf;
    }
    line = end ? end + 2 : NULL;
  }
  return NULL;
}

/* Decode a chunked body in place; returns its length. */
static size_t dechunk(char *b, size_t len) {
  size_t in = 0, out = 0;
  while (in < len) {
    unsigned long n = strtoul(b + in, NULL, 16);
    char *crlf = strstr(b + in, "\r\n");
    if (!crlf || n == 0) break;
    in = (size_t)(crlf - b) + 2;
    if (in + n > len) n = len - in;
    memmove(b + out, b + in, n);
    out += n;
    in += n + 2;
  }
  b[out] = '\0';
  return out;
}

static int parse(char *raw, size_t len, http_resp *out) {
  char cl[32], te[32];
  char *hdr_end = strstr(raw, "\r\n\r\n");
  if (strncmp(raw, "HTTP/1.", 7) != 0 || !hdr_end) return -1;
  out->status = atoi(raw + 9);
  char *line_end = strstr(raw, "\r\n");
  /* From after the status line through the last header's CRLF. */
  size_t hlen = (size_t)(hdr_end - line_end);
  out->headers = malloc(hlen + 1);
  if (!out->headers) return -1;
  memcpy(out->headers, line_end + 2, hlen);
  out->headers[hlen] = '\0';
  char *body = hdr_end + 4;
  size_t blen = len - (size_t)(body - raw);
  if (http_header(out, "Transfer-Encoding", te, sizeof te) && strcasecmp(te, "chunked") == 0)
    blen = dechunk(body, blen);
  else if (http_header(out, "Content-Length", cl, sizeof cl) && strtoul(cl, NULL, 10) < blen)
    blen = strtoul(cl, NULL, 10);
  out->body = malloc(blen + 1);
  if (!out->body) return -1;
  memcpy(out->body, body, blen);
  out->body[blen] = '\0';
  out->body_len = blen;
  return 0;
}

int http_exchange(int port, const char *head, const char *body, size_t body_len, http_resp *out) {
  char *raw = NULL;
  size_t rlen = 0;
  int rc = -1;
  memset(out, 0, sizeof *out);
  int fd = http_connect(port);
  if (fd < 0) return -1;
  int s = send_until_answer(fd, head, strlen(head));
  if (s == 0 && body && body_len) s = send_until_answer(fd, body, body_len);
  if (s < 0) goto cleanup;
  if (read_all(fd, &raw, &rlen) < 0) goto cleanup;
  rc = parse(raw, rlen, out);

cleanup:
  free(raw);
  close(fd);
  return rc;
}

int http_request(int port, const char *method, const char *path, const char *const *headers,
                 const char *body, size_t body_len, http_resp *out) {
  size_t cap = strlen(method) + strlen(path) + 256;
  for (const char *const *h = headers; h && *h; h++) cap += strlen(*h) + 2;
  char *head = malloc(cap);
  if (!head) return -1;
  int n = snprintf(head, cap, "%s %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n",
                   method, path, port);
  for (const char *const *h = headers; h && *h; h++)
    n += snprintf(head + n, cap - (size_t)n, "%s\r\n", *h);
  if (body) n += snprintf(head + n, cap - (size_t)n, "Content-Length: %zu\r\n", body_len);
  snprintf(head + n, cap - (size_t)n, "\r\n");
  int rc = http_exchange(port, head, body, body_len, out);
  free(head);
  return rc;
}

void http_resp_dispose(http_resp *r) {
  if (!r) return;
  free(r->headers);
  free(r->body);
  memset(r, 0, sizeof *r);
}
