/* bench/step_uvm.c: section (h) of bench/step_accuracy -- tables in pinned
 * host memory read and updated by the GPU (placement "uvm").
 *
 *  1. The op: the runner's uvm_embedding_bag microbenchmark
 *     (data/measurements/h200-uvm/uvm_micro.json): the link and translation
 *     terms fitted (cost_uvm_fit), in-sample and 2-fold cross-validated
 *     (rows split by parity; each half fitted, the other half predicted).
 *  2. Steps with uvm tables (h200-uvm/uvm_steps.json, the shared 26-table
 *     workload with 1 or 5 tables in pinned host memory), predicted with
 *     the lent machine's profile of section (g) and that fit, before and
 *     after the per-table synchronization term is fitted on them.
 *  3. The end-to-end pair (h200-uvm/e2e_uvm.json when present): the H200
 *     recipe and the H100 plan with its host tables as uvm, predicted from
 *     the model, the calibration microbenchmark of the same lease
 *     (uvm_micro_e2e.json) and the fits above -- never from the pair's own
 *     rows -- against what was measured.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/measure.h"
#include "bench/bench.h"

/* The uvm rows of a memory_ops file; -1 when there are none. */
static int load_uvm(const char *path, cost_uvm_sample **u, size_t *n) {
  char *text = NULL;
  size_t len = 0, k = 0;
  svc_err err;
  cost_sample *ops = NULL;
  *u = NULL;
  *n = 0;
  if (svc_read_file(path, 64u << 20, &text, &len, &err)) return -1;
  int rc = api_measure_load_all(text, len, &ops, &k, u, n, &err);
  free(ops);
  free(text);
  return rc || !*n ? -1 : 0;
}

/* 2-fold CV over rows split by parity: fit on one, errors on the other. */
static void op_cv(const cost_hw *hw, const cost_uvm_sample *u, size_t n, double cv[2]) {
  cost_uvm_sample *half = calloc(n + 1, sizeof *half);
  double *e[2] = {calloc(n + 1, sizeof(double)), calloc(n + 1, sizeof(double))};
  int k[2] = {0, 0};
  for (int fold = 0; half && e[0] && e[1] && fold < 2; fold++) {
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
      if ((int)(i % 2) == fold) half[m++] = u[i];
    cost_hw h = *hw;
    if (cost_uvm_fit(hw, half, m, &h.calib, NULL)) continue;
    double prof[COST_SP__COUNT];
    for (int i = 0; i < COST_SP__COUNT; i++) prof[i] = cost_step_param_value(&h, i);
    for (size_t i = 0; i < n; i++) {
      double f, fb;
      if ((int)(i % 2) == fold || cost_uvm_bag_p(&h, prof, &u[i], &f, &fb)) continue;
      e[0][k[0]++] = fabs(f / u[i].fwd_ms - 1);
      if (u[i].fwd_bwd_ms > 0) e[1][k[1]++] = fabs(fb / u[i].fwd_bwd_ms - 1);
    }
  }
  cv[0] = bench_median(e[0], k[0]);
  cv[1] = bench_median(e[1], k[1]);
  free(half), free(e[0]), free(e[1]);
}

static void print_rows(const cost_hw *hw, const cost_uvm_sample *u, size_t n) {
  double prof[COST_SP__COUNT];
  for (int i = 0; i < COST_SP__COUNT; i++) prof[i] = cost_step_param_value(hw, i);
  printf("  %9s %4s %5s %7s %3s %9s %9s %7s %9s %9s %7s\n", "rows", "dim", "dtype", "batch", "P",
         "fwd_ms", "pred", "err", "fb_ms", "pred", "err");
  for (size_t i = 0; i < n; i++) {
    double f, fb;
    if (cost_uvm_bag_p(hw, prof, &u[i], &f, &fb)) continue;
    printf("  %9lld %4lld %5s %7lld %3lld %9.4f %9.4f %+6.1f%% %9.4f %9.4f %+6.1f%%\n",
           (long long)u[i].rows, (long long)u[i].dim, cost_dtype_name((cost_dtype)u[i].dtype),
           (long long)u[i].batch, (long long)u[i].pooling, u[i].fwd_ms, f,
           100 * (f / u[i].fwd_ms - 1), u[i].fwd_bwd_ms, fb, 100 * (fb / u[i].fwd_bwd_ms - 1));
  }
}

/* The cases of a runner step job as unmeasured rows (step_ms 1): each
 * case is the job's base params with the case's fields over them, so the
 * model can price a job before it runs. */
static int job_cases(const char *path, api_step_meas *m) {
  char *text = NULL, *rows_text = NULL;
  size_t len = 0;
  svc_err err;
  int rc = -1;
  if (svc_read_file(path, 1u << 20, &text, &len, &err)) return -1;
  cJSON *job = cJSON_ParseWithLength(text, len), *doc = cJSON_CreateObject();
  const cJSON *p = cJSON_GetObjectItemCaseSensitive(job, "params"), *c;
  cJSON *rows = cJSON_AddArrayToObject(doc, "rows");
  const cJSON *tr = cJSON_GetObjectItemCaseSensitive(p, "table_rows");
  if (!cJSON_IsObject(p) || !tr) goto done;
  cJSON_AddItemToObject(doc, "table_rows", cJSON_Duplicate(tr, 1));
  cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(p, "cases")) {
    cJSON *row = cJSON_Duplicate(p, 1), *f;
    cJSON_DeleteItemFromObjectCaseSensitive(row, "cases");
    cJSON_DeleteItemFromObjectCaseSensitive(row, "table_rows");
    cJSON_DeleteItemFromObjectCaseSensitive(row, "profile"); /* a request, not a result */
    cJSON_ArrayForEach(f, c) {
      cJSON_DeleteItemFromObjectCaseSensitive(row, f->string);
      if (!strcmp(f->string, "profile")) continue;
      cJSON_AddItemToObject(row, f->string, cJSON_Duplicate(f, 1));
    }
    cJSON_AddNumberToObject(row, "step_ms", 1.0);
    cJSON_AddItemToArray(rows, row);
  }
  rows_text = cJSON_PrintUnformatted(doc);
  if (rows_text && (rc = api_step_meas_load(rows_text, strlen(rows_text), m, &err)))
    fprintf(stderr, "%s: %s (%s)\n", path, err.message, err.field);
done:
  cJSON_Delete(job);
  cJSON_Delete(doc);
  free(rows_text);
  free(text);
  return rc;
}

/* Step rows: print each, return the median |error| (max into *mx). */
static double step_rows(const cost_hw *hw, const api_step_meas *m, const char *title, double *mx) {
  double *e = calloc(m->n + 1, sizeof *e);
  int k = 0;
  *mx = 0;
  printf("  %s\n", title);
  for (size_t i = 0; e && i < m->n; i++) {
    const cost_step_sample *s = &m->s[i];
    cost_step_result r;
    int uvm = 0, host = 0;
    for (size_t t = 0; t < s->w.dlrm.n_tables; t++) {
      uvm += s->w.dlrm.tables[t].placement == COST_PLACE_UVM;
      host += s->w.dlrm.tables[t].placement == COST_PLACE_HOST;
    }
    if (cost_step(hw, &s->w, &s->r, &r)) {
      printf("    case %zu: model refused\n", i);
      continue;
    }
    e[k] = r.step_ms / s->step_ms - 1;
    printf("    B=%-6lld %-4s P=%-2lld uvm=%d host=%d  step %8.2f ms, predicted %8.2f (%+5.1f%%)",
           (long long)s->r.batch_per_gpu, cost_dtype_name((cost_dtype)s->r.precision),
           (long long)s->w.dlrm.tables[0].pooling, uvm, host, s->step_ms, r.step_ms, 100 * e[k]);
    if (s->peak_bytes > 0)
      printf("; peak %.1f GB, predicted %.1f", s->peak_bytes / 1e9, r.peak_memory_bytes / 1e9);
    if (s->gpu_busy_ms > 0)
      printf("; GPU busy %.2f, predicted %.2f (%+.0f%%)", s->gpu_busy_ms, r.gpu_ms,
             100 * (r.gpu_ms / s->gpu_busy_ms - 1));
    printf("\n");
    e[k] = fabs(e[k]);
    *mx = fmax(*mx, e[k++]);
  }
  double v = bench_median(e, k);
  free(e);
  return v;
}

int bench_uvm(const cost_hw *lent, int breakdown) {
  cost_uvm_sample *u = NULL, *ue = NULL;
  size_t n = 0, ne = 0;
  api_step_meas st = {0}, e2e = {0};
  if (load_uvm("data/measurements/h200-uvm/uvm_micro.json", &u, &n)) {
    fprintf(stderr, "no data/measurements/h200-uvm/uvm_micro.json: section (h) skipped\n");
    return 0;
  }
  cost_hw hw = *lent;
  cost_uvm_fit_report rep;
  if (cost_uvm_fit(lent, u, n, &hw.calib, &rep)) {
    fprintf(stderr, "uvm fit failed\n");
    free(u);
    return 1;
  }
  double cv[2];
  op_cv(lent, u, n, cv);
  printf("\n(h) tables in pinned host memory read by the GPU (uvm), lent H200\n"
         "  op (h200-uvm/uvm_micro.json, %zu rows): read_eff %.3f update_eff %.3f reach %.0f MB "
         "walk %.1f ns\n"
         "  fitted on %d fwd / %d fwd+bwd rows; in-sample median fwd %.1f%% (max %.1f%%), "
         "fwd+bwd %.1f%% (max %.1f%%); datasheet defaults %.1f%% / %.1f%%; 2-fold CV %.1f%% / "
         "%.1f%%\n",
         n, rep.values[COST_SP_UVM_READ_EFF], rep.values[COST_SP_UVM_UPDATE_EFF],
         rep.values[COST_SP_UVM_REACH_MB], rep.values[COST_SP_UVM_WALK_NS], rep.n_fwd,
         rep.n_fwd_bwd, 100 * rep.median_err_after[0], 100 * rep.max_err_after[0],
         100 * rep.median_err_after[1], 100 * rep.max_err_after[1], 100 * rep.median_err_before[0],
         100 * rep.median_err_before[1], 100 * cv[0], 100 * cv[1]);
  if (breakdown) print_rows(&hw, u, n);
  double s_med = NAN, s_max = 0, s2_med = NAN, s2_max = 0, sync = NAN;
  if (bench_load_meas("data/measurements/h200-uvm/uvm_steps.json", &st) == 0) {
    s_med = step_rows(&hw, &st,
                      "steps with uvm tables (h200-uvm/uvm_steps.json), sync default:", &s_max);
    cost_step_fit_report sr;
    cost_hw h2 = hw;
    if (cost_step_fit(&hw, st.s, st.n, &h2.calib, &sr) == 0) {
      /* only the sync term: the rest of the profile stays that of (g) */
      sync = sr.values[COST_SP_UVM_SYNC_US];
      h2 = hw;
      const char *name;
      cost_step_param_info(COST_SP_UVM_SYNC_US, &name, NULL, NULL, NULL);
      if (h2.calib.n < COST_MAX_CALIB) {
        snprintf(h2.calib.names[h2.calib.n], sizeof h2.calib.names[0], "%s", name);
        h2.calib.values[h2.calib.n++] = sync;
      }
      hw = h2;
      s2_med = step_rows(&hw, &st, "the same with the sync term fitted on them:", &s2_max);
      printf("  step_uvm_sync_us = %.0f\n", sync);
    }
  }
  /* the job's recipes priced before it runs: this lease's (uvm_micro.json)
   * uvm terms, the lent profile of (g), the sync term fitted above */
  api_step_meas job = {0};
  if (job_cases("validate/gpu/jobs/h200-uvm/e2e_uvm.json", &job) == 0) {
    printf("  the end-to-end job's cases, priced before the run (validate/gpu/jobs/h200-uvm/"
           "e2e_uvm.json):\n");
    for (size_t i = 0; i < job.n; i++) {
      const cost_step_sample *s = &job.s[i];
      cost_step_result r;
      int uvm = 0, host = 0;
      for (size_t t = 0; t < s->w.dlrm.n_tables; t++) {
        uvm += s->w.dlrm.tables[t].placement == COST_PLACE_UVM;
        host += s->w.dlrm.tables[t].placement == COST_PLACE_HOST;
      }
      if (cost_step(&hw, &s->w, &s->r, &r)) continue;
      printf("    case %zu: uvm=%d host=%d predicted %.2f ms (%.0f samples/s)\n", i, uvm, host,
             r.step_ms, s->r.batch_per_gpu / r.step_ms * 1e3);
    }
    api_step_meas_dispose(&job);
  }
  /* the pair as measured on each lease, with that lease's link fit */
  static const char *const pairs[][2] = {{"e2e_uvm.json", "uvm_micro_e2e.json"},
                                         {"e2e_uvm_repeat.json", "uvm_micro_e2e_repeat.json"}};
  double e_med = NAN, e_max = 0;
  for (int k = 0; k < 2; k++) {
    char pe[160], pm[160], title[256];
    snprintf(pe, sizeof pe, "data/measurements/h200-uvm/%s", pairs[k][0]);
    snprintf(pm, sizeof pm, "data/measurements/h200-uvm/%s", pairs[k][1]);
    api_step_meas_dispose(&e2e);
    memset(&e2e, 0, sizeof e2e);
    free(ue);
    ue = NULL;
    if (bench_load_meas(pe, &e2e)) continue;
    cost_hw he = hw;
    cost_uvm_fit_report re;
    if (load_uvm(pm, &ue, &ne) == 0 && cost_uvm_fit(&hw, ue, ne, &he.calib, &re) == 0)
      printf("  %s's op fit (%zu rows): read_eff %.3f update_eff %.3f reach %.0f MB walk %.1f ns; "
             "median fwd %.1f%%, fwd+bwd %.1f%%\n",
             pairs[k][1], ne, re.values[COST_SP_UVM_READ_EFF], re.values[COST_SP_UVM_UPDATE_EFF],
             re.values[COST_SP_UVM_REACH_MB], re.values[COST_SP_UVM_WALK_NS],
             100 * re.median_err_after[0], 100 * re.median_err_after[1]);
    snprintf(title, sizeof title,
             "end-to-end pair (h200-uvm/%s; uvm terms from that lease's %s):", pairs[k][0],
             pairs[k][1]);
    double mx, m = step_rows(&he, &e2e, title, &mx);
    if (k == 0) e_med = m, e_max = mx;
  }
  printf("{\"bench\":\"step_accuracy\",\"section\":\"uvm\",\"op_n\":%zu,"
         "\"op_fwd_median\":%.4f,\"op_fwd_bwd_median\":%.4f,\"op_cv_fwd\":%.4f,"
         "\"op_cv_fwd_bwd\":%.4f,\"steps_median\":%.4f,\"steps_max\":%.4f,"
         "\"steps_sync_fitted_median\":%.4f,\"sync_us\":%.1f,\"e2e_median\":%.4f,"
         "\"e2e_max\":%.4f}\n",
         n, rep.median_err_after[0], rep.median_err_after[1], cv[0], cv[1], s_med, s_max, s2_med,
         sync, e_med, e_max);
  free(u), free(ue);
  api_step_meas_dispose(&st);
  api_step_meas_dispose(&e2e);
  return 0;
}
