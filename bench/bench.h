/* bench/bench.h: what the step benchmark's files (step_accuracy.c,
 * step_transformer.c, step_uvm.c) share -- statistics, the loader of
 * whole-step measurement files, and each section's entry point -- on the
 * api's public headers only (hardware through api/api_hw.h, the service's
 * decoder). No globals: options travel as arguments.
 */
#ifndef CDPLAN_BENCH_H
#define CDPLAN_BENCH_H

#include "api/api_hw.h"
#include "api/api_step.h"

/* The median of v[0..n) (sorts v); the largest of v[0..n). */
double bench_median(double *v, int n);
double bench_max(const double *v, int n);

/* A whole-step measurement file into a zeroed *m: 0, or -1 with a message
 * on stderr. */
int bench_load_meas(const char *path, api_step_meas *m);

/* The sections of bench/step_accuracy: each prints its table and returns 0
 * or -1. breakdown: per-component ms under each row (--breakdown). */
int bench_transformers(api_ctx *ctx);
int bench_transformer_h200(const cost_hw *hw);     /* step_transformer.c, section (f) */
int bench_uvm(const cost_hw *lent, int breakdown); /* step_uvm.c, section (h) */
int bench_thousand(const cost_hw *hw);
int bench_dcn(api_ctx *ctx); /* step_dcn.c, section (i) */

#endif
