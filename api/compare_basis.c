/* compare_basis.c: the calibration each side of a compare rests on, and
 * the hardware share priced on a like basis.
 *
 * A compare prices each side at its latest calibration: the H200's own fit
 * to its measurements against an H100 that has only its architecture's fit
 * to published rows, say. The hardware share then mixes two kinds of
 * error: a calibrated side is typically a few per cent from its
 * measurements, a datasheet side 5-20 % (bench/published_gemm), so part of
 * the ratio is calibration, not hardware. This adds, beside the answer's
 * hardware_share, the same ratio with both sides at the highest level both
 * reach (own > architecture > datasheet): the tuned source's recipe and
 * embedding plan evaluated on each side's descriptor -- fabric overrides
 * and all -- with only the calibration lowered. Its band: the bench's
 * cross-accelerator GEMM-ratio score at that level where one exists
 * (datasheet and fit-only), and for the pair the two sides' GEMM bands
 * joined as independent errors, sqrt(a^2 + b^2).
 */
#include <math.h>
#include <string.h>

#include "api/api_int.h"
#include "api/api_plan.h"

static const char *level_name(int level) {
  return level == API_CALIB_OWN ? "own" : level == API_CALIB_ARCH ? "architecture" : "datasheet";
}

/* The GEMM band provenance gives hw (0 = not checked). */
static double gemm_band(const cost_hw *hw) {
  cJSON *p = api_provenance_json(hw);
  const cJSON *b =
      cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(p, "error_band"), "gemm");
  double v = cJSON_IsNumber(b) ? b->valuedouble : 0;
  cJSON_Delete(p);
  return v;
}

/* The request rq with its hardware at calibration level (lowered only). */
static int lowered(api_ctx *ctx, const plan_request *rq, int level, plan_request *out,
                   svc_err *err) {
  cost_hw hw;
  int rc = api_hw_lookup_level(ctx, rq->hw.name, level, &hw, err);
  if (rc) return rc;
  *out = *rq; /* borrowed: tables and dense state stay rq's */
  out->hw.calib = hw.calib;
  return 0;
}

static cJSON *side(const cost_hw *hw) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "hardware", hw->name);
  cJSON_AddStringToObject(o, "calibration", level_name(api_calib_level(hw)));
  return o;
}

int api_compare_basis(api_ctx *ctx, const plan_request *a, const plan_request *b,
                      const plan_eval *tuned, double hw_share, cJSON *doc, svc_err *err) {
  plan_request la, lb;
  plan_eval ea, eb;
  int rc = 0, level = api_calib_level(&a->hw), lvb = api_calib_level(&b->hw);
  memset(&ea, 0, sizeof ea), memset(&eb, 0, sizeof eb);
  if (lvb < level) level = lvb;
  /* Lower both to the common level; a side whose arch has no calibration
   * lands lower, and the other follows (at most twice). */
  for (int tries = 0;; tries++) {
    if ((rc = lowered(ctx, a, level, &la, err)) || (rc = lowered(ctx, b, level, &lb, err)))
      return rc;
    int got_a = api_calib_level(&la.hw), got_b = api_calib_level(&lb.hw);
    if ((got_a == level && got_b == level) || tries == 2) break;
    level = got_a < got_b ? got_a : got_b;
  }
  int like = api_calib_level(&a->hw) == api_calib_level(&b->hw);
  double share = hw_share;
  if (!like) {
    if ((rc = plan_evaluate(&la, &tuned->recipe, tuned->emb.tables, &ea, err)) ||
        (rc = plan_evaluate(&lb, &tuned->recipe, tuned->emb.tables, &eb, err)))
      goto cleanup;
    share = eb.fits && ea.samples_per_s > 0 ? eb.samples_per_s / ea.samples_per_s : 0;
  }
  cJSON *o = cJSON_AddObjectToObject(doc, "calibration_basis");
  cJSON_AddItemToObject(o, "from", side(&a->hw));
  cJSON_AddItemToObject(o, "to", side(&b->hw));
  cJSON_AddBoolToObject(o, "like", like);
  cJSON_AddStringToObject(o, "like_level", level_name(level));
  if (share > 0)
    cJSON_AddNumberToObject(o, "hardware_share_like_basis", share);
  else
    cJSON_AddNullToObject(o, "hardware_share_like_basis");
  /* bench/published_gemm, 2026-12-05 (CDNA4's own fit, gemm_bench_6):
   * scored cross-vendor GEMM ratios, datasheet and shipped (architecture
   * calibrations where shipped); 14 ratios, so the worst is one pair's */
  double med = level == API_CALIB_DATASHEET ? 0.079 : level == API_CALIB_ARCH ? 0.033 : 0;
  double worst = level == API_CALIB_DATASHEET ? 0.201 : level == API_CALIB_ARCH ? 0.288 : 0;
  double ga = gemm_band(&la.hw), gb = gemm_band(&lb.hw);
  cJSON *band = cJSON_AddObjectToObject(o, "ratio_band");
  if (med > 0) {
    cJSON_AddNumberToObject(band, "gemm_ratio_median", med);
    cJSON_AddNumberToObject(band, "gemm_ratio_worst", worst);
  } else {
    cJSON_AddNullToObject(band, "gemm_ratio_median");
    cJSON_AddNullToObject(band, "gemm_ratio_worst");
  }
  if (ga > 0 && gb > 0)
    cJSON_AddNumberToObject(band, "pair", sqrt(ga * ga + gb * gb));
  else
    cJSON_AddNullToObject(band, "pair");
  cJSON_AddStringToObject(
      o, "note",
      like ? "both sides rest on the same kind of calibration: hardware_share is on a like basis"
           : "the sides rest on different calibrations, so hardware_share mixes a calibration "
             "difference into the hardware's; hardware_share_like_basis prices the tuned "
             "recipe with both sides at like_level, and ratio_band is its band");
cleanup:
  plan_eval_dispose(&ea), plan_eval_dispose(&eb);
  return rc;
}
