/* test_costmodel_calibration: regression gate on the in-repo H200 data.
 * 2-fold cross-validation over shapes (bench/costmodel_load.c's fold):
 * fit on one half, measure the error on the other.
 *
 * The targets are GEMM median 7% / p90 20% and embedding bags and
 * memory-bound ops median 10%. Elementwise ops and embedding forward meet
 * theirs and are gated at the target. GEMM reaches p90 19.9% (target met)
 * but median 7.4%; embedding forward+backward 17.5% (host-side timing
 * noise in the small cases: docs/model.md "Round 3"). Both are gated just
 * above what the model reaches now (GEMM 7.6% / 20.5%), so a regression
 * fails this test while the targets stay open (docs/benchmarks.md, "Cost model
 * accuracy"). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

#include "api/measure.h"
#include "bench/costmodel_load.h"
#include "common/common.h"
#include "costmodel/costmodel.h"

static int cmpd(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void test_costmodel_calibration__cv_error_within_gates(void **state) {
  (void)state;
  cost_hw hw, cal;
  cost_sample *s = NULL, *fold[2];
  size_t n = 0, nf[2] = {0, 0};
  assert_int_equal(cm_load_hw(CDPLAN_SOURCE_DIR "/data/hardware/h200.json", &hw), 0);
  assert_int_equal(cm_load_samples(CDPLAN_SOURCE_DIR "/data/measurements/h200", &s, &n), 0);
  assert_true(n > 500);
  fold[0] = malloc(n * sizeof *s);
  fold[1] = malloc(n * sizeof *s);
  for (size_t i = 0; i < n; i++) {
    int f = cm_fold(&s[i]);
    fold[f][nf[f]++] = s[i];
  }
  cost_calib c[2];
  for (int f = 0; f < 2; f++) assert_int_equal(cost_calibrate(&hw, fold[f], nf[f], &c[f], NULL), 0);
  double *err[COST_CLASS__COUNT];
  size_t ne[COST_CLASS__COUNT] = {0};
  for (int k = 0; k < COST_CLASS__COUNT; k++) err[k] = malloc(n * sizeof(double));
  for (size_t i = 0; i < n; i++) {
    cost_result r;
    cal = hw;
    cal.calib = c[1 - cm_fold(&s[i])];
    assert_int_equal(cost_sample_predict(&cal, &s[i], &r), 0);
    int k = cost_sample_class(&s[i]);
    err[k][ne[k]++] = fabs(r.ms / s[i].ms - 1);
  }
  /* gemm, elementwise, embedding_fwd, embedding_fwd_bwd */
  const double med_max[COST_CLASS__COUNT] = {0.071, 0.10, 0.10, 0.19};
  const double gemm_p90_max = 0.197;
  int ok = 1;
  for (int k = 0; k < COST_CLASS__COUNT; k++) {
    qsort(err[k], ne[k], sizeof(double), cmpd);
    double med = err[k][ne[k] / 2], p90 = err[k][(size_t)ceil(0.9 * ne[k]) - 1];
    printf("%-18s n=%4zu  cv median %5.1f%%  p90 %5.1f%%\n", cost_class_name(k), ne[k], 100 * med,
           100 * p90);
    if (med > med_max[k]) ok = 0;
    if (k == COST_CLASS_GEMM && p90 > gemm_p90_max) ok = 0;
    free(err[k]);
  }
  free(fold[0]);
  free(fold[1]);
  free(s);
  assert_true(ok);
}

/* Issue 25's GEMM-time target: on the awkward shapes never fitted
 * (data/measurements/h200-awkward/blind_gemm.json, the cuBLAS rows of the
 * first blind half; the GEMM model is calibrated on data/measurements/h200
 * only) whose K or N is not a multiple of 8, median <= 8 % and p90 <= 20 %
 * of |pred/meas - 1| (p90 interpolated as bench/kernel_awkward prints it).
 * 9.4 / 27.2 % before the 32x32 unaligned tiles and the element-wise C
 * stores (costmodel/gemm.c); 7.0 / 18.3 % with them. */
static double pct(double *v, size_t n, double q) {
  qsort(v, n, sizeof *v, cmpd);
  double pos = q * (double)(n - 1);
  size_t i = (size_t)pos;
  return i + 1 < n ? v[i] + (pos - (double)i) * (v[i + 1] - v[i]) : v[i];
}

static void test_costmodel_calibration__awkward_unaligned_within_target(void **state) {
  (void)state;
  cost_hw hw, cal;
  cost_sample *s = NULL, *b = NULL;
  size_t n = 0, nb = 0, len = 0, k = 0;
  svc_err err = {0};
  assert_int_equal(cm_load_hw(CDPLAN_SOURCE_DIR "/data/hardware/h200.json", &hw), 0);
  assert_int_equal(cm_load_samples(CDPLAN_SOURCE_DIR "/data/measurements/h200", &s, &n), 0);
  char *txt = cm_slurp(CDPLAN_SOURCE_DIR "/data/measurements/h200-awkward/blind_gemm.json", &len);
  assert_non_null(txt);
  assert_int_equal(api_measure_load(txt, len, &b, &nb, &err), 0);
  free(txt);
  cal = hw;
  assert_int_equal(cost_calibrate(&hw, s, n, &cal.calib, NULL), 0);
  double *e = malloc((nb ? nb : 1) * sizeof *e);
  assert_non_null(e);
  for (size_t i = 0; i < nb; i++) {
    const cost_gemm_op *g = &b[i].u.gemm;
    cost_result r;
    if (b[i].kind != COST_OP_GEMM || (g->k % 8 == 0 && g->n % 8 == 0)) continue;
    assert_int_equal(cost_sample_predict(&cal, &b[i], &r), 0);
    e[k++] = fabs(r.ms / b[i].ms - 1);
  }
  assert_int_equal(k, 30); /* 10 shapes x bf16 / fp16 / tf32 */
  double med = pct(e, k, 0.5), p90 = pct(e, k, 0.9);
  printf("awkward blind unaligned n=%zu  median %5.1f%%  p90 %5.1f%%\n", k, 100 * med, 100 * p90);
  assert_true(med <= 0.08);
  assert_true(p90 <= 0.20);
  free(e);
  free(b);
  free(s);
}

/* Large sweep files are kept as gzip -n copies (PATH.gz): cm_slurp reads
 * PATH where it is there, else PATH.gz decompressed whole (past its first
 * 1 MiB buffer), and refuses a truncated copy rather than return part. */
static void test_costmodel_calibration__slurp_reads_gzip_copy(void **state) {
  (void)state;
  const char *tmp = getenv("TMPDIR");
  char dir[512], path[600], gz[600];
  snprintf(dir, sizeof dir, "%s/cdplan-slurp-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  assert_non_null(mkdtemp(dir));
  snprintf(path, sizeof path, "%s/rows.json", dir);
  snprintf(gz, sizeof gz, "%s/rows.json.gz", dir);
  size_t len = 0, want = (size_t)3 << 20;
  assert_int_equal(cm_exists(path), 0);
  assert_null(cm_slurp(path, &len));

  char *text = malloc(want);
  assert_non_null(text);
  for (size_t i = 0; i < want; i++) text[i] = (char)('a' + (i * 7919 % 26));
  gzFile f = gzopen(gz, "wb");
  assert_non_null(f);
  assert_int_equal(gzwrite(f, text, (unsigned)want), (int)want);
  assert_int_equal(gzclose(f), Z_OK);
  assert_int_equal(cm_exists(path), 1);
  char *got = cm_slurp(path, &len);
  assert_non_null(got);
  assert_int_equal(len, want);
  assert_int_equal(got[len], '\0');
  assert_memory_equal(got, text, want);
  free(got);

  FILE *plain = fopen(path, "w"); /* the plain file wins where both are there */
  assert_non_null(plain);
  fputs("{\"plain\": 1}", plain);
  assert_int_equal(fclose(plain), 0);
  got = cm_slurp(path, &len);
  assert_non_null(got);
  assert_string_equal(got, "{\"plain\": 1}");
  free(got);
  assert_int_equal(unlink(path), 0);

  long size = 0; /* cut the copy in half: an error, not half the rows */
  FILE *c = fopen(gz, "rb");
  assert_non_null(c);
  assert_int_equal(fseek(c, 0, SEEK_END), 0);
  size = ftell(c);
  assert_int_equal(fclose(c), 0);
  assert_true(size > 64);
  assert_int_equal(truncate(gz, size / 2), 0);
  assert_null(cm_slurp(path, &len));

  assert_int_equal(unlink(gz), 0);
  assert_int_equal(rmdir(dir), 0);
  free(text);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_costmodel_calibration__cv_error_within_gates),
      cmocka_unit_test(test_costmodel_calibration__awkward_unaligned_within_target),
      cmocka_unit_test(test_costmodel_calibration__slurp_reads_gzip_copy),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
