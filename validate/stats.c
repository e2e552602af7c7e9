/* Error statistics of a validation report: how far predictions are from
 * what the GPU measured. Percentiles interpolate linearly between order
 * statistics (the numpy default), so a report and the bench scripts agree. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "validate/validate.h"

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double percentile(const double *sorted, size_t n, double q) {
  double pos = q * (double)(n - 1);
  size_t lo = (size_t)floor(pos), hi = lo + 1 < n ? lo + 1 : lo;
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - (double)lo);
}

void val_stats_compute(const double *rel, size_t n, val_stats *out) {
  memset(out, 0, sizeof *out);
  if (n == 0) return;
  double *abs_err = malloc(n * sizeof *abs_err), sum = 0;
  if (!abs_err) return;
  for (size_t i = 0; i < n; i++) {
    abs_err[i] = fabs(rel[i]);
    sum += rel[i];
  }
  qsort(abs_err, n, sizeof *abs_err, cmp_double);
  out->n = n;
  out->median = percentile(abs_err, n, 0.5);
  out->p90 = percentile(abs_err, n, 0.9);
  out->max = abs_err[n - 1];
  out->mean_signed = sum / (double)n;
  free(abs_err);
}
