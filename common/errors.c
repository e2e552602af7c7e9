/* The error registry (errors.def) turned into names, messages and HTTP
 * statuses, and the svc_err helpers. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "common/common.h"

static const char *const names[] = {
#define X(name, http, msg) #name,
#include "common/errors.def"
#undef X
};
static const char *const messages[] = {
#define X(name, http, msg) msg,
#include "common/errors.def"
#undef X
};
static const int statuses[] = {
#define X(name, http, msg) http,
#include "common/errors.def"
#undef X
};
static char wire[SVC__COUNT][32];
static int wire_ready;

static int valid(int code) { return code >= 0 && code < SVC__COUNT; }

const char *svc_code_name(int code) { return valid(code) ? names[code] : "INTERNAL"; }
const char *svc_code_message(int code) { return valid(code) ? messages[code] : "internal error"; }
int svc_code_http(int code) { return valid(code) ? statuses[code] : 500; }

const char *svc_code_wire(int code) {
  if (!wire_ready) { /* idempotent: every thread writes the same bytes */
    for (int i = 0; i < SVC__COUNT; i++) {
      size_t j = 0;
      for (; names[i][j] && j + 1 < sizeof wire[i]; j++)
        wire[i][j] = (char)tolower((unsigned char)names[i][j]);
      wire[i][j] = '\0';
    }
    wire_ready = 1;
  }
  return valid(code) ? wire[code] : "internal";
}

int svc_err_set(svc_err *err, svc_code code, const char *field, const char *fmt, ...) {
  if (err) {
    err->code = (int)code;
    svc_strlcpy(err->field, field ? field : "", sizeof err->field);
    if (fmt) {
      va_list ap;
      va_start(ap, fmt);
      vsnprintf(err->message, sizeof err->message, fmt, ap);
      va_end(ap);
    } else {
      svc_strlcpy(err->message, svc_code_message(code), sizeof err->message);
    }
  }
  return -(int)code;
}

void svc_err_clear(svc_err *err) {
  if (err) memset(err, 0, sizeof *err);
}

void svc_err_prefix(svc_err *err, const char *prefix) {
  if (!err || !prefix) return;
  char msg[sizeof err->message];
  size_t n = strlen(prefix);
  if (n + 2 >= sizeof msg) return;
  memcpy(msg, prefix, n);
  msg[n] = ':';
  msg[n + 1] = ' ';
  svc_strlcpy(msg + n + 2, err->message, sizeof msg - n - 2);
  memcpy(err->message, msg, sizeof msg);
}
