/* api/measure: measurement files -> cost samples for calibration and the
 * accuracy bench. Knows the formats of data/measurements/<hw>/ (gemm.json,
 * memory_ops.json) and rows in the estimate op schema with a measured "ms"
 * (what validation results carry). Files that hold no per-op timings
 * (ceilings.json, triton_configs.json, dlrm_step.json) are rejected with
 * a message that says so.
 */
#ifndef CDPLAN_API_MEASURE_H
#define CDPLAN_API_MEASURE_H

#include <stddef.h>

#include "common/common.h"
#include "costmodel/costmodel.h"
#include "costmodel/step.h"

#define API_MEASURE_MAX_ROWS 200000

/* Parse json_text (len bytes, need not be NUL-terminated). On success
 * *out is a malloc'd array of *n samples (caller frees; an embedding row
 * gives two: fwd and fwd_bwd). On failure returns a negative svc_code,
 * *out is NULL and err names the offending field ("rows[12].dtype"). */
int api_measure_load(const char *json_text, size_t len, cost_sample **out, size_t *n, svc_err *err);

/* The same, also returning the host-mapped embedding rows of a
 * memory_ops file ({op: "uvm_embedding_bag_sum", rows, dim, dtype, batch,
 * pooling, fwd_ms, fwd_bwd_ms}) as cost_uvm_samples in one pass: *uvm
 * malloc'd, NULL and *nu = 0 when there are none. With uvm NULL those rows
 * are skipped, as are the host_copy rows always. */
int api_measure_load_all(const char *json_text, size_t len, cost_sample **out, size_t *n,
                         cost_uvm_sample **uvm, size_t *nu, svc_err *err);

/* Why a measurement file holds no cost samples at all -- a file of device
 * ceilings, a Triton tile-config sweep, Triton compile facts -- as a short
 * static text; NULL when it may hold samples (then load it, which checks
 * every row). `cdplan calibrate DIR/ALL.json` skips such files with this
 * note instead of failing on them. */
const char *api_measure_not_samples(const char *json_text, size_t len);

/* A flash-attention sweep (data/measurements/h200-transformer/
 * attention_*.json: {"kind": "attention_sweep", "rows": [{b, heads,
 * kv_heads, s, hd, fwd_ms, fwd_bwd_ms}]}) -> *out malloc'd, *n rows;
 * returns 1 with *out NULL when the text is not such a sweep, 0 on
 * success, a negative svc_code naming the field on a bad row. */
int api_flash_load(const char *json_text, size_t len, cost_flash_sample **out, size_t *n,
                   svc_err *err);

#endif
