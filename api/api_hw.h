/* api/hw: hardware descriptors as the cost model's cost_hw, decoded by the
 * service's one decoder (api/hardware.c: its checks, the vendor and the
 * usable-HBM defaults), for callers that price ops themselves -- the
 * benchmarks, and the api's own operations.
 */
#ifndef CDPLAN_API_HW_H
#define CDPLAN_API_HW_H

#include <stddef.h>

#include "api/api.h"
#include "costmodel/costmodel.h"

/* The named hardware from the catalog with its latest calibration
 * (calibration left zeroed when use_calibration is 0). 404 when unknown.
 * Cached; safe from many threads. */
int api_hw_lookup(api_ctx *ctx, const char *name, int use_calibration, cost_hw *out, svc_err *err);

/* A descriptor document (text, len bytes, as POST /v1/hardware takes it)
 * decoded and checked into *out, with no calibration; 400 naming the field
 * when it is not a valid descriptor. */
int api_hw_parse(const char *text, size_t len, cost_hw *out, svc_err *err);

#endif
