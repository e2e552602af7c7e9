/* api/published: published measurements (data/measurements/published/:
 * JSON arrays of rows with source, setup and role) priced on their
 * accelerators' datasheet descriptors, and the per-architecture fits made
 * from them -- `cdplan calibrate` on such files, and bench/published_gemm,
 * which scores the fit on the rows it was not fitted to. Implemented in
 * api/calibrate_published.c. Rows and fits are plain values the caller owns.
 */
#ifndef CDPLAN_API_PUBLISHED_H
#define CDPLAN_API_PUBLISHED_H

#include <stddef.h>

#include "api/api.h"
#include "costmodel/costmodel.h"

/* One published GEMM throughput row, priced on its accelerator's datasheet
 * descriptor at the clock the source states (when it states one). */
typedef struct {
  char id[64];
  char url[512]; /* source.url: the unit a fit rests on */
  int fit;       /* role "fit" (else "check") */
  double tflops;
  /* The harness's own cost in every timed call (setup.timing "per_call":
   * API_PUB_CALL_MS), 0 when its calls run back to back; s.ms is the
   * measured time less it (the GPU's share, what the fit sees). */
  double call_ms;
  cost_hw hw;
  cost_sample s;
} api_pub_row;

/* One eager PyTorch matmul timed alone from an idle GPU on ROCm: its launch
 * is in the figure. Fitted on "fit" rows only: HipKittens' MI355X bf16 rows
 * (data/measurements/published/gemm.json, hk-*) time torch.matmul one call
 * per measurement and hipblaslt-bench's calls back to back on the same
 * GPU; the difference at 1024^3, 2048^3, 4096^3, 8192^3 is 24.9, 25.5,
 * 24.8, 24.6 us (median 24.9, one constant from 13 us to 0.7 ms of kernel:
 * a fixed cost per call, not a kernel difference; bench/published_gemm
 * recomputes it). */
#define API_PUB_CALL_MS 0.0249

#define API_FIT_MAX_ARCH 16
#define API_FIT_MAX_SOURCES 16
/* One architecture's fit and the sources behind it. */
typedef struct {
  char arch[32];
  cost_calib calib;
  cost_arch_fit_report rep;
  int n_sources;
  char sources[API_FIT_MAX_SOURCES][512];
} api_arch_fit;

/* 1 when text is a published-measurement file (a JSON array of rows with
 * source, setup and role). */
int api_published_is(const char *text, size_t len);
/* Its GEMM throughput rows (metric "tflops"; other metrics are skipped);
 * *rows malloc'd. A bad row is a 400 naming it. */
int api_published_rows(api_ctx *ctx, const char *text, size_t len, const char *label,
                       api_pub_row **rows, size_t *n, svc_err *err);
/* One fit per architecture with rows (fit rows only unless all_rows;
 * only_arch NULL = every arch) into fits[0..*nfits). */
int api_published_fit(const api_pub_row *rows, size_t n, int all_rows, const char *only_arch,
                      api_arch_fit *fits, int max_fits, int *nfits);
/* Row r's descriptor with its arch's fitted calibration (when fitted). */
void api_published_apply(const api_pub_row *r, const api_arch_fit *fits, int nfits, cost_hw *hw);
/* 1 when a fit rests on the source url (its rows may not be scored). */
int api_published_fitted_source(const api_arch_fit *fits, int nfits, const char *url);
/* cdplan calibrate on published files: fit, store each arch's version,
 * report. hwname (may be NULL) restricts the fit to its arch. */
int api_calibrate_published(api_ctx *ctx, const char *hwname, int all_rows, size_t n,
                            const char *const *texts, const size_t *lens, const char *const *labels,
                            char **out, svc_err *err);

#endif
