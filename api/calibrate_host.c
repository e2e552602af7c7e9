/* cdplan calibrate --host-probe: the machine's host speed into its
 * hardware's calibration. A runner dlrm_step result carries the host probe
 * (validate/gpu/host_probe.py, result field host_probe); its step_kernel_us
 * gives the per-op host time the step model takes as a recipe's host_op_us
 * (COST_HOST_PROBE_K, docs/step-model.md "Host speed per machine"), stored
 * as step_host_op_us with the probe's figures riding along (no model reads
 * those) and the file, device and date in the version's report.
 *
 * What the version holds: an accelerator with a calibration of its own
 * gets it again with the host figure added (a new version; its fit is not
 * redone). One priced by its architecture's calibration, or by datasheet
 * figures, gets a version holding only the host figures: api/context.c
 * (load) then prices it as before, by the architecture, with the host
 * figures on top -- a host probe does not make an accelerator calibrated. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"

/* The parameters a host-probe version holds; a version holding nothing
 * else is host-only. */
static const char *const host_names[] = {"step_host_op_us", "step_host_probe_kernel_us",
                                         "step_host_probe_eager_us"};
#define N_HOST (sizeof host_names / sizeof host_names[0])

static int is_host_name(const char *name) {
  for (size_t i = 0; i < N_HOST; i++)
    if (!strcmp(name, host_names[i])) return 1;
  return 0;
}

int api_calib_host_only(const cost_calib *c) {
  if (c->n <= 0) return 0;
  for (int i = 0; i < c->n && i < COST_MAX_CALIB; i++)
    if (!is_host_name(c->names[i])) return 0;
  return 1;
}

int api_calib_host_only_json(const cJSON *params) {
  const cJSON *it;
  int n = 0;
  if (!cJSON_IsObject(params)) return 0;
  cJSON_ArrayForEach(it, params) {
    if (!is_host_name(it->string)) return 0;
    n++;
  }
  return n > 0;
}

int api_calib_host_merge(cost_calib *dst, const cost_calib *host) {
  for (int i = 0; i < host->n && i < COST_MAX_CALIB; i++)
    if (is_host_name(host->names[i]) && cost_calib_set(dst, host->names[i], host->values[i]))
      return -1;
  return 0;
}

/* The probe's figures: step_kernel_us required, eager_op_us optional (0
 * when absent). Bounds: the lent machines' probes gave 14-40 us a step
 * kernel and 9-22 us an eager op (data/measurements/h200-dcn-host); 2000
 * us is far past any host that trains, and keeps host_op_us inside the
 * recipe's own bound. */
static int read_probe(const cJSON *doc, double *kernel_us, double *eager_us, svc_err *err) {
  const cJSON *hp = cJSON_GetObjectItemCaseSensitive(doc, "host_probe");
  if (!hp || cJSON_IsNull(hp))
    return svc_err_set(err, SVC_BAD_FIELD, "host_probe",
                       "the file has no host_probe (a runner dlrm_step result has one)");
  if (!cJSON_IsObject(hp))
    return svc_err_set(err, SVC_BAD_FIELD, "host_probe", "host_probe must be an object");
  const cJSON *k = cJSON_GetObjectItemCaseSensitive(hp, "step_kernel_us");
  /* JSON has no NaN: a probe that failed writes null or a string */
  if (k && !cJSON_IsNumber(k))
    return svc_err_set(err, SVC_BAD_FIELD, "host_probe.step_kernel_us",
                       "host_probe.step_kernel_us must be a finite number of microseconds");
  int rc = api_get_num(hp, "step_kernel_us", "host_probe", 1, 0.01, 2000, kernel_us, err);
  if (rc) return rc;
  const cJSON *e = cJSON_GetObjectItemCaseSensitive(hp, "eager_op_us");
  *eager_us = 0;
  if (e && !cJSON_IsNull(e)) {
    if (!cJSON_IsNumber(e))
      return svc_err_set(err, SVC_BAD_FIELD, "host_probe.eager_op_us",
                         "host_probe.eager_op_us must be a finite number of microseconds");
    rc = api_get_num(hp, "eager_op_us", "host_probe", 0, 0.01, 2000, eager_us, err);
  }
  return rc;
}

static const char *str_or(const cJSON *o, const char *key, const char *dflt) {
  const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, key));
  return s && strlen(s) < 128 ? s : dflt;
}

int api_calibrate_host(api_ctx *ctx, const char *hwname, const char *text, size_t len,
                       const char *label, char **out, svc_err *err) {
  cJSON *doc = NULL, *rep = NULL;
  char *rep_text = NULL;
  cost_hw hw;
  cost_calib calib;
  double kernel_us = 0, eager_us = 0;
  int rc, version = 0;
  *out = NULL;
  if (!hwname) {
    rc = svc_err_set(err, SVC_BAD_ARGS, "hardware",
                     "a host probe is stored for one accelerator: name it (--hw)");
    goto cleanup;
  }
  if (!(doc = cJSON_ParseWithLength(text, len)) || !cJSON_IsObject(doc)) {
    rc = svc_err_set(err, SVC_BAD_JSON, "", "%s is not a JSON object", label);
    goto cleanup;
  }
  if ((rc = read_probe(doc, &kernel_us, &eager_us, err))) goto cleanup;
  if ((rc = api_hw_lookup(ctx, hwname, 1, &hw, err))) goto cleanup;
  int own = api_calib_level(&hw) == API_CALIB_OWN;
  if (own) {
    calib = hw.calib;
  } else {
    memset(&calib, 0, sizeof calib);
  }
  double host_op_us = COST_HOST_PROBE_K * kernel_us;
  if (cost_calib_set(&calib, "step_host_op_us", host_op_us) ||
      cost_calib_set(&calib, "step_host_probe_kernel_us", kernel_us) ||
      (eager_us > 0 && cost_calib_set(&calib, "step_host_probe_eager_us", eager_us))) {
    rc = svc_err_set(err, SVC_INTERNAL, "", "the calibration of %s is full", hw.name);
    goto cleanup;
  }
  rep = cJSON_CreateObject();
  cJSON_AddStringToObject(rep, "hardware", hw.name);
  cJSON_AddNumberToObject(rep, "version", 0);
  cJSON_AddStringToObject(rep, "kind", "host_probe");
  cJSON_AddNumberToObject(rep, "host_op_us", host_op_us);
  char formula[128];
  snprintf(formula, sizeof formula,
           "host_op_us = %g x host_probe.step_kernel_us "
           "(data/measurements/h200-dcn-host/k_host.json)",
           COST_HOST_PROBE_K);
  cJSON_AddStringToObject(rep, "formula", formula);
  cJSON *p = cJSON_AddObjectToObject(rep, "host_probe");
  cJSON_AddNumberToObject(p, "step_kernel_us", kernel_us);
  if (eager_us > 0) cJSON_AddNumberToObject(p, "eager_op_us", eager_us);
  cJSON_AddStringToObject(rep, "file", label);
  cJSON_AddStringToObject(rep, "measured_at", str_or(doc, "started_at", "unknown"));
  const cJSON *dev = cJSON_GetObjectItemCaseSensitive(doc, "device");
  cJSON_AddStringToObject(rep, "device", str_or(dev, "name", "unknown"));
  cJSON_AddStringToObject(rep, "over",
                          own                                      ? "own"
                          : api_calib_level(&hw) == API_CALIB_ARCH ? "architecture"
                                                                   : "datasheet");
  cJSON_AddNumberToObject(rep, "base_version", own ? hw.calib.version : 0);
  if (!(rep_text = api_print(rep))) {
    rc = svc_err_set(err, SVC_NOMEM, "", NULL);
    goto cleanup;
  }
  if ((rc = api_calib_store(ctx, hw.name, &calib, rep_text, &version, err))) goto cleanup;
  cJSON_ReplaceItemInObject(rep, "version", cJSON_CreateNumber(version));
  if (!(*out = api_print(rep))) rc = svc_err_set(err, SVC_NOMEM, "", NULL);
cleanup:
  free(rep_text);
  cJSON_Delete(rep);
  cJSON_Delete(doc);
  return rc;
}
