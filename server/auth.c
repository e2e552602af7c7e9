/* auth.c: who may call which route, and the per-client rate limits.
 *
 * The rule (also in the README, "Authentication"):
 *  - Routes marked SRV_SCOPE_OPEN (health, metrics, the API document, the
 *    dashboard's files) never need a token.
 *  - When the database holds at least one active token (made with
 *    `cdplan token create`), every other route needs a Bearer token
 *    holding the route's scope; reads need any valid token.
 *  - When it holds none, reads are open, and routes needing plan,
 *    dispatch or admin are open too unless --token-file is given; the
 *    token file's token holds every scope in either case.
 * No Authorization header (or another scheme) is 401; a token that is not
 * known, is revoked or lacks the scope is 403. The header is never logged.
 *
 * A running server sees tokens made or revoked by the CLI (another
 * process) within AUTH_TTL_S: the count of active tokens and each verified
 * token are cached that long so that the hot path does not query SQLite.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "api/api_tokens.h"
#include "server/server_int.h"

#define AUTH_TTL_S 1.0

static const char *scope_name(srv_scope need) {
  switch (need) {
  case SRV_SCOPE_ADMIN:
    return "admin";
  case SRV_SCOPE_PLAN:
    return "plan";
  case SRV_SCOPE_DISPATCH:
    return "dispatch";
  default:
    return "read";
  }
}

static unsigned scope_bit(srv_scope need) {
  switch (need) {
  case SRV_SCOPE_ADMIN:
    return API_SCOPE_ADMIN;
  case SRV_SCOPE_PLAN:
    return API_SCOPE_PLAN;
  case SRV_SCOPE_DISPATCH:
    return API_SCOPE_DISPATCH;
  default:
    return API_SCOPE_READ;
  }
}

/* Are there active tokens in the database? Cached for AUTH_TTL_S. A
 * database error counts as "yes": failing closed. */
static int tokens_in_db(srv *s, double now) {
  srv_auth *a = &s->auth;
  pthread_mutex_lock(&a->lock);
  int fresh = a->active_at > 0 && now - a->active_at < AUTH_TTL_S;
  int64_t n = a->active;
  pthread_mutex_unlock(&a->lock);
  if (fresh) return n > 0;
  svc_err err;
  if (api_tokens_active(s->api, &n, &err) < 0) {
    svc_log(SVC_LOG_ERROR, "auth: cannot count tokens: %s", err.message);
    return 1;
  }
  pthread_mutex_lock(&a->lock);
  a->active = n;
  a->active_at = now;
  pthread_mutex_unlock(&a->lock);
  return n > 0;
}

/* Verify a database token through the cache; 0 or a negative code. */
static int verify(srv *s, const char *t, size_t len, double now, unsigned *scopes, int64_t *id,
                  svc_err *err) {
  srv_auth *a = &s->auth;
  unsigned char h[32];
  if (len == 0 || len > API_TOKEN_MAX)
    return svc_err_set(err, SVC_FORBIDDEN, "Authorization", NULL);
  svc_sha256(t, len, h);
  pthread_mutex_lock(&a->lock);
  for (size_t i = 0; i < SRV_AUTH_CACHE; i++) {
    if (a->cache[i].at > 0 && now - a->cache[i].at < AUTH_TTL_S &&
        !memcmp(a->cache[i].hash, h, sizeof h)) {
      *scopes = a->cache[i].scopes;
      *id = a->cache[i].id;
      pthread_mutex_unlock(&a->lock);
      return 0;
    }
  }
  pthread_mutex_unlock(&a->lock);
  int rc = api_token_verify(s->api, t, len, scopes, id, err);
  if (rc) return rc;
  pthread_mutex_lock(&a->lock);
  size_t slot = a->next++ % SRV_AUTH_CACHE;
  memcpy(a->cache[slot].hash, h, sizeof h);
  a->cache[slot].scopes = *scopes;
  a->cache[slot].id = *id;
  a->cache[slot].at = now;
  pthread_mutex_unlock(&a->lock);
  return 0;
}

enum MHD_Result srv_auth_check(srv_req *r) {
  srv *s = r->s;
  srv_scope need = r->route ? r->route->scope : SRV_SCOPE_OPEN;
  if (need == SRV_SCOPE_OPEN) return MHD_YES;
  double now = svc_now();
  int db_tokens = tokens_in_db(s, now);
  if (!db_tokens && !s->token) {
    r->scopes = API_SCOPE_ALL; /* no tokens anywhere: every route is open */
    return MHD_YES;
  }
  if (!db_tokens && need == SRV_SCOPE_READ) {
    r->scopes = API_SCOPE_READ; /* an anonymous reader beside --token-file */
    return MHD_YES;
  }

  const char *h =
      MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
  if (!h || strncasecmp(h, "Bearer ", 7) != 0)
    return srv_reply_fail(r, SVC_UNAUTHORIZED, "Authorization",
                          "a Bearer token is required for this route");
  const char *t = h + 7;
  while (*t == ' ') t++;
  size_t len = strlen(t);
  unsigned scopes = 0;
  int64_t id = 0;
  if (s->token && svc_consttime_eq(t, len, s->token, strlen(s->token))) {
    scopes = API_SCOPE_ALL; /* the --token-file token: admin */
  } else {
    svc_err err;
    /* Without database tokens only the file's token exists. */
    if (!db_tokens) return srv_reply_fail(r, SVC_FORBIDDEN, "Authorization", NULL);
    int rc = verify(s, t, len, now, &scopes, &id, &err);
    if (rc == -SVC_FORBIDDEN) return srv_reply_fail(r, SVC_FORBIDDEN, "Authorization", NULL);
    if (rc) return srv_reply_error(r, &err);
  }
  if (!api_scope_allows(scopes, scope_bit(need))) {
    char msg[96];
    snprintf(msg, sizeof msg, "this token lacks the '%s' scope", scope_name(need));
    return srv_reply_fail(r, SVC_FORBIDDEN, "Authorization", msg);
  }
  r->token_id = id;
  r->has_token = 1;
  r->scopes = scopes;
  return MHD_YES;
}

/* The client's address as a rate-limit key ("a" + the raw address). */
static size_t addr_key(srv_req *r, unsigned char *key, size_t size) {
  const union MHD_ConnectionInfo *ci =
      MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
  if (!ci || !ci->client_addr || size < 17) return 0;
  key[0] = 'a';
  if (ci->client_addr->sa_family == AF_INET) {
    memcpy(key + 1, &((const struct sockaddr_in *)ci->client_addr)->sin_addr, 4);
    return 5;
  }
  if (ci->client_addr->sa_family == AF_INET6) {
    memcpy(key + 1, &((const struct sockaddr_in6 *)ci->client_addr)->sin6_addr, 16);
    return 17;
  }
  return 0;
}

static enum MHD_Result limited(srv_req *r, unsigned wait, const char *who) {
  char msg[96];
  snprintf(msg, sizeof msg, "too many requests from this %s; retry in %u s", who, wait);
  return srv_reply_retry(r, SVC_RATE_LIMITED, wait, msg);
}

enum MHD_Result srv_limit_address(srv_req *r) {
  unsigned char key[20];
  if (!r->s->rl) return MHD_YES;
  size_t n = addr_key(r, key, sizeof key);
  unsigned wait = srv_ratelimit_take(r->s->rl, key, n, svc_now());
  return wait ? limited(r, wait, "address") : MHD_YES;
}

enum MHD_Result srv_limit_token(srv_req *r) {
  unsigned char key[9];
  if (!r->s->rl || !r->has_token) return MHD_YES;
  key[0] = 't';
  memcpy(key + 1, &r->token_id, 8);
  unsigned wait = srv_ratelimit_take(r->s->rl, key, sizeof key, svc_now());
  return wait ? limited(r, wait, "token") : MHD_YES;
}
