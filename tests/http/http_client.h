/* A small HTTP/1.1 client for the transport tests: one request per
 * connection (Connection: close), over a real TCP socket to 127.0.0.1.
 * It stops sending a body as soon as the server answers, so early
 * refusals (413, 401, 415) are read instead of lost to a reset.
 */
#ifndef CDPLAN_TESTS_HTTP_CLIENT_H
#define CDPLAN_TESTS_HTTP_CLIENT_H

#include <stddef.h>

typedef struct {
  int status;    /* 0 when no status line came back */
  char *headers; /* the header block after the status line, NUL-terminated */
  char *body;    /* NUL-terminated; body_len excludes the NUL */
  size_t body_len;
} http_resp;

/* Send method path with extra header lines (NULL-terminated array of
 * "Name: value", may be NULL) and an optional body (Content-Length is
 * added when body is non-NULL). Returns 0 or -1 on a socket error. */
int http_request(int port, const char *method, const char *path, const char *const *headers,
                 const char *body, size_t body_len, http_resp *out);
/* Send raw bytes (a full request written by the caller) and read the
 * answer; body is sent after head, as above. */
int http_exchange(int port, const char *head, const char *body, size_t body_len, http_resp *out);
/* A TCP connection to 127.0.0.1:port (close-on-exec), from the loopback
 * address src ("127.0.0.x") when it is not NULL; the fd, or -1. */
int http_connect_from(int port, const char *src);
int http_connect(int port);
/* Value of header name (case-insensitive) copied into buf, or NULL. */
const char *http_header(const http_resp *r, const char *name, char *buf, size_t size);
void http_resp_dispose(http_resp *r);

#endif
