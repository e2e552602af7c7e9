/* docs/openapi.yaml against the route table: every route (path pattern and
 * method) must be documented, and the document must describe no route the
 * server does not have. A line-level reader is enough: paths are the
 * two-space keys under "paths:", operations the four-space method keys. */
#include <ctype.h>
#include <stdio.h>
#include <strings.h>

#include "test_http_common.h"
#include "server/server_int.h"

#define MAX_OPS 128

typedef struct {
  char path[128];
  char method[16]; /* upper case */
} op;

static size_t read_ops(op *ops, size_t max) {
  static const char *const verbs[] = {"get",   "put",  "post",    "delete",
                                      "patch", "head", "options", "trace"};
  char line[512], path[128] = "";
  size_t n = 0;
  int in_paths = 0;
  FILE *fp = fopen(CDPLAN_SOURCE_DIR "/docs/openapi.yaml", "r");
  assert_non_null(fp);
  while (fgets(line, sizeof line, fp)) {
    line[strcspn(line, "\r\n")] = '\0';
    if (line[0] && line[0] != ' ' && line[0] != '#') {
      in_paths = strcmp(line, "paths:") == 0;
      continue;
    }
    if (!in_paths) continue;
    if (strncmp(line, "  ", 2) == 0 && line[2] != ' ' && line[2] != '#' && line[2]) {
      /* "  /v1/x/{y}:" or "  '/v1/x':" */
      const char *p = line + 2;
      if (*p == '"' || *p == '\'') p++;
      size_t len = strcspn(p, "\"':");
      assert_true(len < sizeof path);
      memcpy(path, p, len);
      path[len] = '\0';
    } else if (strncmp(line, "    ", 4) == 0 && isalpha((unsigned char)line[4])) {
      for (size_t v = 0; v < sizeof verbs / sizeof verbs[0]; v++) {
        size_t vl = strlen(verbs[v]);
        if (strncmp(line + 4, verbs[v], vl) == 0 && line[4 + vl] == ':') {
          assert_true(n < max);
          snprintf(ops[n].path, sizeof ops[n].path, "%s", path);
          for (size_t i = 0; i <= vl; i++)
            ops[n].method[i] = (char)toupper((unsigned char)verbs[v][i]);
          n++;
        }
      }
    }
  }
  fclose(fp);
  return n;
}

static void test_openapi__documents_every_route(void **state) {
  op ops[MAX_OPS];
  size_t nops = read_ops(ops, MAX_OPS), nroutes;
  const srv_route *rt = srv_routes(&nroutes);
  assert_true(nroutes > 0);
  for (size_t i = 0; i < nroutes; i++) {
    int found = 0;
    for (size_t j = 0; j < nops && !found; j++)
      found = strcmp(ops[j].path, rt[i].path) == 0 && strcmp(ops[j].method, rt[i].method) == 0;
    if (!found) print_error("docs/openapi.yaml lacks %s %s\n", rt[i].method, rt[i].path);
    assert_true(found);
  }
}

static void test_openapi__documents_no_missing_route(void **state) {
  op ops[MAX_OPS];
  size_t nops = read_ops(ops, MAX_OPS), nroutes;
  const srv_route *rt = srv_routes(&nroutes);
  assert_true(nops >= nroutes);
  for (size_t j = 0; j < nops; j++) {
    int found = 0;
    for (size_t i = 0; i < nroutes && !found; i++)
      found = strcmp(ops[j].path, rt[i].path) == 0 && strcmp(ops[j].method, rt[i].method) == 0;
    if (!found)
      print_error("docs/openapi.yaml documents %s %s, which the server lacks\n", ops[j].method,
                  ops[j].path);
    assert_true(found);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_openapi__documents_every_route),
      cmocka_unit_test(test_openapi__documents_no_missing_route),
  };
  return cmocka_run_group_tests_name("openapi", tests, NULL, NULL);
}
