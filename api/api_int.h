/* api internals shared by the api/ files: the context body, validated JSON
 * field readers, and hardware lookup for the operations that price ops.
 * Not for use outside api/. */
#ifndef CDPLAN_API_INT_H
#define CDPLAN_API_INT_H

#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "api/api.h"
#include "api/api_hw.h"
#include "api/api_meas.h"
#include "api/api_plan.h"
#include "api/api_published.h"
#include "costmodel/costmodel.h"
#include "costmodel/step.h"
#include "hwdb/hwdb.h"
#include "validate/validate.h"

struct api_ctx {
  hwdb *db;
  pthread_mutex_t cache_lock;
  struct api_hw_cache *cache; /* decoded descriptors + latest calibration, by name */
  unsigned long generation;   /* bumped on every catalog or calibration write */
  /* job following (api/job_follow.c): the last hwdb_follow_jobs answer and
   * when it was read (0: never) */
  atomic_int follow_state;
  atomic_int_least64_t follow_at_ms;
  const char *hw_override; /* api_ctx_set_hardware: the CLI's --hw, or NULL */
};

/* Parse a request body (bounded, cJSON_ParseWithLength); 400 bad_json with
 * the byte offset on failure; the top level must be an object. */
int api_parse_body(const char *body, size_t len, cJSON **out, svc_err *err);
/* api_parse_body for a request that names its hardware: the context's
 * override (api_ctx_set_hardware), if any, replaces the top-level
 * "hardware" (400 "hardware" when the override is no hardware name). */
int api_parse_request(api_ctx *ctx, const char *body, size_t len, cJSON **out, svc_err *err);
/* The same two with a limit of max bytes instead of API_MAX_BODY (a local
 * caller's raised limit, api_val_opts.max_body). */
int api_parse_body_max(const char *body, size_t len, size_t max, cJSON **out, svc_err *err);
int api_parse_request_max(api_ctx *ctx, const char *body, size_t len, size_t max, cJSON **out,
                          svc_err *err);
/* The opening of a request that names hardware and a calibration (estimate,
 * step): api_parse_request, only the members in top, a "hardware" name and
 * "calibration" latest|none (*calib keeps its default when absent). On
 * failure *req is freed and NULL. */
int api_request_hw(api_ctx *ctx, const char *body, size_t len, const char *const *top, cJSON **req,
                   const char **hw, const char **calib, svc_err *err);
/* Print and free nothing: malloc'd compact JSON or NULL on OOM. */
char *api_print(const cJSON *doc);

/* Field readers. path is the JSON path of obj ("" for the top level, e.g.
 * "ops[3]"); the error's field becomes path.key. A missing optional field
 * leaves *out untouched and returns 0. Numbers must be finite and within
 * [min, max]; integers must have no fractional part. */
int api_get_int(const cJSON *obj, const char *key, const char *path, int required, int64_t min,
                int64_t max, int64_t *out, svc_err *err);
int api_get_num(const cJSON *obj, const char *key, const char *path, int required, double min,
                double max, double *out, svc_err *err);
/* Strings: at most maxlen bytes; charset NULL = any printable. */
int api_get_str(const cJSON *obj, const char *key, const char *path, int required, size_t maxlen,
                const char *charset, const char **out, svc_err *err);
/* Reject members of obj not named in allowed (NULL-terminated). */
int api_check_fields(const cJSON *obj, const char *const *allowed, const char *path, svc_err *err);
/* Build "path.key" or "path[i]" into buf. */
const char *api_path(char *buf, size_t size, const char *path, const char *key);
const char *api_path_index(char *buf, size_t size, const char *path, const char *key, int index);

/* A hardware name: 1..63 bytes of [a-z0-9._-], starting with [a-z0-9]. */
int api_valid_name(const char *name);

/* Decode + validate a hardware descriptor document into a cost_hw. */
int api_hw_decode(const cJSON *doc, cost_hw *out, svc_err *err);

/* Accelerator clocks (descriptors, published rows) lie in this range: a
 * figure outside it is a mistake, most often GHz given for MHz. */
#define API_CLOCK_MIN_MHZ 100
#define API_CLOCK_MAX_MHZ 5000

/* 0 when mhz is a plausible clock, else a 400 naming field (which says so
 * when the figure looks like GHz). */
int api_clock_check(double mhz, const char *field, svc_err *err);
/* What a descriptor's figures rest on, lowest first: datasheet only, its
 * architecture's calibration on published rows, its own measurements. */
enum { API_CALIB_DATASHEET = 0, API_CALIB_ARCH = 1, API_CALIB_OWN = 2 };
int api_calib_level(const cost_hw *hw);
/* The named hardware at a calibration level: DATASHEET none, ARCH its
 * architecture's (datasheet where the arch has none), OWN the latest
 * (its own, else its architecture's). */
int api_hw_lookup_level(api_ctx *ctx, const char *name, int level, cost_hw *out, svc_err *err);
/* The fabric members a request's cluster object may carry (a user's own
 * network: scaleout_bandwidth_bytes_per_s per GPU, scaleup_bandwidth_
 * bytes_per_s, in_switch_reduction) applied over hw; names[] gets them
 * for api_check_fields. Absent members leave hw as it is. */
extern const char *const api_fabric_fields[];
/* How sure answers on hw are (provenance.c): what its figures rest on and
 * the held-out error band per op class. Caller owns the object. */
cJSON *api_provenance_json(const cost_hw *hw);
/* How sure a ratio between two accelerators' predictions is. */
cJSON *api_ratio_confidence_json(const cost_hw *from, const cost_hw *to);
int api_fabric_decode(const cJSON *cluster, const char *path, cost_hw *hw, svc_err *err);
/* Store a new calibration version for hw; *version gets its number.
 * report_json (may be NULL) is kept beside it. */
/* Host-probe versions (api/calibrate_host.c): whether c holds only the
 * host figures (step_host_op_us and its probe's), and those of host copied
 * into dst (-1 when dst is full). */
int api_calib_host_only(const cost_calib *c);
int api_calib_host_merge(cost_calib *dst, const cost_calib *host);
/* The same test on a stored version's params object (GET hardware's
 * calibration member says host_only). */
int api_calib_host_only_json(const cJSON *params);
int api_calib_store(api_ctx *ctx, const char *hw, const cost_calib *calib, const char *report_json,
                    int *version, svc_err *err);
/* The same per architecture (hwdb arch_calibration): the calibration every
 * accelerator of that arch without one of its own uses. */
int api_arch_calib_store(api_ctx *ctx, const char *arch, const cost_calib *calib,
                         const char *report_json, int *version, svc_err *err);
/* Validate and store n descriptor texts in one transaction (all or
 * nothing); labels name each text in error messages; the stored names are
 * appended to names_out when not NULL. */
int api_hw_store_many(api_ctx *ctx, size_t n, const char *const *texts, const size_t *lens,
                      const char *const *labels, cJSON *names_out, svc_err *err);
/* The catalog compiled into the binary (every JSON file of data/hardware). */
typedef struct {
  const char *name;
  const char *text;
  size_t len;
} embed_file;
extern const embed_file api_catalog_files[];
/* The files of data/calibration/: the shipped calibrations, seeded with the catalog. */
extern const embed_file api_calibration_files[];

/* Forget cached descriptors (after writes). */
void api_cache_invalidate(api_ctx *ctx);

/* Plan validations (plan_validate.c): the "validation" member of a stored
 * plan (NULL in *out when it has none); the jobs are polled first. */
int api_plan_validation_json(api_ctx *ctx, const char *plan_id, cJSON **out, svc_err *err);
/* Whether the device a runner reported ({"name","memory_bytes"|"mem_bytes",
 * "compute_units"|"sms"}) is hw: the name family, the memory within 10 %
 * and the compute units. 1 yes, 0 no, -1 no device named; why says it. */
int api_device_check(const cost_hw *hw, const cJSON *dev, char *why, size_t size);
/* The step-level calibration from finished dlrm_step job (val_calibrate.c):
 * fitted on job (and its plan validation's other side), scored on the
 * other dlrm_step jobs of its hardware, stored as a new calibration
 * version; *out gets its report (caller owns). 409 naming device when a
 * fitted job ran on other hardware, 400 naming the row field of a bad row. */
int api_val_step_calibrate(api_ctx *ctx, const hwdb_job *job, cJSON **out, svc_err *err);
/* A finished dlrm_step job's whole-step rows that carry the runner's
 * host_mini, each re-priced at its machine's host (the mini route): *out
 * {"rows":[{label, host_mini_batch, host_mini_step_ms, measured_step_ms,
 * host_op_us, clamped, predicted_ms, rel_error} or {..., skipped}],
 * median_abs_rel_error, max_abs_rel_error, meaning}, or NULL when no row
 * has one. 400 naming the row field of a bad row. */
int api_val_step_at_host(api_ctx *ctx, const hwdb_job *job, cJSON **out, svc_err *err);
/* Poll validation job id against its backend (validations.c). */
int api_validation_poll_id(api_ctx *ctx, int64_t id, svc_err *err);

/* The Slurm placement members of a request (validations.c): gpu_type,
 * partition, account, qos, constraint, borrowed from doc; 400 naming one
 * with characters Slurm's names do not have. */
int api_slurm_opts(const cJSON *doc, val_slurm_opts *so, svc_err *err);

/* ---- the step model's JSON (api/workload.c, api/step.c) ----------------
 * Decode and validate a workload object found at JSON path `path`
 * ("workload"); errors name the field ("workload.tables[3].rows"). */
int api_workload_decode(const cJSON *doc, const char *path, cost_workload *out, svc_err *err);
/* The answer's dense_block object: its form, parameters, forward FLOPs and
 * (opaque form) the square layer that priced it. */
cJSON *api_dense_block_json(const cost_dlrm *d);
/* Decode a recipe (defaults from cost_recipe_init for absent fields). */
int api_recipe_decode(const cJSON *doc, const char *path, cost_recipe *out, svc_err *err);
/* The step result as a JSON object (caller owns). */
cJSON *api_step_result_json(const cost_step_result *res, int kind);
/* 1 when doc looks like a whole-step measurement file. */
int api_step_meas_detect(const cJSON *doc);
/* Fit the framework profile to acc on hw (whose calib holds the op-level
 * parameters just fitted) and add its step_ entries to *calib; *report
 * gets the fit's report object (caller owns). */
int api_step_calibrate(const cost_hw *hw, const api_step_meas *acc, cost_calib *calib,
                       cJSON **report, svc_err *err);

/* compare's "calibration_basis" (api/compare_basis.c): the calibration
 * each side rests on and, when they differ, the hardware share with both
 * at a like level (tuned: the tuned source's evaluation), with its band. */
int api_compare_basis(api_ctx *ctx, const plan_request *a, const plan_request *b,
                      const plan_eval *tuned, double hw_share, cJSON *doc, svc_err *err);

/* api_kernels_select's answer as a document (api/kernels_format.c reads
 * it): *out is the reply's root (caller frees with cJSON_Delete). */
int api_kernels_select_doc(api_ctx *ctx, const char *body, size_t len, cJSON **out, svc_err *err);

#endif
