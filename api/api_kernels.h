/* api/kernels: zero-warmup GEMM kernel selection (POST /v1/kernels/select,
 * `cdplan kernels select`). Same conventions as api/api.h: the request as
 * bytes, the response as a malloc'd JSON string in *out (caller frees), or
 * a negative svc_code with err naming the offending field. */
#ifndef CDPLAN_API_KERNELS_H
#define CDPLAN_API_KERNELS_H

#include <stddef.h>

#include "api/api.h"

/* Request: {"hardware":"h200", "problems":[{"m","n","k","dtype"}] (1..64),
 *   "candidates":[{"block_m","block_n","block_k","num_warps"?,"num_stages"?,
 *   "group_m"?}] (optional, 1..1024; default: the architecture's space),
 *   "calibration":"latest"|"none" (optional), "top":N (optional, 1..1024,
 *   ranked entries returned per problem, default all)}.
 * Response: {"hardware","calibration","results":[{"m","n","k","dtype",
 *   "chosen":{config,"ms",...}, "ranked":[{config,"ms",...}...],
 *   "infeasible":[{config,"reason"}...], "triton":"[triton.Config(...), ...]"}]},
 *   one result per problem in order. A problem with no feasible candidate
 *   has "chosen": null and "triton": "[]". */
int api_kernels_select(api_ctx *ctx, const char *body, size_t len, char **out, svc_err *err);
/* The answer in one of the CLI's formats (`--format`), as a malloc'd text
 * in *out (caller frees): API_KERNELS_JSON the document above (no newline
 * at its end); API_KERNELS_TRITON per problem a line "# m=M n=N k=K
 * dtype=D" and its "triton" list; API_KERNELS_TRITON_HEURISTIC a Python
 * module with each problem's chosen config (config_for(M, N, K, dtype),
 * heuristics(dtype)), shapes without one left out (api/kernels_format.c). */
typedef enum {
  API_KERNELS_JSON = 0,
  API_KERNELS_TRITON,
  API_KERNELS_TRITON_HEURISTIC
} api_kernels_format;
int api_kernels_select_as(api_ctx *ctx, const char *body, size_t len, int format, char **out,
                          svc_err *err);

#endif
