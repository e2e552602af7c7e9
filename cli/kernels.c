/* cdplan kernels select FILE|- [--hw NAME] [--format json|triton|triton-heuristic]
 * [--db PATH]: the request of POST /v1/kernels/select from a file or stdin,
 * answered by api_kernels_select. --format triton prints, per problem, a
 * comment line naming the problem and its paste-ready triton.Config list
 * instead of the JSON document; --format triton-heuristic a Python module
 * with one chosen config per shape (no autotuning: config_for(M, N, K,
 * dtype), and heuristics(dtype) for @triton.heuristics). Parses its own
 * options (main.c lists it beside serve). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_kernels.h"
#include "cli/cli.h"

static int bad_args(const char *msg, const char *arg) {
  svc_err err;
  svc_err_set(&err, SVC_BAD_ARGS, "", "%s%s (see cdplan kernels select --help)", msg, arg);
  return cli_fail(&err);
}

/* The "triton" text of each result, one problem per block. */
static int emit_triton(const cJSON *doc) {
  const cJSON *results = cJSON_GetObjectItemCaseSensitive(doc, "results"), *r;
  cJSON_ArrayForEach(r, results) {
    const cJSON *tx = cJSON_GetObjectItemCaseSensitive(r, "triton");
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(r, "dtype");
    printf("# m=%.0f n=%.0f k=%.0f dtype=%s\n%s\n",
           cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(r, "m")),
           cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(r, "n")),
           cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(r, "k")),
           cJSON_IsString(dt) ? dt->valuestring : "?", cJSON_IsString(tx) ? tx->valuestring : "[]");
  }
  return 0;
}

/* Python's name for a meta-parameter a heuristic can set (launch options
 * num_warps and num_stages are passed at launch instead). */
static const char *const meta_names[] = {"BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K",
                                         "GROUP_SIZE_M"};

/* The chosen config per shape as a Python module. */
static int emit_heuristic(const cJSON *doc) {
  const cJSON *results = cJSON_GetObjectItemCaseSensitive(doc, "results"), *r;
  const char *hw = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(doc, "hardware"));
  printf("# Triton GEMM configs chosen by cdplan's kernel model for %s, one per shape, no\n"
         "# autotuning (`cdplan kernels select --format triton-heuristic`). Shapes without a\n"
         "# feasible config are left out.\n"
         "import triton\n\nCONFIGS = {\n",
         hw ? hw : "?");
  cJSON_ArrayForEach(r, results) {
    const char *cfg = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "triton_config"));
    const char *dt = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "dtype"));
    if (!cfg || !dt) continue;
    printf("    (%.0f, %.0f, %.0f, \"%s\"): %s,\n",
           cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(r, "m")),
           cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(r, "n")),
           cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(r, "k")), dt, cfg);
  }
  printf("}\n\n\ndef config_for(M, N, K, dtype):\n"
         "    \"\"\"The chosen triton.Config of a shape; launch with **cfg.kwargs,\n"
         "    num_warps=cfg.num_warps, num_stages=cfg.num_stages. KeyError: not planned.\"\"\"\n"
         "    return CONFIGS[(M, N, K, dtype)]\n\n\n"
         "def heuristics(dtype):\n"
         "    \"\"\"For @triton.heuristics(heuristics(\"bf16\")) on a kernel with M, N, K "
         "args.\"\"\"\n"
         "    return {\n        name: (lambda args, _n=name: config_for(args[\"M\"], args[\"N\"], "
         "args[\"K\"], dtype).kwargs[_n])\n"
         "        for name in (");
  for (size_t i = 0; i < sizeof meta_names / sizeof meta_names[0]; i++)
    printf("%s\"%s\"", i ? ", " : "", meta_names[i]);
  printf(")\n    }\n");
  return fflush(stdout) == 0 ? 0 : 3;
}

int cli_kernels_select(cli_opts *o) {
  const char *file = NULL, *format = "json";
  api_ctx *ctx = NULL;
  char *in = NULL, *out = NULL;
  cJSON *doc = NULL;
  size_t len = 0;
  svc_err err;
  int rc;
  svc_err_clear(&err);
  for (int i = 0; i < o->argc; i++) {
    const char *a = o->argv[i];
    if (!strcmp(a, "--hw") || !strcmp(a, "--db") || !strcmp(a, "--format")) {
      if (i + 1 >= o->argc) return bad_args("a value is needed after ", a);
      if (!strcmp(a, "--hw"))
        o->hw = o->argv[++i];
      else if (!strcmp(a, "--db"))
        o->db = o->argv[++i];
      else
        format = o->argv[++i];
    } else if (a[0] == '-' && a[1] != '\0') {
      return bad_args("unknown option ", a);
    } else if (file) {
      return bad_args("expected one request file or - for stdin, got also ", a);
    } else {
      file = a;
    }
  }
  if (!file) return bad_args("expected one request file or - for stdin", "");
  if (strcmp(format, "json") && strcmp(format, "triton") && strcmp(format, "triton-heuristic"))
    return bad_args("--format must be json, triton or triton-heuristic, not ", format);
  if ((rc = cli_read_input(file, &in, &len, &err))) goto cleanup;
  if ((rc = cli_open(o, &ctx, &err))) goto cleanup;
  if (!strcmp(format, "json"))
    rc = api_kernels_select(ctx, in, len, &out, &err);
  else
    rc = api_kernels_select_doc(ctx, in, len, &doc, &err);
cleanup:
  free(in);
  api_ctx_free(ctx);
  if (rc) return cli_fail(&err);
  if (!doc) return cli_emit(out);
  rc = strcmp(format, "triton") ? emit_heuristic(doc) : emit_triton(doc);
  cJSON_Delete(doc);
  return rc;
}
