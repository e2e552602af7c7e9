/* http_fixture.c: see http_fixture.h. */
#include "http_fixture.h"
#include "pg_testdb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int write_file(const char *path, const char *text) {
  FILE *fp = fopen(path, "w");
  if (!fp) return -1;
  fputs(text, fp);
  return fclose(fp);
}

int fixture_start(http_fixture *f, const char *token) {
  srv_config cfg = {.token = token, .threads = 2};
  return fixture_start_with(f, &cfg);
}

int fixture_start_with(http_fixture *f, const srv_config *base) {
  char path[160];
  svc_err err;
  memset(f, 0, sizeof *f);
  snprintf(f->dir, sizeof f->dir, "/tmp/cdplan-test-XXXXXX");
  if (!mkdtemp(f->dir)) {
    f->dir[0] = '\0'; /* nothing for fixture_stop to remove */
    return -1;
  }
  snprintf(path, sizeof path, "%s/test.db", f->dir);
  if (testdb_make(f->db, sizeof f->db, path)) return -1;
  snprintf(f->web, sizeof f->web, "%s/web", f->dir);
  if (mkdir(f->web, 0700) != 0) return -1;
  snprintf(path, sizeof path, "%s/index.html", f->web);
  write_file(path, "<!doctype html><title>cdplan</title>\n");
  snprintf(path, sizeof path, "%s/app.js", f->web);
  write_file(path, "console.log('cdplan');\n");
  snprintf(path, sizeof path, "%s/.hidden", f->web);
  write_file(path, "hidden\n");
  snprintf(path, sizeof path, "%s/outside.txt", f->dir);
  write_file(path, "secret\n");
  /* A symlink inside the root that points out of it. */
  char link[160];
  snprintf(link, sizeof link, "%s/escape.txt", f->web);
  if (symlink(path, link) != 0) return -1;

  if (api_ctx_new(&f->api, f->db, &err) < 0) {
    fprintf(stderr, "api_ctx_new: %s (%s)\n", err.message, err.field);
    return -1;
  }
  srv_config cfg = *base;
  cfg.host = "127.0.0.1";
  cfg.port = 0;
  cfg.web_root = f->web;
  cfg.openapi_path = CDPLAN_SOURCE_DIR "/docs/openapi.yaml";
  if (srv_start(&f->s, f->api, &cfg, &err) < 0) {
    fprintf(stderr, "srv_start: %s (%s)\n", err.message, err.field);
    return -1;
  }
  f->port = srv_port(f->s);
  return f->port > 0 ? 0 : -1;
}

void fixture_stop(http_fixture *f) {
  static const char *const names[] = {"test.db",         "test.db-wal", "test.db-shm",
                                      "test.db-journal", "outside.txt", "web/index.html",
                                      "web/app.js",      "web/.hidden", "web/escape.txt"};
  char path[160];
  /* Also undoes a partial fixture_start: every step is NULL-safe. */
  srv_stop(f->s);
  api_ctx_free(f->api);
  if (!f->dir[0]) {
    memset(f, 0, sizeof *f);
    return;
  }
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    snprintf(path, sizeof path, "%s/%s", f->dir, names[i]);
    unlink(path);
  }
  rmdir(f->web);
  rmdir(f->dir);
  memset(f, 0, sizeof *f);
}

cJSON *fixture_descriptor(const char *name) {
  char *text = NULL;
  size_t len = 0;
  svc_err err;
  if (svc_read_file(CDPLAN_SOURCE_DIR "/data/hardware/h200.json", 1 << 20, &text, &len, &err) < 0)
    return NULL;
  cJSON *doc = cJSON_ParseWithLength(text, len);
  free(text);
  if (doc) cJSON_ReplaceItemInObjectCaseSensitive(doc, "name", cJSON_CreateString(name));
  return doc;
}

char *fixture_print(const cJSON *doc) { return cJSON_PrintUnformatted(doc); }

int fixture_get(const http_fixture *f, const char *path, http_resp *out) {
  return http_request(f->port, "GET", path, NULL, NULL, 0, out);
}

int fixture_send(const http_fixture *f, const char *method, const char *path, const char *body,
                 const char *auth_token, http_resp *out) {
  char auth[256];
  const char *headers[3] = {"Content-Type: application/json", NULL, NULL};
  if (auth_token) {
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", auth_token);
    headers[1] = auth;
  }
  return http_request(f->port, method, path, headers, body, body ? strlen(body) : 0, out);
}

cJSON *fixture_json(const http_resp *r) {
  return r->body ? cJSON_ParseWithLength(r->body, r->body_len) : NULL;
}

static const char *err_member(const cJSON *doc, const char *key) {
  const cJSON *e = cJSON_GetObjectItemCaseSensitive(doc, "error");
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, key);
  return cJSON_IsString(v) ? v->valuestring : "";
}

const char *fixture_err_code(const cJSON *doc) { return err_member(doc, "code"); }

const char *fixture_err_field(const cJSON *doc) { return err_member(doc, "field"); }
