/* common: the error registry, the error value every fallible function
 * fills, logging, and small bounded-string helpers. libc only.
 *
 * Convention (libgit2 style): fallible functions return 0 on success or a
 * negative svc_code and fill a caller-owned svc_err at the place of failure.
 */
#ifndef CDPLAN_COMMON_H
#define CDPLAN_COMMON_H

#include <stdarg.h>
#include <stddef.h>

typedef enum {
#define X(name, http, msg) SVC_##name,
#include "common/errors.def"
#undef X
  SVC__COUNT
} svc_code;

/* The error a failing call leaves behind. field is a JSON path such as
 * "ops[2].m" or "" when no field is to blame. */
typedef struct {
  int code; /* svc_code, positive */
  char field[128];
  char message[384];
} svc_err;

/* Fill err (may be NULL) and return -code. message is printf-style; a NULL
 * fmt takes the registry's default message. */
int svc_err_set(svc_err *err, svc_code code, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void svc_err_clear(svc_err *err);
/* Prepend "prefix: " to err's message (which file, which item). */
void svc_err_prefix(svc_err *err, const char *prefix);
const char *svc_code_name(int code);    /* "BAD_FIELD" */
const char *svc_code_message(int code); /* the registry's default message */
int svc_code_http(int code);            /* 400 ... */
/* lower-case code used on the wire: "bad_field" */
const char *svc_code_wire(int code);

/* Logging: the level is checked before the arguments are evaluated. */
typedef enum { SVC_LOG_ERROR = 0, SVC_LOG_WARN, SVC_LOG_INFO, SVC_LOG_DEBUG } svc_log_level;
extern int svc_log_threshold;
void svc_log_write(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define svc_log(level, ...)                                                                        \
  do {                                                                                             \
    if ((level) <= svc_log_threshold) svc_log_write((level), __VA_ARGS__);                         \
  } while (0)

/* Bounded copy: always NUL-terminates; returns -1 when truncated. */
int svc_strlcpy(char *dst, const char *src, size_t size);
/* Constant-time comparison of two byte strings (lengths may differ). */
int svc_consttime_eq(const char *a, size_t alen, const char *b, size_t blen);
/* Read a whole file into a NUL-terminated malloc'd buffer, at most max bytes. */
int svc_read_file(const char *path, size_t max, char **out, size_t *len, svc_err *err);
/* Monotonic clock in seconds. */
double svc_now(void);
/* Wall-clock unix time in seconds (what stored timestamps hold). */
double svc_wall_now(void);

/* ---- SHA-256 (common/sha256.c) ----
 * FIPS 180-4 SHA-256 of len bytes: the raw 32-byte digest, or as 64
 * lower-case hex digits plus a NUL. Used to store API tokens hashed. */
void svc_sha256(const void *data, size_t len, unsigned char out[32]);
void svc_sha256_hex(const void *data, size_t len, char out[65]);

#endif
