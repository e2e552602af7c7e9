/* static.c: files served as they are: the dashboard under web_root (GET /
 * is its index.html, any other unmatched GET a file below it) and the
 * OpenAPI document at /openapi.yaml.
 *
 * Invariant: nothing outside web_root is ever opened. The request path is
 * refused when a segment is empty, ".", ".." or hidden (MHD has already
 * decoded %2e%2e to ".."), and the resolved file must still lie under the
 * resolved root, which also stops symlinks pointing out of it.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/server_int.h"

static const struct {
  const char *ext, *type;
} types[] = {
    {"html", "text/html; charset=utf-8"},
    {"js", "text/javascript; charset=utf-8"},
    {"mjs", "text/javascript; charset=utf-8"},
    {"css", "text/css; charset=utf-8"},
    {"json", "application/json"},
    {"map", "application/json"},
    {"yaml", "application/yaml"},
    {"yml", "application/yaml"},
    {"txt", "text/plain; charset=utf-8"},
    {"svg", "image/svg+xml"},
    {"png", "image/png"},
    {"jpg", "image/jpeg"},
    {"ico", "image/x-icon"},
    {"woff2", "font/woff2"},
    {"wasm", "application/wasm"},
};

static const char *content_type(const char *path) {
  const char *dot = strrchr(path, '.');
  const char *slash = strrchr(path, '/');
  if (dot && (!slash || dot > slash)) {
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
      if (strcasecmp(dot + 1, types[i].ext) == 0) return types[i].type;
  }
  return "application/octet-stream";
}

/* rel is the path below the root without its leading '/'. */
static int safe_relative(const char *rel) {
  if (!*rel || strchr(rel, '\\')) return 0;
  for (const char *seg = rel; seg;) {
    size_t n = strcspn(seg, "/");
    if (n == 0 || seg[0] == '.') return 0; /* empty, ".", ".." and dotfiles */
    seg = seg[n] ? seg + n + 1 : NULL;
  }
  return 1;
}

/* Send the file at path (whose type is named by type_of, usually path
 * itself), or 404 when it is missing or not a regular file. root, when
 * given, must contain it after symlinks are resolved. */
static enum MHD_Result send_file(srv_req *r, const char *root, const char *path,
                                 const char *type_of) {
  char real_root[PATH_MAX], real[PATH_MAX];
  struct stat st;
  int fd = -1;
  if (!realpath(path, real)) goto missing;
  if (root) {
    size_t n;
    if (!realpath(root, real_root)) goto missing;
    n = strlen(real_root);
    if (strncmp(real, real_root, n) != 0 || (real[n] != '/' && n > 1)) goto missing;
  }
  fd = open(real, O_RDONLY | O_CLOEXEC);
  if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) goto missing;
  /* Once the response exists it owns fd and closes it. */
  struct MHD_Response *resp = MHD_create_response_from_fd((size_t)st.st_size, fd);
  if (!resp) {
    close(fd);
    return srv_reply_fail(r, SVC_NOMEM, "", NULL);
  }
  MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, content_type(type_of));
  MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
  return srv_reply_response(r, MHD_HTTP_OK, resp);

missing:
  if (fd >= 0) close(fd);
  return srv_reply_fail(r, SVC_NOT_FOUND, "", "no such file");
}

enum MHD_Result srv_static_file(srv_req *r) {
  char path[PATH_MAX];
  const char *rel = r->path + 1;
  if (!r->s->web_root || !safe_relative(rel))
    return srv_reply_fail(r, SVC_NOT_FOUND, "", "no such file");
  if (snprintf(path, sizeof path, "%s/%s", r->s->web_root, rel) >= (int)sizeof path)
    return srv_reply_fail(r, SVC_NOT_FOUND, "", "no such file");
  return send_file(r, r->s->web_root, path, rel);
}

enum MHD_Result srv_static_index(srv_req *r) {
  char path[PATH_MAX];
  if (!r->s->web_root) return srv_reply_fail(r, SVC_NOT_FOUND, "", "no dashboard configured");
  if (snprintf(path, sizeof path, "%s/index.html", r->s->web_root) >= (int)sizeof path)
    return srv_reply_fail(r, SVC_NOT_FOUND, "", "no such file");
  return send_file(r, r->s->web_root, path, "index.html");
}

enum MHD_Result srv_static_openapi(srv_req *r) {
  if (!r->s->openapi_path)
    return srv_reply_fail(r, SVC_NOT_FOUND, "", "no OpenAPI document configured");
  return send_file(r, NULL, r->s->openapi_path, "openapi.yaml");
}
