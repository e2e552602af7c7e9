/* Shared fixtures of the step tests (tests/step/test_step*.c):
 * an api_ctx on an in-memory database with one catalog descriptor, the
 * 26-table Criteo DLRM and a Llama 3 builder the workloads start from, cost_step
 * that must answer, and POST /v1/step's refusals checked as a table of
 * one-place edits of a good request. */
#ifndef CDPLAN_TESTS_STEP_FIXTURE_H
#define CDPLAN_TESTS_STEP_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "api/api.h"
#include "api/api_hw.h"
#include "api/api_step.h"

/* *ctx on ":memory:" and *hw the catalog descriptor hw_id; fails the test
 * otherwise. The caller frees *ctx with api_ctx_free. */
void stepfx_open(api_ctx **ctx, const char *hw_id, cost_hw *hw);

/* The Criteo 26-table DLRM (data/measurements/h200/dlrm_step.json's
 * shape): dim 128, pooling 1, count 1, sharding and placement left to the
 * planner (-1), its five large tables of big_rows rows each; 13 dense
 * features, bottom 512-256-128, top 1024-1024-512-256-1, dot interaction.
 * tabs (26 entries, caller-owned) backs w->dlrm.tables. */
void stepfx_criteo26(cost_workload *w, cost_table *tabs, int64_t big_rows);

/* A Llama 3 family transformer (Meta's config.json): layers x hidden with
 * heads query heads, 8 KV heads, SwiGLU of width ffn, sequence 8192,
 * vocabulary 128256, flash attention, RMSNorm, rotary positions, fused
 * loss. w is zeroed first. */
void stepfx_llama3(cost_workload *w, int64_t layers, int64_t hidden, int64_t heads, int64_t ffn);

/* cost_step on hw that must answer with a positive step time. */
cost_step_result stepfx_step(const cost_hw *hw, const cost_workload *w, const cost_recipe *r);

/* good with its first from replaced by to (a static buffer). */
char *stepfx_edit(const char *good, const char *from, const char *to);

/* One refusal: good edited from -> to, refused with -code naming field. */
typedef struct {
  const char *from, *to;
  int code;
  const char *field;
} stepfx_bad;

/* api_step refuses body with -code naming field, and answers nothing. */
void stepfx_expect_error(api_ctx *ctx, const char *body, int code, const char *field);
/* Each of the n edits of good, through stepfx_expect_error. */
void stepfx_expect_errors(api_ctx *ctx, const char *good, const stepfx_bad *bad, size_t n);

#endif
