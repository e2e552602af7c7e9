/* Logging, bounded strings, constant-time compare, file reading, clock. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/common.h"

int svc_log_threshold = SVC_LOG_INFO;

void svc_log_write(int level, const char *fmt, ...) {
  static const char *const tag[] = {"error", "warn", "info", "debug"};
  char ts[32];
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", &tm);
  va_list ap;
  va_start(ap, fmt);
  flockfile(stderr);
  fprintf(stderr, "%s cdplan %s: ", ts, tag[level < 0 ? 0 : level > 3 ? 3 : level]);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  funlockfile(stderr);
  va_end(ap);
}

int svc_strlcpy(char *dst, const char *src, size_t size) {
  if (size == 0) return -1;
  size_t n = strlen(src);
  if (n >= size) {
    memcpy(dst, src, size - 1);
    dst[size - 1] = '\0';
    return -1;
  }
  memcpy(dst, src, n + 1);
  return 0;
}

int svc_consttime_eq(const char *a, size_t alen, const char *b, size_t blen) {
  /* Walk the longer length so the time depends on neither content nor
   * where the first difference is. */
  size_t n = alen > blen ? alen : blen;
  unsigned diff = (unsigned)(alen ^ blen);
  for (size_t i = 0; i < n; i++) {
    unsigned char x = i < alen ? (unsigned char)a[i] : 0;
    unsigned char y = i < blen ? (unsigned char)b[i] : 0;
    diff |= (unsigned)(x ^ y);
  }
  return diff == 0;
}

int svc_read_file(const char *path, size_t max, char **out, size_t *len, svc_err *err) {
  FILE *f = NULL;
  char *buf = NULL;
  size_t n = 0, cap = 0;
  int rc = 0;
  *out = NULL;
  f = fopen(path, "rb");
  if (!f) {
    rc = svc_err_set(err, SVC_IO, "file", "cannot open %s: %s", path, strerror(errno));
    goto cleanup;
  }
  for (;;) {
    if (n + 4096 + 1 > cap) {
      cap = cap ? cap * 2 : 8192;
      char *nb = realloc(buf, cap);
      if (!nb) {
        rc = svc_err_set(err, SVC_NOMEM, "file", NULL);
        goto cleanup;
      }
      buf = nb;
    }
    size_t got = fread(buf + n, 1, cap - n - 1, f);
    n += got;
    if (n > max) {
      rc = svc_err_set(err, SVC_TOO_LARGE, "file", "%s is larger than %zu bytes", path, max);
      goto cleanup;
    }
    if (got == 0) break;
  }
  if (ferror(f)) {
    rc = svc_err_set(err, SVC_IO, "file", "cannot read %s", path);
    goto cleanup;
  }
  buf[n] = '\0';
  *out = buf;
  buf = NULL;
  if (len) *len = n;
cleanup:
  if (f) fclose(f);
  free(buf);
  return rc;
}

double svc_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double svc_wall_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
