/* bench/step_accuracy: the step model against measurements.
 *
 * 1. DLRM on one H200 (data/measurements/h200/dlrm_step.json): predicted vs
 *    measured step time and peak memory per case, with (a) datasheet
 *    defaults, (b) the op models calibrated on gemm.json + memory_ops.json
 *    and the framework profile fitted on the step file (in-sample), and
 *    (c) leave-one-out: the profile refitted without each case; median and
 *    max error; the predicted ranking of the variants vs the measured one.
 * 2. Unseen cases (data/measurements/h200-extra/dlrm_step.json when
 *    present), predicted with the calibration of 1b, reported apart.
 * 3. Transformers against the published iteration times of Korthikanti et
 *    al. 2022 (data/measurements/published/megatron_recompute.json).
 * 4. The time of one estimate for a 1000-table DLRM.
 * Sections (g) (the lent machine's profile) and (h) (tables in pinned host
 * memory, bench/step_uvm.c) use the runner's rows from the lent H200.
 * Prints a table and one JSON line per section.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/measure.h"
#include "bench/bench.h"
#include "bench_cli.h"

static int g_breakdown; /* --breakdown: per-component ms under each case (and per uvm row) */

static int cmp_d(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return a < b ? -1 : a > b;
}
/* Median of v[0..n) (sorts v); NAN when n <= 0. Also bench/step_uvm.c's. */
double bench_median(double *v, int n) {
  if (n <= 0) return NAN;
  qsort(v, (size_t)n, sizeof *v, cmp_d);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
/* Max of v[0..n) (0 when n <= 0). Also bench/step_transformer.c's. */
double bench_max(const double *v, int n) {
  double m = 0;
  for (int i = 0; i < n; i++) m = fmax(m, v[i]);
  return m;
}

static int read_text(const char *path, char **text, size_t *len) {
  svc_err err;
  return svc_read_file(path, 64u << 20, text, len, &err);
}

/* Op-level calibration from the op measurement files of dir. */
static void calibrate_ops(const char *dir, cost_hw *hw) {
  const char *files[] = {"gemm.json", "memory_ops.json"};
  cost_sample *all = NULL;
  size_t total = 0;
  for (int i = 0; i < 2; i++) {
    char path[512], *text = NULL;
    size_t len = 0, k = 0;
    cost_sample *s = NULL;
    svc_err err;
    snprintf(path, sizeof path, "%s/%s", dir, files[i]);
    if (read_text(path, &text, &len)) continue;
    if (api_measure_load(text, len, &s, &k, &err) == 0) {
      all = realloc(all, (total + k) * sizeof *all);
      memcpy(all + total, s, k * sizeof *s);
      total += k;
    }
    free(s);
    free(text);
  }
  cost_calib c;
  memset(&c, 0, sizeof c);
  if (total && cost_calibrate(hw, all, total, &c, NULL) == 0) {
    c.version = 1;
    hw->calib = c;
  }
  free(all);
}

static void case_label(const cost_step_sample *s, char *buf, size_t n) {
  const cost_dlrm *d = &s->w.dlrm;
  snprintf(buf, n, "B=%-6lld %-4s D=%-3lld P=%-2lld top0=%-4lld%s%s", (long long)s->r.batch_per_gpu,
           cost_dtype_name((cost_dtype)s->r.precision), (long long)d->tables[0].dim,
           (long long)d->tables[0].pooling, (long long)d->top[0],
           d->pad_interaction_to ? " pad512" : "",
           s->r.placement == COST_PLACE_HOST ? " host" : "");
}

/* Kendall tau between two orderings of n values. */
static double kendall(const double *a, const double *b, int n, int *equal) {
  int conc = 0, disc = 0;
  *equal = 1;
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++) {
      double x = (a[i] - a[j]) * (b[i] - b[j]);
      if (x > 0)
        conc++;
      else if (x < 0) {
        disc++;
        *equal = 0;
      }
    }
  return conc + disc ? (double)(conc - disc) / (conc + disc) : 1.0;
}

typedef struct {
  double med_t, max_t, med_m, max_m, tau;
  int rank_equal, n;
} stats;

static stats evaluate(const cost_hw *hw, const api_step_meas *m, const double *prof_loo, int print,
                      const char *title) {
  int n = (int)m->n;
  double *et = calloc(n, sizeof *et), *em = calloc(n, sizeof *em);
  double *pt = calloc(n, sizeof *pt), *mt = calloc(n, sizeof *mt);
  stats st = {0};
  int kt = 0, km = 0;
  if (print)
    printf("\n%s\n%-44s %9s %9s %7s %9s %9s %7s\n", title, "case", "meas_ms", "pred_ms", "err",
           "meas_GB", "pred_GB", "err");
  for (int i = 0; i < n; i++) {
    const cost_step_sample *s = &m->s[i];
    cost_step_result r;
    char lab[96];
    int rc = prof_loo ? cost_step_p(hw, prof_loo + i * COST_SP__COUNT, &s->w, &s->r, &r)
                      : cost_step(hw, &s->w, &s->r, &r);
    if (rc) {
      printf("  case %d: model refused (%d)\n", i, rc);
      continue;
    }
    double e1 = r.step_ms / s->step_ms - 1,
           e2 = s->peak_bytes > 0 ? r.peak_memory_bytes / s->peak_bytes - 1 : NAN;
    pt[kt] = r.step_ms;
    mt[kt] = s->step_ms;
    et[kt++] = fabs(e1);
    if (isfinite(e2)) em[km++] = fabs(e2);
    case_label(s, lab, sizeof lab);
    if (print)
      printf("%-44s %9.2f %9.2f %+6.1f%% %9.2f %9.2f %+6.1f%%\n", lab, s->step_ms, r.step_ms,
             100 * e1, s->peak_bytes / 1e9, r.peak_memory_bytes / 1e9, 100 * e2);
    if (print && g_breakdown) {
      printf("    ms by component:");
      for (int c = 0; c < COST_COMP__COUNT; c++)
        printf(" %s %.2f", cost_component_name(c), r.comp_ms[c]);
      printf("\n");
    }
  }
  st.tau = kendall(pt, mt, kt, &st.rank_equal);
  st.n = kt;
  st.max_t = bench_max(et, kt);
  st.med_t = bench_median(et, kt);
  st.max_m = bench_max(em, km);
  st.med_m = bench_median(em, km);
  if (print)
    printf("  step time: median %.1f%%, max %.1f%% | peak memory: median %.1f%%, max %.1f%% | "
           "ranking equal: %s (Kendall tau %.3f)\n",
           100 * st.med_t, 100 * st.max_t, 100 * st.med_m, 100 * st.max_m,
           st.rank_equal ? "yes" : "no", st.tau);
  free(et), free(em), free(pt), free(mt);
  return st;
}

/* Precision ranking per batch: bf16 vs fp32 pairs with equal other knobs. */
static void pair_ranking(const cost_hw *hw, const api_step_meas *m, int *agree, int *pairs) {
  *agree = *pairs = 0;
  for (size_t i = 0; i < m->n; i++)
    for (size_t j = i + 1; j < m->n; j++) {
      const cost_step_sample *a = &m->s[i], *b = &m->s[j];
      if (a->r.batch_per_gpu != b->r.batch_per_gpu && a->r.precision != b->r.precision) continue;
      if (a->w.dlrm.tables[0].dim != b->w.dlrm.tables[0].dim ||
          a->w.dlrm.tables[0].pooling != b->w.dlrm.tables[0].pooling ||
          a->w.dlrm.top[0] != b->w.dlrm.top[0] ||
          a->w.dlrm.pad_interaction_to != b->w.dlrm.pad_interaction_to ||
          a->r.placement != b->r.placement)
        continue;
      cost_step_result ra, rb;
      if (cost_step(hw, &a->w, &a->r, &ra) || cost_step(hw, &b->w, &b->r, &rb)) continue;
      /* throughput ranking: samples/s */
      double ma = a->r.batch_per_gpu / a->step_ms, mb = b->r.batch_per_gpu / b->step_ms;
      double pa = a->r.batch_per_gpu / ra.step_ms, pb = b->r.batch_per_gpu / rb.step_ms;
      (*pairs)++;
      if ((ma - mb) * (pa - pb) > 0) {
        (*agree)++;
      } else {
        char la[96], lb[96];
        case_label(a, la, sizeof la);
        case_label(b, lb, sizeof lb);
        printf("  order differs: %s vs %s (measured %.0f vs %.0f samples/s, predicted %.0f vs "
               "%.0f)\n",
               la, lb, ma * 1e3, mb * 1e3, pa * 1e3, pb * 1e3);
      }
    }
}

/* A whole-step measurement file (also bench/step_uvm.c's). */
int bench_load_meas(const char *path, api_step_meas *m) {
  char *text = NULL;
  size_t len = 0;
  svc_err err;
  if (read_text(path, &text, &len)) return -1;
  int rc = api_step_meas_load(text, len, m, &err);
  if (rc) fprintf(stderr, "%s: %s (%s)\n", path, err.message, err.field);
  free(text);
  return rc;
}

/* (g) The host differs between machines: the framework profile (host time
 * per eager op, and the GPU terms, which the profiler's GPU busy time pins
 * down) refitted on what the runner measured on the lent H200
 * (h200-extra + h200-probe/step_shared + step_tables, never the end-to-end
 * workload),
 * then the end-to-end proof's rows predicted with it. */
static void bench_lent(const cost_hw *hw_ops, const api_step_meas *extra, cost_hw *lent) {
  api_step_meas pr = {0}, e2e = {0}, e2b = {0}, tb = {0};
  if (!extra->n || bench_load_meas("data/measurements/h200-probe/step_shared.json", &pr) ||
      bench_load_meas("data/measurements/h200-probe/step_tables.json", &tb) ||
      bench_load_meas("data/measurements/h200-e2e/dlrm_step.json", &e2e) ||
      bench_load_meas("data/measurements/h200-probe/step_e2e.json", &e2b))
    goto done;
  size_t n = extra->n + pr.n + tb.n;
  cost_step_sample *all = calloc(n, sizeof *all);
  if (!all) goto done;
  /* HBM-only rows: two all-host D=64 rows cannot pin the three host-path
   * parameters (they keep their defaults, as in the pre-run prediction) */
  n = 0;
  for (size_t i = 0; i < extra->n + pr.n + tb.n; i++) {
    const cost_step_sample *s = i < extra->n          ? &extra->s[i]
                                : i < extra->n + pr.n ? &pr.s[i - extra->n]
                                                      : &tb.s[i - extra->n - pr.n];
    if (!cost_step_sample_host(s)) all[n++] = *s;
  }
  cost_hw hw = *hw_ops;
  cost_step_fit_report rep;
  int rc = cost_step_fit(hw_ops, all, n, &hw.calib, &rep);
  *lent = hw;
  free(all);
  if (rc) {
    fprintf(stderr, "lent-machine step fit failed\n");
    goto done;
  }
  printf("\n(g) profile refitted on the runner's rows from the lent H200 (HBM rows of h200-extra, "
         "h200-probe step_shared and step_tables: %d cases):",
         rep.n);
  for (int i = 0; i < COST_SP__COUNT; i++) {
    const char *name;
    cost_step_param_info(i, &name, NULL, NULL, NULL);
    if (rep.fitted[i]) printf(" %s=%.4g", name, rep.values[i]);
  }
  printf("\n  in-sample step median %.1f%% max %.1f%%; leave-one-out median %.1f%% max %.1f%%\n",
         100 * rep.median_step_err, 100 * rep.max_step_err, 100 * rep.median_step_err_loo,
         100 * rep.max_step_err_loo);
  stats a = evaluate(&hw, &e2e, NULL, 1,
                     "  end-to-end proof rows (h200-e2e/dlrm_step.json; host tables as measured)");
  stats b = evaluate(&hw, &e2b, NULL, 1,
                     "  the e2e workload again, all in HBM, full and 1/10 rows (h200-probe)");
  /* the GPU's share alone, where the profiler measured it (never fitted
   * for the e2e workload) */
  printf("  GPU busy per step, predicted vs profiled:");
  double ge[64];
  int ng = 0;
  const api_step_meas *sets[2] = {&pr, &e2b};
  for (int k = 0; k < 2; k++)
    for (size_t i = 0; i < sets[k]->n && ng < 64; i++) {
      const cost_step_sample *s = &sets[k]->s[i];
      cost_step_result r;
      /* host-placed tables: the profiler counts their pageable copies */
      if (cost_step_sample_host(s) || !(s->gpu_busy_ms > 0) || cost_step(&hw, &s->w, &s->r, &r))
        continue;
      ge[ng] = r.gpu_ms / s->gpu_busy_ms - 1;
      printf(" %+.0f%%", 100 * ge[ng]);
      ge[ng] = fabs(ge[ng]);
      ng++;
    }
  printf("\n  (step_shared rows, then the e2e HBM rows); median |error| %.1f%%\n",
         100 * bench_median(ge, ng));
  printf("{\"bench\":\"step_accuracy\",\"section\":\"e2e_lent_profile\",\"fit_n\":%d,"
         "\"loo_median\":%.4f,\"e2e\":{\"n\":%d,\"step_median\":%.4f,\"step_max\":%.4f},"
         "\"probe_e2e\":{\"n\":%d,\"step_median\":%.4f,\"step_max\":%.4f}}\n",
         rep.n, rep.median_step_err_loo, a.n, a.med_t, a.max_t, b.n, b.med_t, b.max_t);
done:
  api_step_meas_dispose(&pr);
  api_step_meas_dispose(&tb);
  api_step_meas_dispose(&e2e);
  api_step_meas_dispose(&e2b);
}

int main(int argc, char **argv) {
  int cli = bench_cli(argc, argv, "[--breakdown]", "--breakdown", 0);
  if (cli >= 0) return cli;
  g_breakdown = argc > 1; /* bench_cli let through --breakdown only */
  api_ctx *ctx = NULL;
  svc_err err;
  cost_hw hw, hw0;
  api_step_meas m = {0}, x = {0};
  if (api_ctx_new(&ctx, ":memory:", &err) || api_hw_lookup(ctx, "h200", 0, &hw0, &err)) {
    fprintf(stderr, "setup: %s\n", err.message);
    return 1;
  }
  if (bench_load_meas("data/measurements/h200/dlrm_step.json", &m)) {
    fprintf(stderr, "no data/measurements/h200/dlrm_step.json (run from the repository root)\n");
    return 1;
  }
  printf("step_accuracy: DLRM training step on one H200 (plain PyTorch eager)\n");
  stats s0 = evaluate(&hw0, &m, NULL, 1, "(a) datasheet only (op defaults, profile defaults)");

  hw = hw0;
  calibrate_ops("data/measurements/h200", &hw);
  cost_hw hw_ops = hw;
  stats s1 = evaluate(&hw_ops, &m, NULL, 1, "(a') op models calibrated, profile defaults");
  cost_step_fit_report rep;
  if (cost_step_fit(&hw_ops, m.s, m.n, &hw.calib, &rep)) {
    fprintf(stderr, "step fit failed\n");
    return 1;
  }
  printf("\nprofile fitted on %d cases:", rep.n);
  for (int i = 0; i < COST_SP__COUNT; i++) {
    const char *name;
    cost_step_param_info(i, &name, NULL, NULL, NULL);
    if (rep.fitted[i]) printf(" %s=%.4g", name, rep.values[i]);
  }
  printf("\n");
  stats s2 = evaluate(&hw, &m, NULL, 1, "(b) op models calibrated + profile fitted (in-sample)");
  int agree, pairs;
  pair_ranking(&hw, &m, &agree, &pairs);
  printf("  variant pairs (batch or precision changed, rest equal) ordered alike: %d/%d\n", agree,
         pairs);
  printf("(c) leave-one-out: step median %.1f%% max %.1f%%, memory median %.1f%% max %.1f%%\n",
         100 * rep.median_step_err_loo, 100 * rep.max_step_err_loo, 100 * rep.median_mem_err_loo,
         100 * rep.max_mem_err_loo);
  printf(
      "{\"bench\":\"step_accuracy\",\"section\":\"dlrm_h200\",\"n\":%d,"
      "\"datasheet\":{\"step_median\":%.4f,\"step_max\":%.4f,\"mem_median\":%.4f,\"mem_max\":%.4f},"
      "\"ops_calibrated\":{\"step_median\":%.4f,\"step_max\":%.4f},"
      "\"fitted\":{\"step_median\":%.4f,\"step_max\":%.4f,\"mem_median\":%.4f,\"mem_max\":%.4f,"
      "\"ranking_equal\":%s,\"kendall_tau\":%.4f,\"pairs_agree\":%d,\"pairs\":%d},"
      "\"loo\":{\"step_median\":%.4f,\"step_max\":%.4f,\"mem_median\":%.4f,\"mem_max\":%.4f}}\n",
      s2.n, s0.med_t, s0.max_t, s0.med_m, s0.max_m, s1.med_t, s1.max_t, s2.med_t, s2.max_t,
      s2.med_m, s2.max_m, s2.rank_equal ? "true" : "false", s2.tau, agree, pairs,
      rep.median_step_err_loo, rep.max_step_err_loo, rep.median_mem_err_loo, rep.max_mem_err_loo);

  if (bench_load_meas("data/measurements/h200-extra/dlrm_step.json", &x) == 0) {
    stats s3 = evaluate(&hw, &x, NULL, 1,
                        "(d) unseen cases, data/measurements/h200-extra (calibration of (b))");
    pair_ranking(&hw, &x, &agree, &pairs);
    printf("  variant pairs ordered alike: %d/%d\n", agree, pairs);
    printf("{\"bench\":\"step_accuracy\",\"section\":\"dlrm_h200_unseen\",\"n\":%d,"
           "\"step_median\":%.4f,\"step_max\":%.4f,\"mem_median\":%.4f,\"mem_max\":%.4f,"
           "\"ranking_equal\":%s,\"kendall_tau\":%.4f,\"pairs_agree\":%d,\"pairs\":%d}\n",
           s3.n, s3.med_t, s3.max_t, s3.med_m, s3.max_m, s3.rank_equal ? "true" : "false", s3.tau,
           agree, pairs);
  }
  cost_hw lent = hw;
  bench_lent(&hw_ops, &x, &lent);
  int rc = bench_uvm(&lent, g_breakdown);
  rc |= bench_transformers(ctx);
  rc |= bench_transformer_h200(&hw);
  rc |= bench_thousand(&hw);
  rc |= bench_dcn(ctx);
  api_step_meas_dispose(&m);
  api_step_meas_dispose(&x);
  api_ctx_free(ctx);
  return rc;
}

/* ---- transformers vs Korthikanti et al. 2022, Table 5 -------------------- */

int bench_transformers(api_ctx *ctx) {
  char *text = NULL;
  size_t len = 0;
  svc_err err;
  cost_hw hw;
  if (read_text("data/measurements/published/megatron_recompute.json", &text, &len)) {
    printf("no data/measurements/published/megatron_recompute.json\n");
    return 1;
  }
  cJSON *doc = cJSON_ParseWithLength(text, len);
  free(text);
  const char *hwname = cJSON_GetStringValue(cJSON_GetObjectItem(doc, "hardware"));
  if (!doc || !hwname || api_hw_lookup(ctx, hwname, 0, &hw, &err)) {
    printf("published table: cannot read (%s)\n", hwname ? hwname : "?");
    cJSON_Delete(doc);
    return 1;
  }
  printf("\n(e) transformers vs published iteration times (%s, datasheet only)\n", hw.name);
  printf("%-8s %-10s %10s %10s %7s %6s %8s\n", "model", "recompute", "meas_s", "pred_s", "err",
         "MFU", "bubble");
  double sum = 0, mx = 0;
  int n = 0;
  const cJSON *row;
  cJSON_ArrayForEach(row, cJSON_GetObjectItem(doc, "rows")) {
    cost_workload w;
    cost_recipe r;
    cost_step_result res;
    const char *model = cJSON_GetStringValue(cJSON_GetObjectItem(row, "model"));
    char *rt = cJSON_PrintUnformatted(row);
    int bad = rt ? api_meas_case_decode(rt, strlen(rt), &w, &r, &err)
                 : svc_err_set(&err, SVC_NOMEM, "", NULL);
    free(rt);
    if (bad) {
      printf("%s: %s\n", model, err.message);
      continue;
    }
    double meas = cJSON_GetNumberValue(cJSON_GetObjectItem(row, "iteration_s"));
    if (cost_step(&hw, &w, &r, &res)) {
      printf("%s: model refused\n", model);
      continue;
    }
    double e = res.step_ms / 1e3 / meas - 1;
    sum += fabs(e);
    mx = fmax(mx, fabs(e));
    n++;
    printf("%-8s %-10s %10.2f %10.2f %+6.1f%% %5.1f%% %7.3f\n", model,
           cost_ckpt_name(r.checkpointing), meas, res.step_ms / 1e3, 100 * e, 100 * res.mfu,
           res.pipeline_bubble);
    api_workload_dispose(&w);
  }
  printf("  mean |error| %.1f%%, max %.1f%% over %d rows\n", n ? 100 * sum / n : NAN, 100 * mx, n);
  printf("{\"bench\":\"step_accuracy\",\"section\":\"transformer_published\",\"n\":%d,"
         "\"mean_error\":%.4f,\"max_error\":%.4f}\n",
         n, n ? sum / n : NAN, mx);
  cJSON_Delete(doc);
  return 0;
}

/* ---- one estimate of a 1000-table model ---------------------------------- */

int bench_thousand(const cost_hw *hw) {
  enum { NT = 1000 };
  static cost_table t[NT];
  cost_workload w;
  cost_recipe r;
  cost_step_result res;
  memset(&w, 0, sizeof w);
  for (int i = 0; i < NT; i++) {
    memset(&t[i], 0, sizeof t[i]);
    t[i].rows = 1000 + (int64_t)(i * 7919 % 1000) * 20000;
    t[i].dim = 16;
    t[i].pooling = 1 + i % 20;
    t[i].count = 1;
    t[i].sharding = t[i].placement = -1;
  }
  w.kind = COST_WL_DLRM;
  w.dlrm = (cost_dlrm){.dense_features = 13,
                       .n_tables = NT,
                       .tables = t,
                       .n_bottom = 3,
                       .n_top = 4,
                       .bottom = {512, 256, 16},
                       .top = {1024, 512, 256, 1},
                       .interaction = COST_INTER_DCN,
                       .cross_layers = 2,
                       .dense_optimizer = COST_OPT_ADAM,
                       .sparse_optimizer = COST_OPT_ROWWISE_ADAGRAD};
  cost_recipe_init(&r);
  r.gpus = 64;
  r.batch_per_gpu = 4096;
  r.precision = COST_DT_BF16;
  r.framework = COST_FW_TORCHREC_FBGEMM;
  r.sharding = COST_SHARD_TABLE_WISE;
  /* CPU time of this process (wall time on a shared machine includes
   * other processes' turns) */
  struct timespec a, b;
  int reps = 200;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
  for (int i = 0; i < reps; i++)
    if (cost_step(hw, &w, &r, &res)) return 1;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
  double us = ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / 1e3 / reps;
  printf("\n(f) one step estimate, 1000-table DLRM (dim 16, DCN) on 64 GPUs (table-wise, "
         "TorchRec): %.1f us CPU "
         "(target <= 1000 us); predicted step %.2f ms, peak %.1f GB\n",
         us, res.step_ms, res.peak_memory_bytes / 1e9);
  printf("{\"bench\":\"step_accuracy\",\"section\":\"thousand_tables\",\"us_per_estimate\":%.2f}\n",
         us);
  return 0;
}
