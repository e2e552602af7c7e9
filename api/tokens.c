/* api tokens: making, listing, revoking and verifying bearer tokens (see
 * api_tokens.h). The secret exists in memory only while it is made or
 * checked; what is stored and compared is its SHA-256, looked up by an
 * index, so comparison time says nothing about the secret.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "api/api_int.h"
#include "api/api_tokens.h"

static const struct {
  const char *name;
  unsigned bit;
} scope_names[] = {{"read", API_SCOPE_READ},
                   {"plan", API_SCOPE_PLAN},
                   {"dispatch", API_SCOPE_DISPATCH},
                   {"admin", API_SCOPE_ADMIN}};
#define NSCOPES (sizeof scope_names / sizeof scope_names[0])

int api_scopes_parse(const char *text, unsigned *mask, svc_err *err) {
  unsigned m = 0;
  const char *p = text ? text : "";
  *mask = 0;
  while (*p) {
    while (*p == ' ' || *p == ',') p++;
    size_t n = strcspn(p, ", ");
    if (n == 0) break;
    unsigned bit = 0;
    for (size_t i = 0; i < NSCOPES && !bit; i++)
      if (strlen(scope_names[i].name) == n && !strncmp(scope_names[i].name, p, n))
        bit = scope_names[i].bit;
    if (!bit)
      return svc_err_set(err, SVC_BAD_FIELD, "scope",
                         "unknown scope '%.*s' (read, plan, dispatch, admin)",
                         (int)(n > 32 ? 32 : n), p);
    m |= bit;
    p += n;
  }
  if (!m) return svc_err_set(err, SVC_MISSING_FIELD, "scope", "at least one scope is required");
  *mask = m;
  return 0;
}

void api_scopes_format(unsigned mask, char *buf, size_t size) {
  size_t used = 0;
  if (size) buf[0] = '\0';
  for (size_t i = 0; i < NSCOPES; i++) {
    if (!(mask & scope_names[i].bit)) continue;
    int w = snprintf(buf + used, size - used, "%s%s", used ? "," : "", scope_names[i].name);
    if (w < 0 || (size_t)w >= size - used) return;
    used += (size_t)w;
  }
}

int api_scope_allows(unsigned held, unsigned need) {
  if (held & API_SCOPE_ADMIN) return 1;
  if (need == API_SCOPE_READ) return held != 0;
  return (held & need) == need;
}

static int valid_token_name(const char *s) {
  size_t n = strlen(s);
  if (n == 0 || n > 63) return 0;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
          c == '_' || c == '-'))
      return 0;
  }
  return 1;
}

static int random_bytes(unsigned char *buf, size_t n, svc_err *err) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = getrandom(buf + got, n - got, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0)
      return svc_err_set(err, SVC_IO, "", "no randomness for a token: %s", strerror(errno));
    got += (size_t)r;
  }
  return 0;
}

static cJSON *scopes_array(const char *text) {
  unsigned mask = 0;
  cJSON *a = cJSON_CreateArray();
  api_scopes_parse(text, &mask, NULL);
  for (size_t i = 0; i < NSCOPES; i++)
    if (mask & scope_names[i].bit) cJSON_AddItemToArray(a, cJSON_CreateString(scope_names[i].name));
  return a;
}

int api_token_create(api_ctx *ctx, const char *scopes, const char *name, char **out, svc_err *err) {
  static const char hex[] = "0123456789abcdef";
  unsigned char raw[32];
  char secret[4 + 64 + 1];
  hwdb_token t;
  unsigned mask = 0;
  int rc;
  *out = NULL;
  memset(&t, 0, sizeof t);
  if ((rc = api_scopes_parse(scopes, &mask, err))) return rc;
  if (!name) name = "token";
  if (!valid_token_name(name))
    return svc_err_set(err, SVC_BAD_FIELD, "name",
                       "a token name is 1-63 characters of [A-Za-z0-9._-]");
  if ((rc = random_bytes(raw, sizeof raw, err))) return rc;
  memcpy(secret, "cdp_", 4);
  for (size_t i = 0; i < sizeof raw; i++) {
    secret[4 + 2 * i] = hex[raw[i] >> 4];
    secret[4 + 2 * i + 1] = hex[raw[i] & 15];
  }
  secret[sizeof secret - 1] = '\0';
  svc_strlcpy(t.name, name, sizeof t.name);
  api_scopes_format(mask, t.scopes, sizeof t.scopes);
  svc_sha256_hex(secret, strlen(secret), t.hash);
  if ((rc = hwdb_token_add(ctx->db, &t, err))) goto cleanup;
  cJSON *doc = cJSON_CreateObject();
  cJSON_AddNumberToObject(doc, "id", (double)t.id);
  cJSON_AddStringToObject(doc, "name", t.name);
  cJSON_AddItemToObject(doc, "scopes", scopes_array(t.scopes));
  cJSON_AddNumberToObject(doc, "created_at", t.created_at);
  cJSON_AddStringToObject(doc, "token", secret);
  *out = api_print(doc);
  cJSON_Delete(doc);
  if (!*out) rc = svc_err_set(err, SVC_NOMEM, "", NULL);
cleanup:
  memset(secret, 0, sizeof secret);
  memset(raw, 0, sizeof raw);
  return rc;
}

int api_token_list(api_ctx *ctx, char **out, svc_err *err) {
  hwdb_token *list = NULL;
  size_t n = 0;
  *out = NULL;
  int rc = hwdb_token_list(ctx->db, &list, &n, err);
  if (rc) return rc;
  cJSON *doc = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(doc, "tokens");
  for (size_t i = 0; i < n; i++) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "id", (double)list[i].id);
    cJSON_AddStringToObject(o, "name", list[i].name);
    cJSON_AddItemToObject(o, "scopes", scopes_array(list[i].scopes));
    cJSON_AddNumberToObject(o, "created_at", list[i].created_at);
    if (list[i].revoked_at > 0)
      cJSON_AddNumberToObject(o, "revoked_at", list[i].revoked_at);
    else
      cJSON_AddNullToObject(o, "revoked_at");
    cJSON_AddItemToArray(arr, o);
  }
  free(list);
  *out = api_print(doc);
  cJSON_Delete(doc);
  return *out ? 0 : svc_err_set(err, SVC_NOMEM, "", NULL);
}

int api_token_revoke(api_ctx *ctx, int64_t id, char **out, svc_err *err) {
  *out = NULL;
  int rc = hwdb_token_revoke(ctx->db, id, err);
  if (rc) return rc;
  cJSON *doc = cJSON_CreateObject();
  cJSON_AddNumberToObject(doc, "id", (double)id);
  cJSON_AddTrueToObject(doc, "revoked");
  *out = api_print(doc);
  cJSON_Delete(doc);
  return *out ? 0 : svc_err_set(err, SVC_NOMEM, "", NULL);
}

int api_tokens_active(api_ctx *ctx, int64_t *n, svc_err *err) {
  return hwdb_token_count_active(ctx->db, n, err);
}

int api_token_verify(api_ctx *ctx, const char *token, size_t len, unsigned *scopes, int64_t *id,
                     svc_err *err) {
  char hash[65];
  hwdb_token t;
  svc_err lookup;
  *scopes = 0;
  *id = 0;
  if (len == 0 || len > API_TOKEN_MAX)
    return svc_err_set(err, SVC_FORBIDDEN, "Authorization", NULL);
  svc_sha256_hex(token, len, hash);
  int rc = hwdb_token_find(ctx->db, hash, &t, &lookup);
  if (rc == -SVC_NOT_FOUND) return svc_err_set(err, SVC_FORBIDDEN, "Authorization", NULL);
  if (rc) {
    if (err) *err = lookup;
    return rc;
  }
  if (api_scopes_parse(t.scopes, scopes, NULL) < 0)
    return svc_err_set(err, SVC_INTERNAL, "", "token %lld has unreadable scopes", (long long)t.id);
  *id = t.id;
  return 0;
}
