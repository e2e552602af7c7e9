/* cdplan calibrate: measurement files in, a new calibration version out.
 * The fit starts from the datasheet defaults (not the previous version) so
 * that a version depends only on its own measurements; the report says
 * the error per op class before (datasheet) and after the fit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#include "api/api_step.h"
#include "api/measure.h"

static cJSON *report_json(const cost_hw *hw, int version, const cost_calib *c,
                          const cost_fit_report *rep, cJSON *files) {
  cJSON *doc = cJSON_CreateObject(), *params, *classes;
  cJSON_AddStringToObject(doc, "hardware", hw->name);
  cJSON_AddNumberToObject(doc, "version", version);
  cJSON_AddNumberToObject(doc, "samples", rep->n_samples);
  cJSON_AddNumberToObject(doc, "skipped", rep->n_skipped);
  cJSON_AddNumberToObject(doc, "iterations", rep->iterations);
  cJSON_AddNumberToObject(doc, "rms_log_error_before", rep->rms_log_before);
  cJSON_AddNumberToObject(doc, "rms_log_error_after", rep->rms_log_after);
  params = cJSON_AddObjectToObject(doc, "params");
  for (int i = 0; i < c->n; i++) cJSON_AddNumberToObject(params, c->names[i], c->values[i]);
  classes = cJSON_AddArrayToObject(doc, "classes");
  for (int i = 0; i < COST_CLASS__COUNT; i++) {
    const cost_fit_class *k = &rep->cls[i];
    if (k->n == 0) continue;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "class", k->name[0] ? k->name : cost_class_name(i));
    cJSON_AddNumberToObject(o, "n", k->n);
    cJSON_AddNumberToObject(o, "median_error_before", k->median_before);
    cJSON_AddNumberToObject(o, "p90_error_before", k->p90_before);
    cJSON_AddNumberToObject(o, "median_error_after", k->median_after);
    cJSON_AddNumberToObject(o, "p90_error_after", k->p90_after);
    cJSON_AddItemToArray(classes, o);
  }
  cJSON_AddItemToObject(doc, "files", files);
  return doc;
}

/* *arr (of *n items of size sz) grows by the k items of src; 0 when out of
 * memory (*arr unchanged). */
static int append(void **arr, size_t *n, const void *src, size_t k, size_t sz) {
  if (!k) return 1;
  char *g = realloc(*arr, (*n + k) * sz);
  if (!g) return 0;
  memcpy(g + *n * sz, src, k * sz);
  *arr = g;
  *n += k;
  return 1;
}

/* The uvm link and translation terms from host-mapped table rows. */
static int uvm_calibrate(const cost_hw *hw, const cost_uvm_sample *u, size_t n, cost_calib *calib,
                         cJSON **report, svc_err *err) {
  cost_uvm_fit_report rep;
  cost_hw h = *hw;
  h.calib = *calib;
  int rc = cost_uvm_fit(&h, u, n, calib, &rep);
  if (rc == COST_ENOHW)
    return svc_err_set(err, SVC_BAD_FIELD, "files",
                       "%s has no host_link_bandwidth_bytes_per_s (or the calibration is full): "
                       "uvm rows cannot be fitted",
                       hw->name);
  if (rc)
    return svc_err_set(err, SVC_BAD_FIELD, "files",
                       "no uvm_embedding_bag_sum row is bound by the host link: nothing to fit");
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "samples", (double)n);
  cJSON_AddNumberToObject(o, "fwd_rows_fitted", rep.n_fwd);
  cJSON_AddNumberToObject(o, "fwd_bwd_rows_fitted", rep.n_fwd_bwd);
  cJSON_AddNumberToObject(o, "median_fwd_error_before", rep.median_err_before[0]);
  cJSON_AddNumberToObject(o, "median_fwd_error", rep.median_err_after[0]);
  cJSON_AddNumberToObject(o, "max_fwd_error", rep.max_err_after[0]);
  cJSON_AddNumberToObject(o, "median_fwd_bwd_error_before", rep.median_err_before[1]);
  cJSON_AddNumberToObject(o, "median_fwd_bwd_error", rep.median_err_after[1]);
  cJSON_AddNumberToObject(o, "max_fwd_bwd_error", rep.max_err_after[1]);
  cJSON *p = cJSON_AddObjectToObject(o, "params");
  static const int ids[4] = {COST_SP_UVM_READ_EFF, COST_SP_UVM_UPDATE_EFF, COST_SP_UVM_REACH_MB,
                             COST_SP_UVM_WALK_NS};
  for (int i = 0; i < 4; i++) {
    const char *name;
    cost_step_param_info(ids[i], &name, NULL, NULL, NULL);
    cJSON_AddNumberToObject(p, name, rep.values[ids[i]]);
  }
  *report = o;
  return 0;
}

/* The flash-attention kernel's terms from timings of it alone. */
static int flash_calibrate(const cost_hw *hw, const cost_flash_sample *f, size_t n,
                           cost_calib *calib, cJSON **report, svc_err *err) {
  cost_flash_fit_report rep;
  cost_hw h = *hw;
  h.calib = *calib;
  int rc = cost_flash_fit(&h, f, n, calib, &rep);
  if (rc == COST_ENOHW)
    return svc_err_set(err, SVC_INTERNAL, "", "calibration has no room for the attention terms");
  if (rc)
    return svc_err_set(err, SVC_BAD_FIELD, "files",
                       "an attention sweep needs at least 4 rows with forward and backward times");
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "samples", rep.n);
  cJSON_AddNumberToObject(o, "median_error_before", rep.median_err_before);
  cJSON_AddNumberToObject(o, "median_error", rep.median_err);
  cJSON_AddNumberToObject(o, "max_error", rep.max_err);
  cJSON *p = cJSON_AddObjectToObject(o, "params");
  cJSON_AddNumberToObject(p, "step_flash_eff_fwd", rep.eff_f);
  cJSON_AddNumberToObject(p, "step_flash_eff_bwd", rep.eff_b);
  cJSON_AddNumberToObject(p, "step_flash_block_fwd", rep.block_f);
  cJSON_AddNumberToObject(p, "step_flash_block_bwd", rep.block_b);
  cJSON_AddNumberToObject(p, "step_flash_hd0", rep.hd0);
  *report = o;
  return 0;
}

int api_calibrate(api_ctx *ctx, const char *hwname, size_t n, const char *const *texts,
                  const size_t *lens, const char *const *labels, char **out, svc_err *err) {
  cost_sample *all = NULL;
  size_t total = 0;
  cost_hw hw;
  cost_calib calib;
  cost_fit_report rep;
  cJSON *files = cJSON_CreateArray(), *doc = NULL;
  char *params_report = NULL;
  api_step_meas steps = {0};   /* whole-step files: the framework profile's fit */
  cost_uvm_sample *uvm = NULL; /* host-mapped table microbenchmarks: the uvm fit */
  size_t n_uvm = 0, n_flash = 0;
  cost_flash_sample *flash = NULL; /* flash-attention sweeps: the attention kernel's fit */
  cJSON *step_rep = NULL, *uvm_rep = NULL, *flash_rep = NULL;
  int rc, version = 0, is_step = 0;
  *out = NULL;
  if (n == 0) {
    rc = svc_err_set(err, SVC_BAD_ARGS, "files", "calibrate needs at least one measurement file");
    goto cleanup;
  }
  /* Published rows fit per architecture (api/calibrate_published.c). */
  if (api_published_is(texts[0], lens[0])) {
    rc = api_calibrate_published(ctx, hwname, 0, n, texts, lens, labels, out, err);
    goto cleanup;
  }
  if (!hwname) {
    rc = svc_err_set(err, SVC_BAD_ARGS, "hardware",
                     "calibrating on measurements of one accelerator needs its name (--hw)");
    goto cleanup;
  }
  if ((rc = api_hw_lookup(ctx, hwname, 0, &hw, err))) goto cleanup;
  size_t skipped = 0;
  for (size_t i = 0; i < n; i++) {
    cost_sample *s = NULL;
    size_t k = 0;
    size_t before = steps.n;
    /* A file of another kind (ceilings, tile-config sweeps) is skipped
     * with a note, so that calibrating on every file of a folder does the obvious thing. */
    cost_flash_sample *fs = NULL;
    size_t kf = 0;
    int frc = api_flash_load(texts[i], lens[i], &fs, &kf, err);
    if (frc < 0) {
      svc_err_prefix(err, labels[i]);
      rc = frc;
      goto cleanup;
    }
    if (frc == 0) {
      int grew = append((void **)&flash, &n_flash, fs, kf, sizeof *fs);
      free(fs);
      if (!grew) {
        rc = svc_err_set(err, SVC_NOMEM, "", NULL);
        goto cleanup;
      }
      cJSON *f = cJSON_CreateObject();
      cJSON_AddStringToObject(f, "file", labels[i]);
      cJSON_AddNumberToObject(f, "attention_samples", (double)kf);
      cJSON_AddItemToArray(files, f);
      continue;
    }
    const char *why = api_measure_not_samples(texts[i], lens[i]);
    if (why) {
      cJSON *f = cJSON_CreateObject();
      cJSON_AddStringToObject(f, "file", labels[i]);
      cJSON_AddStringToObject(f, "skipped", why);
      cJSON_AddItemToArray(files, f);
      skipped++;
      continue;
    }
    if ((rc = api_step_meas_append(texts[i], lens[i], &steps, &is_step, err))) {
      svc_err_prefix(err, labels[i]);
      goto cleanup;
    }
    if (is_step) {
      cJSON *f = cJSON_CreateObject();
      cJSON_AddStringToObject(f, "file", labels[i]);
      cJSON_AddNumberToObject(f, "step_samples", (double)(steps.n - before));
      cJSON_AddItemToArray(files, f);
      continue;
    }
    cost_uvm_sample *u = NULL;
    size_t ku = 0;
    if ((rc = api_measure_load_all(texts[i], lens[i], &s, &k, &u, &ku, err))) {
      svc_err_prefix(err, labels[i]);
      goto cleanup;
    }
    int grew = append((void **)&uvm, &n_uvm, u, ku, sizeof *u) &&
               append((void **)&all, &total, s, k, sizeof *s);
    free(s), free(u);
    if (!grew) {
      rc = svc_err_set(err, SVC_NOMEM, "", NULL);
      goto cleanup;
    }
    cJSON *f = cJSON_CreateObject();
    cJSON_AddStringToObject(f, "file", labels[i]);
    cJSON_AddNumberToObject(f, "samples", (double)k);
    if (ku) cJSON_AddNumberToObject(f, "uvm_samples", (double)ku);
    cJSON_AddItemToArray(files, f);
  }
  if (skipped == n) {
    rc = svc_err_set(err, SVC_BAD_FIELD, "files",
                     "none of the %zu file(s) holds cost samples (%s: %s)", n, labels[0],
                     api_measure_not_samples(texts[0], lens[0]));
    goto cleanup;
  }
  if (total == 0 && (steps.n || n_uvm || n_flash)) { /* op parameters stay datasheet */
    memset(&calib, 0, sizeof calib);
    memset(&rep, 0, sizeof rep);
  } else if (cost_calibrate(&hw, all, total, &calib, &rep) != 0) {
    rc = svc_err_set(err, SVC_BAD_FIELD, "files",
                     "no measurement in the files can be used to calibrate %s", hw.name);
    goto cleanup;
  }
  if (n_uvm && (rc = uvm_calibrate(&hw, uvm, n_uvm, &calib, &uvm_rep, err))) goto cleanup;
  if (steps.n && (rc = api_step_calibrate(&hw, &steps, &calib, &step_rep, err))) goto cleanup;
  if (n_flash && (rc = flash_calibrate(&hw, flash, n_flash, &calib, &flash_rep, err))) goto cleanup;
  /* Store first so the report carries the version it describes. */
  doc = report_json(&hw, 0, &calib, &rep, files);
  files = NULL;
  if (step_rep) cJSON_AddItemToObject(doc, "step_profile", step_rep);
  step_rep = NULL;
  if (uvm_rep) cJSON_AddItemToObject(doc, "uvm", uvm_rep);
  uvm_rep = NULL;
  if (flash_rep) cJSON_AddItemToObject(doc, "flash_attention", flash_rep);
  flash_rep = NULL;
  if (!(params_report = api_print(doc))) {
    rc = svc_err_set(err, SVC_NOMEM, "", NULL);
    goto cleanup;
  }
  if ((rc = api_calib_store(ctx, hw.name, &calib, params_report, &version, err))) goto cleanup;
  cJSON_ReplaceItemInObject(doc, "version", cJSON_CreateNumber(version));
  if (!(*out = api_print(doc))) rc = svc_err_set(err, SVC_NOMEM, "", NULL);
cleanup:
  api_step_meas_dispose(&steps);
  cJSON_Delete(step_rep);
  cJSON_Delete(uvm_rep);
  cJSON_Delete(flash_rep);
  free(uvm);
  free(flash);
  free(all);
  free(params_report);
  cJSON_Delete(files);
  cJSON_Delete(doc);
  return rc;
}
