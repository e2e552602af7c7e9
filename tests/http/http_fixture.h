/* The transport tests' fixture: a real api_ctx on a fresh SQLite file in
 * a private temporary directory (or, under the _pg tests, a fresh
 * database of the throw-away PostgreSQL cluster: tests/pg), a real server on 127.0.0.1 port 0, a
 * small dashboard web root, and helpers to build request bodies. */
#ifndef CDPLAN_TESTS_HTTP_FIXTURE_H
#define CDPLAN_TESTS_HTTP_FIXTURE_H

#include <cjson/cJSON.h>

#include "http_client.h"
#include "server/server.h"

typedef struct {
  char dir[64]; /* mkdtemp-made: db, web/, outside.txt */
  char db[256]; /* the SQLite file, or the PostgreSQL database's URI */
  char web[96];
  api_ctx *api;
  srv *s;
  int port;
} http_fixture;

/* token NULL: writes open. Returns 0 or -1 (with the reason on stderr). */
int fixture_start(http_fixture *f, const char *token);
/* The same with the token, threads and limits of base (its host, port,
 * web root and API document are the fixture's). */
int fixture_start_with(http_fixture *f, const srv_config *base);
void fixture_stop(http_fixture *f);

/* data/hardware/h200.json renamed to name: a valid descriptor body. */
cJSON *fixture_descriptor(const char *name);
/* Print doc as a body (malloc'd). */
char *fixture_print(const cJSON *doc);

/* Shorthands over http_request with JSON content. */
int fixture_get(const http_fixture *f, const char *path, http_resp *out);
int fixture_send(const http_fixture *f, const char *method, const char *path, const char *body,
                 const char *auth_token, http_resp *out);
/* The response body parsed (NULL when it is not JSON); caller deletes. */
cJSON *fixture_json(const http_resp *r);
/* error.code and error.field of an error document, or "" when absent. */
const char *fixture_err_code(const cJSON *doc);
const char *fixture_err_field(const cJSON *doc);

#endif
