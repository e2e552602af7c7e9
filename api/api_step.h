/* api/step: POST /v1/step and `cdplan step` -- a workload and a recipe in,
 * the predicted step time, peak memory and their breakdowns out -- plus
 * the workload / recipe decoders the planner reuses and the loader of
 * whole-step measurement files (data/measurements/<hw>/dlrm_step.json).
 *
 * Ownership: a decoded cost_workload points at a tables array the decoder
 * malloc'd; api_workload_dispose frees it (NULL-safe, idempotent).
 */
#ifndef CDPLAN_API_STEP_H
#define CDPLAN_API_STEP_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "api/api.h"
#include "costmodel/step.h"

#define API_STEP_MAX_TABLES 100000       /* entries of workload.tables */
#define API_STEP_MAX_TABLE_COUNT 1000000 /* tables in total (counts summed) */

/* POST /v1/step: {"hardware","workload","recipe","calibration":"latest|none"}. */
int api_step(api_ctx *ctx, const char *body, size_t len, char **out, svc_err *err);

/* Decode and validate a workload object found at JSON path `path`
 * ("workload"); errors name the field ("workload.tables[3].rows"). */
int api_workload_decode(const cJSON *doc, const char *path, cost_workload *out, svc_err *err);
void api_workload_dispose(cost_workload *w);
/* Decode a recipe (defaults from cost_recipe_init for absent fields). */
int api_recipe_decode(const cJSON *doc, const char *path, cost_recipe *out, svc_err *err);
/* Cross-field checks of a workload under a recipe on hw (shapes, dtypes
 * the hardware has, parallel sizes dividing the GPUs); errors name the
 * field. wpath/rpath are the paths of the two objects. */
int api_step_check(const cost_hw *hw, const cost_workload *w, const cost_recipe *r,
                   const char *wpath, const char *rpath, svc_err *err);
/* The step result as a JSON object (caller owns). */
cJSON *api_step_result_json(const cost_step_result *res, int kind);

/* Whole-step measurements: a dlrm_step.json document (top-level
 * "table_rows" or per-row "table_rows", rows with batch, precision, dim,
 * pooling, bottom, top, step_ms, peak_mem_bytes). */
typedef struct {
  cost_step_sample *s;
  size_t n;
  cost_table **blocks; /* backing stores the samples point into, one per file */
  size_t n_blocks;
} api_step_meas;
/* 1 when doc looks like a step-measurement file. */
int api_step_meas_detect(const cJSON *doc);
/* Load one file into a zeroed *out (api_step_meas_dispose frees it). */
int api_step_meas_load(const char *text, size_t len, api_step_meas *out, svc_err *err);
void api_step_meas_dispose(api_step_meas *m);
/* For cdplan calibrate: when text is a step-measurement file, append its
 * samples to *acc and set *is_step; other files leave *is_step 0. */
int api_step_meas_append(const char *text, size_t len, api_step_meas *acc, int *is_step,
                         svc_err *err);
/* Fit the framework profile to acc on hw (whose calib holds the op-level
 * parameters just fitted) and add its step_ entries to *calib; *report
 * gets the fit's report object (caller owns). */
int api_step_calibrate(const cost_hw *hw, const api_step_meas *acc, cost_calib *calib,
                       cJSON **report, svc_err *err);

#endif
