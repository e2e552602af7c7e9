/* api/step: POST /v1/step and `cdplan step` -- a workload and a recipe in,
 * the predicted step time, peak memory and their breakdowns out -- and the
 * cross-field checks the planner reuses. The text-in decoders and the
 * whole-step measurement loader are in api/api_meas.h; the cJSON-typed
 * decoders are the api's own (api/api_int.h).
 */
#ifndef CDPLAN_API_STEP_H
#define CDPLAN_API_STEP_H

#include <stddef.h>

#include "api/api.h"
#include "api/api_meas.h"
#include "costmodel/step.h"

#define API_STEP_MAX_TABLES 100000       /* entries of workload.tables */
#define API_STEP_MAX_TABLE_COUNT 1000000 /* tables in total (counts summed) */

/* POST /v1/step: {"hardware","workload","recipe","calibration":"latest|none"}. */
int api_step(api_ctx *ctx, const char *body, size_t len, char **out, svc_err *err);

/* Cross-field checks of a workload under a recipe on hw (shapes, dtypes
 * the hardware has, parallel sizes dividing the GPUs); errors name the
 * field. wpath/rpath are the paths of the two objects. */
int api_step_check(const cost_hw *hw, const cost_workload *w, const cost_recipe *r,
                   const char *wpath, const char *rpath, svc_err *err);

/* A recipe's host mini step (host_mini_batch, host_mini_step_ms: the
 * runner's host_mini) turned into its host_op_us on hw for w
 * (cost_step_host_mini); nothing to do without one. *clamped (may be NULL)
 * says the mini step lay outside what 0.5-60 us per op give. Errors name
 * rpath.host_mini_step_ms. */
int api_recipe_host_mini(const cost_hw *hw, const cost_workload *w, cost_recipe *r,
                         const char *rpath, int *clamped, svc_err *err);

#endif
