/* api/api_meas: the narrow, text-in / structs-out face of the step model's
 * decoders and of the whole-step measurement loader, for the benchmarks,
 * the tests and `cdplan calibrate` (issue 28: no public api header exposes
 * cJSON; the cJSON-typed decoders live in api/api_int.h).
 *
 * Ownership: a decoded cost_workload points at a tables array the decoder
 * malloc'd; api_workload_dispose frees it (NULL-safe, idempotent).
 */
#ifndef CDPLAN_API_MEAS_H
#define CDPLAN_API_MEAS_H

#include <stddef.h>

#include "common/common.h"
#include "costmodel/step.h"

/* One priced case from JSON text (len bytes, need not be NUL-terminated):
 * an object whose "workload" and "recipe" members are decoded as POST
 * /v1/step decodes them (errors name the field: "workload.tables[3].rows",
 * "recipe.tp"); other members are ignored. On failure *w holds nothing to
 * free. */
int api_meas_case_decode(const char *text, size_t len, cost_workload *w, cost_recipe *r,
                         svc_err *err);
void api_workload_dispose(cost_workload *w);

/* Whole-step measurements: a dlrm_step.json document (top-level
 * "table_rows" or per-row "table_rows", rows with batch, precision, dim,
 * pooling, bottom, top, step_ms, peak_mem_bytes). */
typedef struct {
  cost_step_sample *s;
  size_t n;
  cost_table **blocks; /* backing stores the samples point into, one per file */
  size_t n_blocks;
} api_step_meas;
/* Load one file into a zeroed *out (api_step_meas_dispose frees it). */
int api_step_meas_load(const char *text, size_t len, api_step_meas *out, svc_err *err);
void api_step_meas_dispose(api_step_meas *m);
/* For cdplan calibrate: when text is a step-measurement file, append its
 * samples to *acc and set *is_step; other files leave *is_step 0. */
int api_step_meas_append(const char *text, size_t len, api_step_meas *acc, int *is_step,
                         svc_err *err);

#endif
