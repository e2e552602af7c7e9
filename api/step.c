/* POST /v1/step and `cdplan step`: decode the workload and the recipe,
 * check them against each other and the hardware, price one training step
 * (costmodel/step.h), and answer with the step time, throughput, peak
 * memory per GPU and where the time and the memory go. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#include "api/api_step.h"

cJSON *api_step_result_json(const cost_step_result *res, int kind) {
  cJSON *o = cJSON_CreateObject(), *b, *m, *k;
  double step = res->step_ms > 0 ? res->step_ms : 1;
  cJSON_AddNumberToObject(o, "step_ms", res->step_ms);
  cJSON_AddNumberToObject(o, "samples_per_s", res->samples_per_s);
  if (kind == COST_WL_TRANSFORMER) {
    cJSON_AddNumberToObject(o, "tokens_per_s", res->tokens_per_s);
    cJSON_AddNumberToObject(o, "pipeline_bubble", res->pipeline_bubble);
  }
  cJSON_AddNumberToObject(o, "peak_memory_bytes", res->peak_memory_bytes);
  cJSON_AddNumberToObject(o, "hbm_usable_bytes", res->hbm_usable_bytes);
  cJSON_AddBoolToObject(o, "fits", res->fits);
  cJSON_AddStringToObject(o, "peak_phase", res->peak_phase ? "backward" : "forward");
  cJSON_AddNumberToObject(o, "gpu_ms", res->gpu_ms);
  cJSON_AddNumberToObject(o, "host_ms", res->host_ms);
  cJSON_AddNumberToObject(o, "host_op_us", res->host_op_us);
  cJSON_AddStringToObject(o, "host_op_source", cost_host_op_source_name(res->host_op_source));
  if (res->host_op_probe) cJSON_AddBoolToObject(o, "host_op_probe", 1);
  cJSON_AddNumberToObject(o, "kernels", (double)res->kernels);
  cJSON_AddNumberToObject(o, "model_flops", res->model_flops);
  cJSON_AddNumberToObject(o, "mfu", res->mfu);
  b = cJSON_AddObjectToObject(o, "breakdown");
  for (int c = 0; c < COST_COMP__COUNT; c++) {
    cJSON *e = cJSON_AddObjectToObject(b, cost_component_name(c));
    cJSON_AddNumberToObject(e, "ms", res->comp_ms[c]);
    cJSON_AddNumberToObject(e, "share", res->comp_ms[c] / step);
  }
  m = cJSON_AddObjectToObject(o, "memory");
  for (int u = 0; u < COST_MEM__COUNT; u++)
    cJSON_AddNumberToObject(m, cost_mem_use_name(u), res->mem_bytes[u]);
  k = cJSON_AddArrayToObject(o, "kernel_classes");
  for (int c = 0; c < COST_KC__COUNT; c++) {
    if (res->class_ms[c] <= 0 && res->class_kernels[c] == 0) continue;
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "class", cost_kclass_name(c));
    cJSON_AddNumberToObject(e, "ms", res->class_ms[c]);
    cJSON_AddNumberToObject(e, "share", res->class_ms[c] / step);
    cJSON_AddNumberToObject(e, "kernels", (double)res->class_kernels[c]);
    cJSON_AddItemToArray(k, e);
  }
  return o;
}

/* The GEMMs the model priced for this step (cost_step_gemms), one call each:
 * the dashboard draws these rather than deriving its own. */
#define STEP_MAX_GEMMS 1024
static int gemms_json(const cost_hw *hw, const cost_workload *w, const cost_recipe *r, cJSON *o) {
  size_t n = 0;
  cost_step_gemm *g = malloc(STEP_MAX_GEMMS * sizeof *g);
  if (!g) return SVC_NOMEM;
  int rc = cost_step_gemms(hw, w, r, g, STEP_MAX_GEMMS, &n);
  cJSON *arr = cJSON_AddArrayToObject(o, "gemms");
  for (size_t i = 0; !rc && arr && i < n && i < STEP_MAX_GEMMS; i++) {
    cJSON *e = cJSON_CreateObject();
    char layout[3] = {g[i].op.layout[0], g[i].op.layout[1], 0};
    cJSON_AddStringToObject(e, "name", g[i].name);
    cJSON_AddNumberToObject(e, "m", (double)g[i].op.m);
    cJSON_AddNumberToObject(e, "n", (double)g[i].op.n);
    cJSON_AddNumberToObject(e, "k", (double)g[i].op.k);
    cJSON_AddNumberToObject(e, "batch", (double)g[i].op.batch);
    cJSON_AddStringToObject(e, "layout", layout);
    cJSON_AddStringToObject(e, "dtype", cost_dtype_name((cost_dtype)g[i].op.dtype));
    cJSON_AddNumberToObject(e, "ms", g[i].ms);
    cJSON_AddStringToObject(e, "bound", cost_bound_name(g[i].bound));
    cJSON_AddNumberToObject(e, "flops", g[i].flops);
    cJSON_AddNumberToObject(e, "bytes", g[i].bytes);
    cJSON_AddNumberToObject(e, "achieved_tflops",
                            g[i].ms > 0 ? g[i].flops / (g[i].ms * 1e-3) / 1e12 : 0);
    cJSON_AddItemToArray(arr, e);
  }
  free(g);
  return arr ? 0 : SVC_NOMEM;
}

/* The model's refusals after validation (should not happen: the checks
 * above mirror the model's); still a client error naming the workload. */
static int refused(int rc, svc_err *err) {
  if (rc == COST_EDTYPE)
    return svc_err_set(err, SVC_UNSUPPORTED_DTYPE, "recipe.precision",
                       "the hardware cannot run this precision");
  if (rc == COST_ENOHW)
    return svc_err_set(err, SVC_BAD_FIELD, "hardware",
                       "the hardware descriptor lacks a figure the step model needs");
  if (rc == COST_ESTEP_OVERFLOW)
    return svc_err_set(err, SVC_OUT_OF_RANGE, "workload", "a byte count overflows 64 bits");
  return svc_err_set(err, SVC_BAD_FIELD, "workload", "the workload cannot be priced (code %d)", rc);
}

/* How much the step hangs on the host's speed. host_bound: the framework's
 * dispatch on the host takes longer than the GPU's work. When the per-op
 * host time is not this machine's (no recipe host_op_us, no probe stored by
 * cdplan calibrate --host-probe), the step is priced again at the fastest
 * and slowest per-op host times the lent machines showed
 * (COST_HOST_PROBED_OP_US_LO/HI, costmodel/step.h: probes and, where none
 * ran, the per-op time that meets their host-bound steps), widened to
 * include the figure used: lent hosts differed up to 2.7x per call, and the
 * fifth blind H100 DCN set, priced at the default host figure, missed by
 * 16 % median and 45 % at worst where the machine's probe met 3.3 % /
 * 13.2 % (docs/step-model.md). */
static int host_sensitivity(const cost_hw *hw, const cost_workload *w, const cost_recipe *r,
                            const cost_step_result *res, cJSON *o, svc_err *err) {
  if (res->host_op_us <= 0) return 0;
  cJSON_AddBoolToObject(o, "host_bound", res->host_ms > res->gpu_ms);
  if (res->host_op_source == COST_HOSTOP_RECIPE || res->host_op_source == COST_HOSTOP_MINI ||
      res->host_op_probe)
    return 0;
  double lo = fmin(res->host_op_us, COST_HOST_PROBED_OP_US_LO);
  double hi = fmax(res->host_op_us, COST_HOST_PROBED_OP_US_HI);
  cost_recipe alt = *r;
  cost_step_result a, b;
  alt.host_op_us = lo;
  int rc = cost_step(hw, w, &alt, &a);
  alt.host_op_us = hi;
  if (!rc) rc = cost_step(hw, w, &alt, &b);
  if (rc) return refused(rc, err);
  cJSON *s = cJSON_AddObjectToObject(o, "host_sensitivity"), *e;
  e = cJSON_AddArrayToObject(s, "host_op_us_range");
  cJSON_AddItemToArray(e, cJSON_CreateNumber(lo));
  cJSON_AddItemToArray(e, cJSON_CreateNumber(hi));
  e = cJSON_AddArrayToObject(s, "step_ms_range");
  cJSON_AddItemToArray(e, cJSON_CreateNumber(fmin(a.step_ms, res->step_ms)));
  cJSON_AddItemToArray(e, cJSON_CreateNumber(fmax(b.step_ms, res->step_ms)));
  cJSON_AddStringToObject(
      s, "meaning",
      "host_op_us is not this machine's: the step priced at the fastest and slowest per-op host "
      "times lent machines showed (their probes, 0.344 x step_kernel_us, and the per-op times "
      "that meet their host-bound steps, and the mini route's per-case figures); the GPU "
      "model's own error comes on top. To narrow it, give the case's own host: its step at a "
      "small batch measured on this machine (recipe.host_mini_batch + host_mini_step_ms, the "
      "runner's host_mini; blind DCN sets 3.1 % median), recipe.host_op_us, or the machine's "
      "probe (cdplan calibrate --hw NAME --host-probe RESULT.json)");
  return 0;
}

int api_step(api_ctx *ctx, const char *body, size_t len, char **out, svc_err *err) {
  static const char *const top[] = {"hardware",    "workload", "recipe",
                                    "calibration", "cluster",  NULL};
  cJSON *req = NULL, *resp = NULL;
  const char *hwname = NULL, *calib = "latest";
  cost_workload w = {0};
  cost_recipe r;
  cost_step_result res;
  cost_hw hw;
  int rc;
  *out = NULL;
  if ((rc = api_request_hw(ctx, body, len, top, &req, &hwname, &calib, err))) return rc;
  if ((rc = api_workload_decode(cJSON_GetObjectItemCaseSensitive(req, "workload"), "workload", &w,
                                err)) ||
      (rc = api_recipe_decode(cJSON_GetObjectItemCaseSensitive(req, "recipe"), "recipe", &r, err)))
    goto cleanup;
  if ((rc = api_hw_lookup(ctx, hwname, !strcmp(calib, "latest"), &hw, err))) goto cleanup;
  const cJSON *cl = cJSON_GetObjectItemCaseSensitive(req, "cluster");
  if (cl && !cJSON_IsObject(cl)) {
    rc = svc_err_set(err, SVC_BAD_FIELD, "cluster", "cluster must be an object");
    goto cleanup;
  }
  if (cl && ((rc = api_check_fields(cl, api_fabric_fields, "cluster", err)) ||
             (rc = api_fabric_decode(cl, "cluster", &hw, err))))
    goto cleanup;
  if (hw.scaleup_domain > 0 && r.gpus_per_node > hw.scaleup_domain) {
    rc = svc_err_set(err, SVC_OUT_OF_RANGE, "recipe.gpus_per_node",
                     "recipe.gpus_per_node: %s has %d GPUs per scale-up domain (got %lld)", hw.name,
                     hw.scaleup_domain, (long long)r.gpus_per_node);
    goto cleanup;
  }
  int clamped = 0;
  if ((rc = api_step_check(&hw, &w, &r, "workload", "recipe", err)) ||
      (rc = api_recipe_host_mini(&hw, &w, &r, "recipe", &clamped, err)))
    goto cleanup;
  int crc = cost_step(&hw, &w, &r, &res);
  if (crc) {
    rc = refused(crc, err);
    goto cleanup;
  }
  resp = api_step_result_json(&res, w.kind);
  if (r.host_mini_step_ms > 0) {
    cJSON *m = cJSON_AddObjectToObject(resp, "host_mini");
    cJSON_AddNumberToObject(m, "batch", (double)r.host_mini_batch);
    cJSON_AddNumberToObject(m, "step_ms", r.host_mini_step_ms);
    cJSON_AddNumberToObject(m, "host_op_us", r.host_op_us);
    cJSON_AddBoolToObject(m, "clamped", clamped);
    cJSON_AddStringToObject(
        m, "meaning",
        clamped ? "the mini step lies outside what 0.5-60 us per op give: host_op_us is the "
                  "nearer end, and the step's host part is not this machine's"
                : "host_op_us is the per-op host time at which this step at the mini batch takes "
                  "the measured mini step (the case's own host on its machine)");
  }
  if (w.kind == COST_WL_DLRM && w.dlrm.block.out > 0)
    cJSON_AddItemToObject(resp, "dense_block", api_dense_block_json(&w.dlrm));
  if ((rc = host_sensitivity(&hw, &w, &r, &res, resp, err))) goto cleanup;
  cJSON_AddStringToObject(resp, "hardware", hw.name);
  cJSON_AddItemToObject(resp, "provenance", api_provenance_json(&hw));
  cJSON_AddNumberToObject(resp, "calibration", hw.calib.version);
  cJSON_AddStringToObject(resp, "workload", w.kind == COST_WL_DLRM ? "dlrm" : "transformer");
  if (gemms_json(&hw, &w, &r, resp) || !(*out = api_print(resp)))
    rc = svc_err_set(err, SVC_NOMEM, "", NULL);
cleanup:
  api_workload_dispose(&w);
  cJSON_Delete(req);
  cJSON_Delete(resp);
  return rc;
}

/* ---- cdplan calibrate with step measurements ---------------------------- */

int api_step_meas_append(const char *text, size_t len, api_step_meas *acc, int *is_step,
                         svc_err *err) {
  api_step_meas one = {0};
  cJSON *doc = NULL;
  int rc;
  *is_step = 0;
  if (api_parse_body(text, len, &doc, err)) return 0; /* not ours: the op loader reports it */
  *is_step = api_step_meas_detect(doc);
  cJSON_Delete(doc);
  if (!*is_step) return 0;
  if ((rc = api_step_meas_load(text, len, &one, err))) return rc;
  cost_step_sample *s = realloc(acc->s, (acc->n + one.n) * sizeof *s);
  cost_table **b = realloc(acc->blocks, (acc->n_blocks + one.n_blocks) * sizeof *b);
  if (s) acc->s = s;
  if (b) acc->blocks = b;
  if (!s || !b) {
    api_step_meas_dispose(&one);
    return svc_err_set(err, SVC_NOMEM, "", NULL);
  }
  memcpy(acc->s + acc->n, one.s, one.n * sizeof *s);
  memcpy(acc->blocks + acc->n_blocks, one.blocks, one.n_blocks * sizeof *b);
  acc->n += one.n;
  acc->n_blocks += one.n_blocks;
  free(one.s);
  free(one.blocks);
  return 0;
}

int api_step_calibrate(const cost_hw *hw, const api_step_meas *acc, cost_calib *calib,
                       cJSON **report, svc_err *err) {
  cost_step_fit_report rep;
  cost_hw h = *hw;
  h.calib = *calib;
  *report = NULL;
  int rc = cost_step_fit(&h, acc->s, acc->n, calib, &rep);
  if (rc == COST_ENOHW)
    return svc_err_set(err, SVC_INTERNAL, "", "calibration has no room for the step profile");
  if (rc)
    return svc_err_set(err, SVC_BAD_FIELD, "files",
                       "no step measurement in the files can be used to calibrate %s", hw->name);
  cJSON *o = cJSON_CreateObject(), *p;
  cJSON_AddNumberToObject(o, "samples", rep.n);
  cJSON_AddNumberToObject(o, "median_step_error_before", rep.median_step_err_before);
  cJSON_AddNumberToObject(o, "median_step_error", rep.median_step_err);
  cJSON_AddNumberToObject(o, "max_step_error", rep.max_step_err);
  cJSON_AddNumberToObject(o, "median_memory_error", rep.median_mem_err);
  cJSON_AddNumberToObject(o, "max_memory_error", rep.max_mem_err);
  cJSON_AddNumberToObject(o, "loo_median_step_error", rep.median_step_err_loo);
  cJSON_AddNumberToObject(o, "loo_max_step_error", rep.max_step_err_loo);
  cJSON_AddNumberToObject(o, "loo_median_memory_error", rep.median_mem_err_loo);
  p = cJSON_AddObjectToObject(o, "params");
  for (int i = 0; i < COST_SP__COUNT; i++) {
    const char *name;
    if (!rep.fitted[i] || cost_step_param_info(i, &name, NULL, NULL, NULL)) continue;
    cJSON_AddNumberToObject(p, name, rep.values[i]);
  }
  *report = o;
  return 0;
}
