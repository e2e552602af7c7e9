/* api tokens: bearer tokens with scopes for the REST API, made and revoked
 * from the CLI (`cdplan token ...`) and checked by the transport. A token
 * is "cdp_" + 64 hex digits of getrandom() output; only its SHA-256 is
 * stored (hwdb/tokens.c), so the secret is shown once, when it is made.
 *
 * Scopes: read (GET, estimate, step, kernels/select), plan (POST /v1/plans,
 * /v1/compare), dispatch (POST /v1/validations and results), admin (catalog
 * writes, calibration; implies every other scope). Any valid token may
 * read: a token that can plan but not read its plans would be useless.
 * The policy (which route needs which scope, when tokens are required)
 * lives in server/auth.c; this file only stores and verifies.
 */
#ifndef CDPLAN_API_TOKENS_H
#define CDPLAN_API_TOKENS_H

#include <stddef.h>
#include <stdint.h>

#include "api/api.h"

typedef enum {
  API_SCOPE_READ = 1u << 0,
  API_SCOPE_PLAN = 1u << 1,
  API_SCOPE_DISPATCH = 1u << 2,
  API_SCOPE_ADMIN = 1u << 3,
  API_SCOPE_ALL = (1u << 4) - 1
} api_scope;

#define API_TOKEN_MAX 256 /* bytes of a presented secret; longer is refused unhashed */

/* "read,plan" (commas, optional spaces) -> mask; 400 naming field "scope"
 * for an empty list or an unknown name. */
int api_scopes_parse(const char *text, unsigned *mask, svc_err *err);
/* mask -> "read,plan,..." in a fixed order (buf of at least 64 bytes). */
void api_scopes_format(unsigned mask, char *buf, size_t size);
/* Does a token holding `held` satisfy a route needing `need` (one scope)?
 * admin satisfies everything; any scope satisfies read. */
int api_scope_allows(unsigned held, unsigned need);

/* cdplan token create: {"id","name","scopes":[...],"created_at","token"}.
 * The "token" member is the secret: it is returned here and nowhere else.
 * name may be NULL ("token"). */
int api_token_create(api_ctx *ctx, const char *scopes, const char *name, char **out, svc_err *err);
/* cdplan token list: {"tokens":[{"id","name","scopes","created_at","revoked_at"|null}]}
 * (never a secret, never a hash). */
int api_token_list(api_ctx *ctx, char **out, svc_err *err);
/* cdplan token revoke ID: {"id":ID,"revoked":true}; 404 for an unknown id. */
int api_token_revoke(api_ctx *ctx, int64_t id, char **out, svc_err *err);

/* Number of active (not revoked) tokens. */
int api_tokens_active(api_ctx *ctx, int64_t *n, svc_err *err);
/* The scopes and id of the active token whose secret is token[0..len):
 * 403 forbidden when there is none (unknown, revoked, too long). */
int api_token_verify(api_ctx *ctx, const char *token, size_t len, unsigned *scopes, int64_t *id,
                     svc_err *err);

#endif
