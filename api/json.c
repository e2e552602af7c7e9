/* Validated reading of request JSON: every number finite and in range,
 * integers whole, strings bounded with a charset, unknown members
 * rejected. Each failure names the field by its JSON path. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"

const char *api_path(char *buf, size_t size, const char *path, const char *key) {
  if (!path || !*path)
    snprintf(buf, size, "%s", key);
  else
    snprintf(buf, size, "%s.%s", path, key);
  return buf;
}

const char *api_path_index(char *buf, size_t size, const char *path, const char *key, int index) {
  char tmp[128];
  snprintf(buf, size, "%s[%d]", api_path(tmp, sizeof tmp, path, key), index);
  return buf;
}

/* No request of ours nests more than a few levels; cJSON allows 1000 and
 * every decoder above it walks the tree recursively, so deeper documents
 * are refused by a scan before parsing (strings skipped, escapes too). */
#define MAX_DEPTH 32
static int too_deep(const char *p, size_t len) {
  int depth = 0, in_str = 0;
  for (size_t i = 0; i < len; i++) {
    char c = p[i];
    if (in_str) {
      if (c == '\\')
        i++;
      else if (c == '"')
        in_str = 0;
    } else if (c == '"') {
      in_str = 1;
    } else if (c == '[' || c == '{') {
      if (++depth > MAX_DEPTH) return 1;
    } else if (c == ']' || c == '}') {
      depth--;
    }
  }
  return 0;
}

/* cJSON decodes \u0000 into a NUL that ends the C string, so
 * "h200\u0000zz" would be read as "h200" (and a name stored cut short):
 * a string holding \u0000 is refused. Byte offset of the escape, or -1. */
static long nul_escape(const char *p, size_t len) {
  int in_str = 0;
  for (size_t i = 0; i < len; i++) {
    if (!in_str) {
      in_str = p[i] == '"';
    } else if (p[i] == '"') {
      in_str = 0;
    } else if (p[i] == '\\') {
      if (i + 5 < len && !memcmp(p + i + 1, "u0000", 5)) return (long)i;
      i++;
    }
  }
  return -1;
}

static int by_name(const void *a, const void *b) {
  return strcmp((*(const cJSON *const *)a)->string, (*(const cJSON *const *)b)->string);
}

/* A member given twice is ambiguous (cJSON reads the first, other parsers
 * the last; --hw replaced only the first): refused with its path. Each
 * object's names are sorted, so a body of many members stays n log n. */
static int duplicate_member(const cJSON *node, const char *path, svc_err *err) {
  char f[160];
  int rc = 0, n = 0, i = 0;
  const cJSON *it;
  if (!cJSON_IsObject(node) && !cJSON_IsArray(node)) return 0;
  for (it = node->child; it; it = it->next) n++;
  if (cJSON_IsObject(node) && n > 1) {
    const cJSON **v = malloc((size_t)n * sizeof *v);
    if (!v) return svc_err_set(err, SVC_NOMEM, "", NULL);
    for (it = node->child; it; it = it->next) v[i++] = it;
    qsort(v, (size_t)n, sizeof *v, by_name);
    for (i = 1; i < n && !rc; i++)
      if (!strcmp(v[i - 1]->string, v[i]->string))
        rc = svc_err_set(err, SVC_BAD_JSON, api_path(f, sizeof f, path, v[i]->string),
                         "%s appears more than once in its object", f);
    free(v);
  }
  for (it = node->child, i = 0; it && !rc; it = it->next, i++) {
    if (cJSON_IsObject(node))
      api_path(f, sizeof f, path, it->string);
    else
      snprintf(f, sizeof f, "%s[%d]", path, i);
    rc = duplicate_member(it, f, err);
  }
  return rc;
}

int api_parse_body(const char *body, size_t len, cJSON **out, svc_err *err) {
  return api_parse_body_max(body, len, API_MAX_BODY, out, err);
}

int api_parse_body_max(const char *body, size_t len, size_t max, cJSON **out, svc_err *err) {
  *out = NULL;
  if (!body || len == 0) return svc_err_set(err, SVC_BAD_JSON, "", "request body is empty");
  if (len > max)
    return svc_err_set(err, SVC_TOO_LARGE, "", "request body is larger than %zu bytes", max);
  if (too_deep(body, len))
    return svc_err_set(err, SVC_BAD_JSON, "", "request body nests deeper than %d levels",
                       MAX_DEPTH);
  long nul = nul_escape(body, len);
  if (nul >= 0)
    return svc_err_set(err, SVC_BAD_JSON, "",
                       "a string holds \\u0000 (near byte %ld); names and values cannot hold NUL",
                       nul);
  const char *end = NULL;
  cJSON *doc = cJSON_ParseWithLengthOpts(body, len, &end, 0);
  if (!doc) {
    long at = end ? (long)(end - body) : -1;
    return svc_err_set(err, SVC_BAD_JSON, "", "request body is not valid JSON (near byte %ld)", at);
  }
  /* Anything but whitespace after the document is a malformed body. */
  for (const char *p = end; p && p < body + len; p++) {
    if (*p != ' ' && *p != '\n' && *p != '\r' && *p != '\t' && *p != '\0') {
      cJSON_Delete(doc);
      return svc_err_set(err, SVC_BAD_JSON, "", "trailing data after the JSON document");
    }
  }
  if (!cJSON_IsObject(doc)) {
    cJSON_Delete(doc);
    return svc_err_set(err, SVC_BAD_JSON, "", "request body must be a JSON object");
  }
  int rc = duplicate_member(doc, "", err);
  if (rc) {
    cJSON_Delete(doc);
    return rc;
  }
  *out = doc;
  return 0;
}

char *api_print(const cJSON *doc) { return cJSON_PrintUnformatted(doc); }

/* The override replaces the member (moved to the end, as
 * api_override_hardware does) so that the request reads as if written so. */
static int set_hardware(cJSON *req, const char *name, svc_err *err) {
  if (!api_valid_name(name))
    return svc_err_set(err, SVC_BAD_ARGS, "hardware", "--hw must name hardware ([a-z0-9._-])");
  cJSON_DeleteItemFromObjectCaseSensitive(req, "hardware");
  if (!cJSON_AddStringToObject(req, "hardware", name)) return svc_err_set(err, SVC_NOMEM, "", NULL);
  return 0;
}

int api_parse_request(api_ctx *ctx, const char *body, size_t len, cJSON **out, svc_err *err) {
  return api_parse_request_max(ctx, body, len, API_MAX_BODY, out, err);
}

int api_parse_request_max(api_ctx *ctx, const char *body, size_t len, size_t max, cJSON **out,
                          svc_err *err) {
  int rc = api_parse_body_max(body, len, max, out, err);
  if (rc || !ctx->hw_override) return rc;
  if ((rc = set_hardware(*out, ctx->hw_override, err))) {
    cJSON_Delete(*out);
    *out = NULL;
  }
  return rc;
}

int api_override_hardware(const char *body, size_t len, const char *name, char **out,
                          size_t *out_len, svc_err *err) {
  cJSON *req = NULL;
  int rc = api_parse_body(body, len, &req, err);
  *out = NULL;
  if (!rc && !(rc = set_hardware(req, name, err)) && !(*out = api_print(req)))
    rc = svc_err_set(err, SVC_NOMEM, "", NULL);
  cJSON_Delete(req);
  if (!rc) *out_len = strlen(*out);
  return rc;
}

int api_request_hw(api_ctx *ctx, const char *body, size_t len, const char *const *top, cJSON **req,
                   const char **hw, const char **calib, svc_err *err) {
  int rc = api_parse_request(ctx, body, len, req, err);
  if (rc) return rc;
  if (!(rc = api_check_fields(*req, top, "", err)) &&
      !(rc = api_get_str(*req, "hardware", "", 1, 63, NULL, hw, err)) &&
      !(rc = api_get_str(*req, "calibration", "", 0, 16, NULL, calib, err)) &&
      strcmp(*calib, "latest") != 0 && strcmp(*calib, "none") != 0)
    rc = svc_err_set(err, SVC_BAD_FIELD, "calibration", "calibration must be latest or none");
  if (rc) {
    cJSON_Delete(*req);
    *req = NULL;
  }
  return rc;
}

void api_reply_dispose(api_reply *r) {
  if (!r) return;
  free(r->json);
  r->json = NULL;
}

int api_reply_active(const api_reply *r) {
  return !strcmp(r->state, "queued") || !strcmp(r->state, "running");
}

/* 1 when key is present (and not null) in obj, 0 when absent and optional,
 * a negative code when absent and required. */
static int present(const cJSON *obj, const char *key, const char *path, int required,
                   const cJSON **it, svc_err *err) {
  char f[160];
  *it = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (*it && !cJSON_IsNull(*it)) return 1;
  if (!required) return 0;
  api_path(f, sizeof f, path, key);
  return svc_err_set(err, SVC_MISSING_FIELD, f, "%s is required", f);
}

int api_get_num(const cJSON *obj, const char *key, const char *path, int required, double min,
                double max, double *out, svc_err *err) {
  char f[160];
  const cJSON *it = NULL;
  int rc = present(obj, key, path, required, &it, err);
  if (rc <= 0) return rc;
  if (!cJSON_IsNumber(it))
    return svc_err_set(err, SVC_BAD_FIELD, api_path(f, sizeof f, path, key), "%s must be a number",
                       api_path(f, sizeof f, path, key));
  double v = it->valuedouble;
  if (!isfinite(v) || v < min || v > max)
    return svc_err_set(err, SVC_OUT_OF_RANGE, api_path(f, sizeof f, path, key),
                       "%s must be between %g and %g (got %g)", api_path(f, sizeof f, path, key),
                       min, max, v);
  *out = v;
  return 0;
}

int api_get_int(const cJSON *obj, const char *key, const char *path, int required, int64_t min,
                int64_t max, int64_t *out, svc_err *err) {
  char f[160];
  double v = 0;
  const cJSON *it = NULL;
  int rc = present(obj, key, path, required, &it, err);
  if (rc <= 0) return rc;
  if (!cJSON_IsNumber(it) || !isfinite(it->valuedouble) ||
      floor(it->valuedouble) != it->valuedouble)
    return svc_err_set(err, SVC_BAD_FIELD, api_path(f, sizeof f, path, key),
                       "%s must be an integer", api_path(f, sizeof f, path, key));
  v = it->valuedouble;
  if (v < (double)min || v > (double)max)
    return svc_err_set(err, SVC_OUT_OF_RANGE, api_path(f, sizeof f, path, key),
                       "%s must be between %lld and %lld (got %.17g)",
                       api_path(f, sizeof f, path, key), (long long)min, (long long)max, v);
  *out = (int64_t)v;
  return 0;
}

int api_get_str(const cJSON *obj, const char *key, const char *path, int required, size_t maxlen,
                const char *charset, const char **out, svc_err *err) {
  char f[160];
  const cJSON *it = NULL;
  int rc = present(obj, key, path, required, &it, err);
  if (rc <= 0) return rc;
  if (!cJSON_IsString(it) || !it->valuestring)
    return svc_err_set(err, SVC_BAD_FIELD, api_path(f, sizeof f, path, key), "%s must be a string",
                       api_path(f, sizeof f, path, key));
  const char *s = it->valuestring;
  size_t n = strlen(s);
  if (n > maxlen)
    return svc_err_set(err, SVC_BAD_FIELD, api_path(f, sizeof f, path, key),
                       "%s is longer than %zu bytes", api_path(f, sizeof f, path, key), maxlen);
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    int ok = charset ? strchr(charset, c) != NULL : (c >= 0x20 && c != 0x7f);
    if (!ok)
      return svc_err_set(err, SVC_BAD_FIELD, api_path(f, sizeof f, path, key),
                         "%s contains a character that is not allowed",
                         api_path(f, sizeof f, path, key));
  }
  *out = s;
  return 0;
}

int api_check_fields(const cJSON *obj, const char *const *allowed, const char *path, svc_err *err) {
  char f[160];
  for (const cJSON *it = obj ? obj->child : NULL; it; it = it->next) {
    int known = 0;
    for (const char *const *a = allowed; *a && !known; a++)
      known = it->string && !strcmp(*a, it->string);
    if (!known) {
      char name[64];
      svc_strlcpy(name, it->string ? it->string : "?", sizeof name);
      return svc_err_set(err, SVC_UNKNOWN_FIELD, api_path(f, sizeof f, path, name),
                         "unknown field %s", api_path(f, sizeof f, path, name));
    }
  }
  return 0;
}

int api_valid_name(const char *name) {
  size_t n = name ? strlen(name) : 0;
  if (n == 0 || n > 63) return 0;
  for (size_t i = 0; i < n; i++) {
    char c = name[i];
    int ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
             (i > 0 && (c == '.' || c == '_' || c == '-'));
    if (!ok) return 0;
  }
  return 1;
}

char *api_error_json(const svc_err *err) {
  cJSON *doc = cJSON_CreateObject(), *e = cJSON_AddObjectToObject(doc, "error");
  int code = err && err->code ? err->code : SVC_INTERNAL;
  cJSON_AddStringToObject(e, "code", svc_code_wire(code));
  cJSON_AddStringToObject(e, "message",
                          err && err->message[0] ? err->message : svc_code_message(code));
  cJSON_AddStringToObject(e, "field", err ? err->field : "");
  char *s = api_print(doc);
  cJSON_Delete(doc);
  return s;
}
