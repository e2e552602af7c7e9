/* api/kernels_format.c: the kernel selection's answer as Triton source
 * (`cdplan kernels select --format triton|triton-heuristic`): per problem,
 * a comment line naming it and its paste-ready triton.Config list; or a
 * Python module with the one chosen config per shape (config_for(M, N, K,
 * dtype) and heuristics(dtype) for @triton.heuristics, no autotuning).
 * Read from the reply's document, so that the text says what the JSON
 * answer says.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#include "api/api_kernels.h"

static double num(const cJSON *o, const char *k) {
  return cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, k));
}

/* The "triton" text of each result, one problem per block. */
static void emit_triton(FILE *f, const cJSON *doc) {
  const cJSON *results = cJSON_GetObjectItemCaseSensitive(doc, "results"), *r;
  cJSON_ArrayForEach(r, results) {
    const cJSON *tx = cJSON_GetObjectItemCaseSensitive(r, "triton");
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(r, "dtype");
    fprintf(f, "# m=%.0f n=%.0f k=%.0f dtype=%s\n%s\n", num(r, "m"), num(r, "n"), num(r, "k"),
            cJSON_IsString(dt) ? dt->valuestring : "?",
            cJSON_IsString(tx) ? tx->valuestring : "[]");
  }
}

/* Python's name for a meta-parameter a heuristic can set (launch options
 * num_warps and num_stages are passed at launch instead). */
static const char *const meta_names[] = {"BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K",
                                         "GROUP_SIZE_M"};

/* The chosen config per shape as a Python module. */
static void emit_heuristic(FILE *f, const cJSON *doc) {
  const cJSON *results = cJSON_GetObjectItemCaseSensitive(doc, "results"), *r;
  const char *hw = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(doc, "hardware"));
  fprintf(f,
          "# Triton GEMM configs chosen by cdplan's kernel model for %s, one per shape, no\n"
          "# autotuning (`cdplan kernels select --format triton-heuristic`). Shapes without a\n"
          "# feasible config are left out.\n"
          "import triton\n\nCONFIGS = {\n",
          hw ? hw : "?");
  cJSON_ArrayForEach(r, results) {
    const char *cfg = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "triton_config"));
    const char *dt = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "dtype"));
    if (!cfg || !dt) continue;
    fprintf(f, "    (%.0f, %.0f, %.0f, \"%s\"): %s,\n", num(r, "m"), num(r, "n"), num(r, "k"), dt,
            cfg);
  }
  fprintf(f,
          "}\n\n\ndef config_for(M, N, K, dtype):\n"
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
    fprintf(f, "%s\"%s\"", i ? ", " : "", meta_names[i]);
  fprintf(f, ")\n    }\n");
}

int api_kernels_select_as(api_ctx *ctx, const char *body, size_t len, int format, char **out,
                          svc_err *err) {
  cJSON *doc = NULL;
  char *text = NULL;
  size_t size = 0;
  FILE *f = NULL;
  int rc;
  *out = NULL;
  if (format == API_KERNELS_JSON) return api_kernels_select(ctx, body, len, out, err);
  if (format != API_KERNELS_TRITON && format != API_KERNELS_TRITON_HEURISTIC)
    return svc_err_set(err, SVC_BAD_ARGS, "format", "no such kernel answer format (%d)", format);
  if ((rc = api_kernels_select_doc(ctx, body, len, &doc, err))) return rc;
  if (!(f = open_memstream(&text, &size))) {
    rc = svc_err_set(err, SVC_NOMEM, "", NULL);
    goto cleanup;
  }
  if (format == API_KERNELS_TRITON)
    emit_triton(f, doc);
  else
    emit_heuristic(f, doc);
  if (fclose(f) != 0 || !text) {
    rc = svc_err_set(err, SVC_NOMEM, "", NULL);
    free(text);
    text = NULL;
  }
  *out = text;
cleanup:
  cJSON_Delete(doc);
  return rc;
}
