/* bench/published_gemm.h: what bench/published_gemm.c hands its side
 * reports (published_gemm_cdna3.c): the fit-only prediction of one row,
 * behind an opaque model pointer. */
#ifndef CDPLAN_BENCH_PUBLISHED_GEMM_H
#define CDPLAN_BENCH_PUBLISHED_GEMM_H

#include <stddef.h>

#include "api/api_published.h"

/* Throughput (TFLOP/s) the fit-only model gives row r's harness. */
typedef double (*pg_pred_fn)(const void *models, const api_pub_row *r);

/* The MI300X check rows one by one (source, dtype, shape, operand bytes
 * against the last-level cache, call time, signed error) and the
 * large-operand terms looked for after the misses were known, fitted on
 * CDNA fit rows and printed, not shipped (GEMM.md, h-amd9). */
void pg_cdna3_report(const api_pub_row *rows, size_t n, pg_pred_fn pred, const void *models,
                     const api_arch_fit *fits, int nfits);

#endif
