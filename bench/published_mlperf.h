/* bench/published_mlperf.h: the MLPerf DLRM-DCNv2 half of
 * bench/published_accuracy (published_mlperf.c). */
#ifndef CDPLAN_BENCH_PUBLISHED_MLPERF_H
#define CDPLAN_BENCH_PUBLISHED_MLPERF_H

#include "api/api.h"

/* Prices every row of rows_path (published MLPerf throughputs) with the
 * model of model_path through api_step and prints the errors and the
 * ordering of systems. 0, or -1 when a file cannot be read. */
int mlperf_score(api_ctx *ctx, const char *rows_path, const char *model_path);

#endif
