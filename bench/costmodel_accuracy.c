/* bench/costmodel_accuracy: how close the cost model comes to the H200
 * measurements in data/measurements/h200, per op class and dtype:
 *   roofline   measured ceilings (ceilings.json) + a fixed 5 us launch
 *   datasheet  the model with its default parameters, descriptor only
 *   cv         calibrated with 2-fold cross-validation over shapes (a
 *              shape's every dtype/pass in the same fold; fit on one,
 *              report on the other)
 *   in-sample  calibrated on everything, reported on everything
 *   held-out   calibrated on everything in data/measurements/h200, reported
 *              on data/measurements/h200-extra (shapes never fitted: the
 *              honest generalization figure; blank when the folder is absent)
 * plus GEMM estimates per second on one core. Prints a table and one JSON
 * line (for the README). Usage: costmodel_accuracy [source_dir]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/costmodel_load.h"
#include "costmodel/costmodel.h"
#include "bench_cli.h"

enum { M_ROOF, M_SHEET, M_CV, M_IN, M__N };
static const char *mname[M__N] = {"roofline", "datasheet", "cv", "in-sample"};

static double naive(const cost_sample *s, double copy, const double *fl) {
  double b, t = 5e-6;
  switch (s->kind) {
  case COST_OP_GEMM: {
    const cost_gemm_op *g = &s->u.gemm;
    b = cost_dtype_bytes((cost_dtype)g->dtype);
    double bo = b < 2 ? 2 : b;
    double bytes = (double)g->m * g->k * b + (double)g->k * g->n * b + (double)g->m * g->n * bo;
    double fc = fl[g->dtype] > 0 ? fl[g->dtype] : 1e12;
    t += fmax(2.0 * g->m * g->n * g->k / fc, bytes / copy);
    break;
  }
  case COST_OP_ELEMENTWISE: {
    static const double rw[] = {3, 2, 2, 2};
    t += (double)s->u.ew.numel * rw[s->u.ew.kind] * cost_dtype_bytes((cost_dtype)s->u.ew.dtype) /
         copy;
    break;
  }
  default: {
    const cost_embedding_op *e = &s->u.emb;
    double rb = (double)e->dim * cost_dtype_bytes((cost_dtype)e->dtype),
           look = (double)e->batch * e->pooling;
    double bytes = look * (rb + 8) + e->batch * rb;
    if (e->pass == COST_EMB_FWD_BWD) {
      bytes += 2 * look * rb;
      t += 5e-6;
    }
    t += bytes / copy;
  }
  }
  return t * 1e3;
}

static int dtype_of(const cost_sample *s) {
  return s->kind == COST_OP_GEMM
             ? s->u.gemm.dtype
             : (s->kind == COST_OP_ELEMENTWISE ? s->u.ew.dtype : s->u.emb.dtype);
}

static int cmpd(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void stats(double *v, size_t n, double *med, double *p90) {
  if (!n) {
    *med = *p90 = NAN;
    return;
  }
  qsort(v, n, sizeof *v, cmpd);
  *med = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  size_t k = (size_t)ceil(0.9 * (double)n);
  *p90 = v[k ? k - 1 : 0];
}

static double now(void) {
  struct timespec ts;
  /* CPU time of this thread: the rate one core sustains, not diluted
   * when the machine is shared. */
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  int cli = bench_cli(argc, argv, "[SOURCE_DIR]", "", 1);
  if (cli >= 0) return cli;
  const char *src = argc > 1 ? argv[1] : CDPLAN_SOURCE_DIR;
  char path[2048], dir[1024];
  cost_hw hw, cal;
  cost_sample *s = NULL;
  size_t n = 0;
  double copy = 0, fl[COST_DT__COUNT] = {0};
  snprintf(path, sizeof path, "%s/data/hardware/h200.json", src);
  snprintf(dir, sizeof dir, "%s/data/measurements/h200", src);
  if (cm_load_hw(path, &hw) || cm_load_samples(dir, &s, &n) || cm_load_ceilings(dir, &copy, fl))
    return 1;

  cost_sample *x = NULL;
  size_t nx = 0;
  snprintf(dir, sizeof dir, "%s/data/measurements/h200-extra", src);
  FILE *probe = NULL;
  snprintf(path, sizeof path, "%s/gemm.json", dir);
  if ((probe = fopen(path, "rb")) != NULL) {
    fclose(probe);
    if (cm_load_samples(dir, &x, &nx)) nx = 0;
  }

  double *pred[M__N], *err = malloc((n > nx ? n : nx) * sizeof *err);
  double *predx = calloc(nx ? nx : 1, sizeof(double));
  for (int m = 0; m < M__N; m++) pred[m] = calloc(n, sizeof(double));
  cost_sample *fold[2];
  size_t nf[2] = {0, 0};
  fold[0] = malloc(n * sizeof *s);
  fold[1] = malloc(n * sizeof *s);
  for (size_t i = 0; i < n; i++) {
    int f = cm_fold(&s[i]);
    fold[f][nf[f]++] = s[i];
  }
  cost_calib cf[2], call;
  cost_fit_report rep;
  for (int f = 0; f < 2; f++) cost_calibrate(&hw, fold[f], nf[f], &cf[f], NULL);
  cost_calibrate(&hw, s, n, &call, &rep);
  for (size_t i = 0; i < n; i++) {
    cost_result r;
    pred[M_ROOF][i] = naive(&s[i], copy, fl);
    pred[M_SHEET][i] = cost_sample_predict(&hw, &s[i], &r) == 0 ? r.ms : NAN;
    cal = hw;
    cal.calib = cf[1 - cm_fold(&s[i])];
    pred[M_CV][i] = cost_sample_predict(&cal, &s[i], &r) == 0 ? r.ms : NAN;
    cal.calib = call;
    pred[M_IN][i] = cost_sample_predict(&cal, &s[i], &r) == 0 ? r.ms : NAN;
  }

  cal = hw;
  cal.calib = call;
  for (size_t i = 0; i < nx; i++) {
    cost_result r;
    predx[i] = cost_sample_predict(&cal, &x[i], &r) == 0 ? r.ms : NAN;
  }

  printf("cost model vs H200 measurements (%zu samples fitted, %zu held out; relative error "
         "|pred/meas-1|, median / p90)\n\n",
         n, nx);
  printf("%-18s %-5s %5s", "class", "dtype", "n");
  for (int m = 0; m < M__N; m++) printf("  %17s", mname[m]);
  printf("  %5s  %17s\n", "n_ho", "held-out");
  char json[16384];
  size_t jl = (size_t)snprintf(
      json, sizeof json, "{\"bench\":\"costmodel_accuracy\",\"samples\":%zu,\"classes\":[", n);
  int first = 1;
  for (int c = 0; c < COST_CLASS__COUNT; c++) {
    for (int dt = -1; dt < COST_DT__COUNT; dt++) {
      size_t k = 0, kx = 0;
      for (size_t i = 0; i < n; i++)
        if (cost_sample_class(&s[i]) == c && (dt < 0 || dtype_of(&s[i]) == dt)) k++;
      for (size_t i = 0; i < nx; i++)
        if (cost_sample_class(&x[i]) == c && (dt < 0 || dtype_of(&x[i]) == dt)) kx++;
      if (!k && !kx) continue;
      printf("%-18s %-5s %5zu", cost_class_name(c),
             dt < 0 ? "all" : cost_dtype_name((cost_dtype)dt), k);
      jl += (size_t)snprintf(json + jl, sizeof json - jl,
                             "%s{\"class\":\"%s\",\"dtype\":\"%s\",\"n\":%zu,\"n_held_out\":%zu",
                             first ? "" : ",", cost_class_name(c),
                             dt < 0 ? "all" : cost_dtype_name((cost_dtype)dt), k, kx);
      first = 0;
      for (int m = 0; m <= M__N; m++) {
        const cost_sample *set = m < M__N ? s : x;
        const double *pr = m < M__N ? pred[m] : predx;
        size_t q = 0, ns = m < M__N ? n : nx;
        for (size_t i = 0; i < ns; i++)
          if (cost_sample_class(&set[i]) == c && (dt < 0 || dtype_of(&set[i]) == dt))
            err[q++] = fabs(pr[i] / set[i].ms - 1.0);
        if (m == M__N) printf("  %5zu", kx);
        if (!q) {
          printf("  %17s", "-");
          continue;
        }
        double med, p90;
        stats(err, q, &med, &p90);
        printf("  %7.1f%% / %6.1f%%", 100 * med, 100 * p90);
        jl += (size_t)snprintf(json + jl, sizeof json - jl, ",\"%s\":[%.4f,%.4f]",
                               m < M__N ? mname[m] : "held-out", med, p90);
      }
      printf("\n");
      jl += (size_t)snprintf(json + jl, sizeof json - jl, "}");
    }
    printf("\n");
  }

  /* Estimates per second: calibrated descriptor, the GEMM shapes cycled. */
  cal = hw;
  cal.calib = call;
  size_t ng = 0;
  cost_gemm_op *ops = malloc(n * sizeof *ops);
  for (size_t i = 0; i < n; i++)
    if (s[i].kind == COST_OP_GEMM) ops[ng++] = s[i].u.gemm;
  const long iters = 2000000;
  double sink = 0, t0 = now();
  for (long i = 0; i < iters; i++) {
    cost_result r;
    cost_gemm(&cal, &ops[(size_t)i % ng], &r);
    sink += r.ms;
  }
  double rate = iters / (now() - t0);
  printf("GEMM estimates per second (one core, calibrated descriptor): %.0f   (checksum %.3g)\n\n",
         rate, sink);

  printf("calibrated parameters (all samples; %d LM iterations, rms log error %.3f -> %.3f):\n",
         rep.iterations, rep.rms_log_before, rep.rms_log_after);
  for (int i = 0; i < cost_param_count(); i++) {
    const char *nm;
    double def, lo, hi;
    cost_param_info(i, &hw, &nm, &def, &lo, &hi);
    printf("  %-26s default %-9.4g fitted %-9.4g [%g, %g]\n", nm, def, call.values[i], lo, hi);
  }
  jl += (size_t)snprintf(json + jl, sizeof json - jl, "],\"gemm_estimates_per_s\":%.0f}", rate);
  printf("\n%s\n", json);

  for (int m = 0; m < M__N; m++) free(pred[m]);
  free(err);
  free(fold[0]);
  free(fold[1]);
  free(ops);
  free(s);
  free(x);
  free(predx);
  return 0;
}
