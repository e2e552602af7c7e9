/* api: the service layer both front ends (server/, cli/) call. It owns the
 * JSON <-> struct codecs and input validation, and one function per
 * operation. Every operation takes the request body as bytes (not
 * NUL-terminated; NULL/0 for none) and returns the response document as a
 * malloc'd NUL-terminated JSON string in *out (caller frees), or a negative
 * svc_code with err filled (field names the offending JSON path).
 *
 * Thread safety: one api_ctx may be shared by many threads; every
 * operation is safe to call concurrently.
 */
#ifndef CDPLAN_API_H
#define CDPLAN_API_H

#include <stddef.h>

#include "common/common.h"

typedef struct api_ctx api_ctx;

/* A reply for a front end that needs more than its bytes (a Location
 * header, a poll loop): the *_reply variants fill one instead of *out, so
 * that nobody parses the printed document back. json is the document the
 * plain function prints (malloc'd; api_reply_dispose frees it); id names
 * what it describes -- a hardware name, a plan id, a validation job id in
 * decimal -- or is "" when none; state is a validation job's state
 * ("queued", "running", ...), "" otherwise. Zero it before the call. */
typedef struct {
  char *json;
  char id[64];
  char state[16];
} api_reply;
void api_reply_dispose(api_reply *r);
/* Whether a validation job in this state may still change (queued, running). */
int api_reply_active(const api_reply *r);

#define API_MAX_BODY (1024 * 1024) /* bytes; larger bodies are 413 */

/* Open (creating and seeding from the compiled-in catalog when new) the
 * database at db_path (":memory:" allowed). */
int api_ctx_new(api_ctx **out, const char *db_path, svc_err *err);
void api_ctx_free(api_ctx *ctx);

/* GET /v1/hardware[?vendor=V]: {"hardware":[descriptor...]} */
int api_hw_list(api_ctx *ctx, const char *vendor, char **out, svc_err *err);
/* GET /v1/hardware/{name}: the descriptor; 404 when unknown. */
int api_hw_get(api_ctx *ctx, const char *name, char **out, svc_err *err);
/* POST /v1/hardware: validated descriptor stored; 409 when the name exists.
 * Returns the stored descriptor. */
int api_hw_create(api_ctx *ctx, const char *body, size_t len, char **out, svc_err *err);
/* The same; r->id is the stored descriptor's name. */
int api_hw_create_reply(api_ctx *ctx, const char *body, size_t len, api_reply *r, svc_err *err);
/* PUT /v1/hardware/{name}: replace (or create) the descriptor; the body's
 * name must match the path's. *created set to 1 when it was new. */
int api_hw_replace(api_ctx *ctx, const char *name, const char *body, size_t len, int *created,
                   char **out, svc_err *err);
/* DELETE /v1/hardware/{name}: 404 when unknown. */
int api_hw_delete(api_ctx *ctx, const char *name, svc_err *err);
/* Import every *.json descriptor of a directory (create or replace):
 * {"imported":[names]}. All or nothing. */
int api_hw_import_dir(api_ctx *ctx, const char *dir, char **out, svc_err *err);

/* POST /v1/estimate */
int api_estimate(api_ctx *ctx, const char *body, size_t len, char **out, svc_err *err);

/* The request body with its top-level "hardware" set to name, as text (the
 * CLI's --hw for a request it sends to a server); *out is malloc'd. */
int api_override_hardware(const char *body, size_t len, const char *name, char **out,
                          size_t *out_len, svc_err *err);
/* Every request that names hardware (estimate, kernels select, step, plan,
 * validation submit) answered through ctx from now on is read as naming
 * name instead: the CLI's --hw, applied after parsing. NULL: none. name is
 * checked when a request is read (400 "hardware" when not [a-z0-9._-]) and
 * must outlive ctx. Not for a context shared by threads (the server). */
void api_ctx_set_hardware(api_ctx *ctx, const char *name);

/* cdplan calibrate: fit the cost model for hardware hw to the measurement
 * files' contents (texts[i], lens[i], labelled by labels[i]), store a new
 * calibration version, and return the fit report. */
int api_calibrate(api_ctx *ctx, const char *hw, size_t n, const char *const *texts,
                  const size_t *lens, const char *const *labels, char **out, svc_err *err);

/* cdplan calibrate --host-probe: the host probe of a runner dlrm_step
 * result (text, len; label names it) stored in hardware hw's calibration as
 * a new version (step_host_op_us = COST_HOST_PROBE_K x the probe's
 * step_kernel_us, docs/step-model.md); *out the version's report. 400
 * naming host_probe.FIELD for a missing or bad figure. */
int api_calibrate_host(api_ctx *ctx, const char *hw, const char *text, size_t len,
                       const char *label, char **out, svc_err *err);

/* GET /healthz: {"status":"ok", "version":..., "hardware":N} */
int api_health(api_ctx *ctx, char **out, svc_err *err);

/* The error document {"error":{"code","message","field"}} (malloc'd). */
char *api_error_json(const svc_err *err);

const char *api_version(void);

#endif
