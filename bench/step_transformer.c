/* bench/step_transformer.c: section (f) of bench/step_accuracy -- the
 * transformer step model against one H200 (data/measurements/
 * h200-transformer: the runner's transformer_step, 56 cases split into fit
 * and check before they ran, and a causal FlashAttention sweep split the
 * same way).
 *
 * The flash-attention terms are fitted on attention_fit.json only
 * (cost_flash_fit); the check sweep and every step case are then predicted
 * with them. No term is fitted on whole steps: the fit/check split of the
 * steps shows that nothing was tuned to them. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/measure.h"
#include "bench/bench.h"

static cJSON *load(const char *path) {
  char *text = NULL;
  size_t len = 0;
  svc_err err;
  if (svc_read_file(path, 64u << 20, &text, &len, &err)) {
    printf("  %s: %s\n", path, err.message);
    return NULL;
  }
  cJSON *d = cJSON_ParseWithLength(text, len);
  free(text);
  return d;
}

static int load_flash(const char *path, cost_flash_sample **s, size_t *n) {
  char *text = NULL;
  size_t len = 0;
  svc_err err;
  if (svc_read_file(path, 64u << 20, &text, &len, &err)) return -1;
  int rc = api_flash_load(text, len, s, n, &err);
  free(text);
  return rc;
}

typedef struct {
  double t[2][64], m[2][64];
  int n[2];
} errs;

static void score_steps(const cost_hw *hw, const cJSON *cases, const cJSON *rows, errs *E,
                        int print) {
  memset(E, 0, sizeof *E);
  const cJSON *c = cases ? cases->child : NULL, *r = rows ? rows->child : NULL;
  for (; c && r; c = c->next, r = r->next) {
    cost_workload w;
    cost_recipe rc;
    cost_step_result res;
    svc_err err;
    const char *role = cJSON_GetStringValue(cJSON_GetObjectItem(c, "role"));
    int k = role && !strcmp(role, "check");
    char *ct = cJSON_PrintUnformatted(c);
    int bad = !ct || api_meas_case_decode(ct, strlen(ct), &w, &rc, &err);
    free(ct);
    if (bad || cost_step(hw, &w, &rc, &res)) {
      printf("  %s: not priced\n", cJSON_GetStringValue(cJSON_GetObjectItem(c, "id")));
      continue;
    }
    double ms = cJSON_GetNumberValue(cJSON_GetObjectItem(r, "step_ms"));
    double pk = cJSON_GetNumberValue(cJSON_GetObjectItem(r, "peak_mem_bytes"));
    if (!(ms > 0) || !(pk > 0) || E->n[k] >= 64) continue;
    double et = res.step_ms / ms - 1, em = res.peak_memory_bytes / pk - 1;
    E->t[k][E->n[k]] = fabs(et);
    E->m[k][E->n[k]++] = fabs(em);
    if (print && k)
      printf("  %-5s %-46s %8.1f %8.1f %+6.1f%% %6.1f %6.1f %+6.1f%%\n",
             cJSON_GetStringValue(cJSON_GetObjectItem(c, "id")),
             cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(c, "workload"), "name")),
             ms, res.step_ms, 100 * et, pk / 1e9, res.peak_memory_bytes / 1e9, 100 * em);
  }
}

/* score one folder's cases.json + steps.json (fit and check halves) */
static int score_dir(const cost_hw *hw, const cost_hw *hwf, const char *dir, const char *section) {
  char p1[256], p2[256];
  snprintf(p1, sizeof p1, "%s/cases.json", dir);
  snprintf(p2, sizeof p2, "%s/steps.json", dir);
  cJSON *cd = load(p1), *sd = load(p2);
  const cJSON *cases = cJSON_GetObjectItem(cd, "cases"), *rows = cJSON_GetObjectItem(sd, "rows");
  if (!cases || !rows) {
    printf("  no transformer steps\n");
    cJSON_Delete(cd);
    cJSON_Delete(sd);
    return 1;
  }
  errs a, b;
  score_steps(hw, cases, rows, &a, 0);
  printf("  check cases (flash fitted)   meas_ms  pred_ms   err   meas_GB pred_GB  err\n");
  score_steps(hwf, cases, rows, &b, 1);
  const char *nm[2] = {"fit", "check"};
  for (int k = 0; k < 2; k++) {
    printf("  %-5s n=%d  time: datasheet median %.1f%% max %.1f%%, flash fitted median %.1f%% "
           "max %.1f%%; memory median %.1f%% max %.1f%%\n",
           nm[k], b.n[k], 100 * bench_median(a.t[k], a.n[k]), 100 * bench_max(a.t[k], a.n[k]),
           100 * bench_median(b.t[k], b.n[k]), 100 * bench_max(b.t[k], b.n[k]),
           100 * bench_median(b.m[k], b.n[k]), 100 * bench_max(b.m[k], b.n[k]));
    printf("{\"bench\":\"step_accuracy\",\"section\":\"%s_%s\",\"n\":%d,"
           "\"datasheet\":{\"step_median\":%.4f,\"step_max\":%.4f},"
           "\"flash_fitted\":{\"step_median\":%.4f,\"step_max\":%.4f,\"mem_median\":%.4f,"
           "\"mem_max\":%.4f}}\n",
           section, nm[k], b.n[k], bench_median(a.t[k], a.n[k]), bench_max(a.t[k], a.n[k]),
           bench_median(b.t[k], b.n[k]), bench_max(b.t[k], b.n[k]), bench_median(b.m[k], b.n[k]),
           bench_max(b.m[k], b.n[k]));
  }
  cJSON_Delete(cd);
  cJSON_Delete(sd);
  return 0;
}

int bench_transformer_h200(const cost_hw *hw_in) {
  const char *dir = "data/measurements/h200-transformer";
  char p1[256], p2[256];
  cost_flash_sample *fit = NULL, *chk = NULL;
  size_t nf = 0, nc = 0;
  snprintf(p1, sizeof p1, "%s/attention_fit.json", dir);
  snprintf(p2, sizeof p2, "%s/attention_check.json", dir);
  printf("\n(f) transformer steps and flash attention on the H200 (%s)\n", dir);
  if (load_flash(p1, &fit, &nf) || load_flash(p2, &chk, &nc)) {
    printf("  no attention sweep\n");
    free(fit);
    free(chk);
    return 1;
  }
  cost_hw hw = *hw_in, hwf = *hw_in;
  cost_flash_fit_report rep;
  if (cost_flash_fit(&hwf, fit, nf, &hwf.calib, &rep)) {
    printf("  flash fit failed\n");
    free(fit);
    free(chk);
    return 1;
  }
  double d0, d1, f0, f1;
  cost_flash_error(&hw, chk, nc, &d0, &d1);
  cost_flash_error(&hwf, chk, nc, &f0, &f1);
  printf("  flash fit on %zu shapes: eff fwd %.3f bwd %.3f, block fwd %.2f bwd %.2f tiles, "
         "hd0 %.0f (in-sample median %.1f%%)\n",
         nf, rep.eff_f, rep.eff_b, rep.block_f, rep.block_b, rep.hd0, 100 * rep.median_err);
  printf("  flash attention, %zu held-out shapes (fwd and bwd): datasheet median %.1f%% max "
         "%.1f%%; fitted median %.1f%% max %.1f%%\n",
         nc, 100 * d0, 100 * d1, 100 * f0, 100 * f1);
  printf(
      "{\"bench\":\"step_accuracy\",\"section\":\"flash_h200\",\"n\":%zu,"
      "\"datasheet\":{\"median\":%.4f,\"max\":%.4f},\"fitted\":{\"median\":%.4f,\"max\":%.4f}}\n",
      nc, d0, d1, f0, f1);
  free(fit);
  free(chk);

  int rc = score_dir(&hw, &hwf, dir, "transformer_h200");
  printf("\n  Llama-like cases (GQA, rotary, SwiGLU + RMSNorm; predicted before they ran): %s\n",
         "data/measurements/h200-transformer-llama");
  return rc |
         score_dir(&hw, &hwf, "data/measurements/h200-transformer-llama", "transformer_llama_h200");
}