/* provenance.c: how sure an answer is. Every estimate, step, plan and
 * compare says, per accelerator, what its figures rest on -- a
 * calibration fitted to measurements of that accelerator, or datasheet
 * figures checked against published measurements, or datasheet figures
 * nobody has checked -- and the error band of each op class, taken from
 * the held-out score of the benchmark that checks it.
 *
 * The bands are the benchmarks' figures of 2026-12-03 (GEMM: 2026-12-05) (README,
 * "Benchmarks"): median |pred/meas - 1| on rows never fitted:
 *   GEMM        bench/published_gemm check rows per accelerator; the H200's
 *               own held-out GEMMs (bench/costmodel_accuracy) when it is
 *               calibrated;
 *   collectives bench/published_accuracy check rows, by vendor, inside one
 *               scale-up domain and across domains;
 *   step        bench/step_accuracy: DLRM steps on one H200 (calibrated) never
 *               fitted; the H100's blind eager DCN sets (below).
 * An accelerator calibrated per architecture on published measurements
 * (no calibration of its own: api/calibrate_published.c) takes its GEMM
 * band from the fit-only calibration scored on the check rows
 * (bench/published_gemm "fit-only"), never from the shipped all-rows fit.
 * A class no benchmark checks on an accelerator has no band (null): the
 * answer says so rather than borrowing another chip's figure.
 */
#include <math.h>
#include <string.h>

#include "api/api_int.h"

typedef struct {
  const char *hw;
  double gemm; /* 0 = not checked */
  int rows;    /* check rows the median rests on (how sure it is) */
} gemm_band;

/* Datasheet figures, rows priced at the clock their source states
 * (bench/published_gemm, 2026-12-05: power-limited clocks for CDNA boards
 * without a measured one, Blackwell's tile fill once per CTA, column-major
 * C read as such, CDNA's hipBLASLt macro tiles and whole waves, sustained-
 * load harnesses at the load clock for every dtype, per-call harness cost --
 * data/measurements/published/gemm_bench_10_gb200_152sm.txt). How sure:
 * MI300X's 12 check rows are 9 of one harness (Azure), MI325X and MI355X
 * have one check row each, H200 one: those bands are one row's error.
 * MI350X: 14 check rows of one harness (alfredyu24/amd-mi350-benchmarks,
 * torch.matmul, added 2026-12-05 with their role fixed before scoring;
 * gemm_bench_5_mi350x_rows.txt). H100 0.079 -> 0.087 on 2026-12-06: the
 * mamf v1 row re-read as a per-call harness (gemm_bench_14). */
static const gemm_band gemm_bands[] = {
    {"h100-sxm", 0.087, 12}, {"h200", 0.033, 1},   {"b200", 0.047, 2},    {"gb200", 0.036, 2},
    {"mi300x", 0.166, 12},   {"mi325x", 0.111, 1}, {"mi350x", 0.071, 14}, {"mi355x", 0.179, 2},
};

/* The per-architecture fit on fit rows only, scored on check rows
 * (bench/published_gemm, 2026-12-05, gemm_bench_10_gb200_152sm.txt;
 * MI350X and MI355X: CDNA4's own fit on the HipKittens MI355X rows and the
 * clock-stated gfx950 row of rocm-libraries PR #4026, fp16 from CDNA3's --
 * on MI350X's 14 rows, with their per-call harness cost, +9 % signed;
 * B200/GB200: Blackwell's fit with the GB200's fp8 fit rows at its derived
 * load clock; H200's 1 row: its own calibration). 2026-12-06: two more fit
 * sources (Primus-Turbo's 84 MI300X rows, Z-Y00's 217 MI350X hipblaslt-bench
 * rows; gemm_bench_13_new_sources_refit.txt) moved the CDNA bands; the test
 * published_gemm_bands_sync checks this table against the bench. Then the two
 * mamf v1 rows re-read as their script ran them (row-major nn, one call at a
 * time from an idle GPU: per-call cost; gemm_bench_14_mamf_v1_harness.txt):
 * MI300X 0.219 -> 0.233, H100 0.0316 -> 0.0315. */
static const gemm_band arch_bands[] = {
    {"h100-sxm", 0.032, 12}, {"h200", 0.078, 1},   {"b200", 0.074, 2},    {"gb200", 0.078, 2},
    {"mi300x", 0.233, 12},   {"mi325x", 0.056, 1}, {"mi350x", 0.087, 14}, {"mi355x", 0.018, 2},
};

static const gemm_band *lookup_row(const gemm_band *t, size_t n, const char *hw) {
  for (size_t i = 0; i < n; i++)
    if (!strcmp(t[i].hw, hw)) return &t[i];
  return NULL;
}

static double lookup(const gemm_band *t, size_t n, const char *hw) {
  const gemm_band *r = lookup_row(t, n, hw);
  return r ? r->gemm : 0;
}

/* Shipped-default collective check medians and their row counts
 * (bench/published_accuracy, 2026-12-05, collectives.json check rows;
 * data/measurements/published/published_accuracy_after_nvls_refit.txt). */
#define COLL_NV_NODE 0.067
#define COLL_NV_NODE_N 8
#define COLL_NV_CLUSTER 0.084
#define COLL_NV_CLUSTER_N 2
#define COLL_AMD_NODE 0.007
#define COLL_AMD_NODE_N 5
#define COLL_AMD_CLUSTER 0.051
#define COLL_AMD_CLUSTER_N 15
/* bench/costmodel_accuracy: held-out GEMM samples of the calibrated H200. */
#define H200_GEMM_HELDOUT_N 189

/* bench/costmodel_accuracy held-out GEMM median (H200, calibrated), and
 * the DLRM step's on the steps the shipped calibration never saw:
 * bench/step_accuracy section (d), data/measurements/h200-extra, 13 steps
 * (2 of them with tables in host memory, 37 and 56 % fast), median 18.1 %
 * at 2026-12-06. Until then this band was 6 %, the fit's own in-sample
 * median (section (b), 5.8 %) -- not a held-out figure. */
#define H200_GEMM_HELDOUT 0.056
#define H200_STEP_HELDOUT 0.181
#define H200_STEP_HELDOUT_N 13
/* The H100's DLRM steps: the blind eager MLPerf-shaped DCN sets 2, 4 and 5
 * on lent H100s at the default host figure (none fitted), 24 steps,
 * median 6.0 %, max 45 % (host-bound steps on fast hosts: the answer's
 * host_sensitivity) -- data/measurements/h100-dcn-mlperf/host_range.py,
 * host_range.txt, 2026-12-06. */
#define H100_STEP_BLIND 0.060
#define H100_STEP_BLIND_N 24
/* bench/step_accuracy section (f), check halves of data/measurements/
 * h200-transformer: transformer step time and peak memory, FlashAttention
 * kernel time (flash terms fitted on the fitting half only). */
/* Issue 25: cuBLAS GEMMs whose K or N is not a multiple of 8 (the
 * awkward shapes of production models: 13 dense features, widths 219 or
 * 479, wgrad GEMMs with K = batch), where the general band above (large,
 * aligned published GEMMs) says too little. The blind awkward sweeps, each
 * scored with the times committed before it ran: H100 sets 33-76 and H200
 * sets 2-7, median / p90 |pred/meas - 1| and rows (bench/awkward_band.py,
 * which the test awkward_band_sync holds these to), 2026-12-08. */
#define H100_GEMM_UNALIGNED 0.066
#define H100_GEMM_UNALIGNED_P90 0.195
#define H100_GEMM_UNALIGNED_N 2034
#define H200_GEMM_UNALIGNED 0.086
#define H200_GEMM_UNALIGNED_P90 0.234
#define H200_GEMM_UNALIGNED_N 216
#define H200_TF_STEP_HELDOUT 0.061
#define H200_TF_MEM_HELDOUT 0.012
#define H200_FLASH_HELDOUT 0.036

static void band(cJSON *o, const char *k, double v) {
  if (v > 0)
    cJSON_AddNumberToObject(o, k, v);
  else
    cJSON_AddNullToObject(o, k);
}

/* The calibration's entry named name, NAN when absent. */
static double calib_entry(const cost_hw *hw, const char *name) {
  for (int i = 0; i < hw->calib.n && i < COST_MAX_CALIB; i++)
    if (!strcmp(hw->calib.names[i], name)) return hw->calib.values[i];
  return NAN;
}

/* A step-level calibration from whole-step validation runs (api/
 * val_calibrate.c): its scales and the median error on the validation
 * rows it was not fitted to (null when none were left to check). */
static void step_calibration(cJSON *o, const cost_hw *hw) {
  double g = calib_entry(hw, "step_dlrm_gpu_scale"), u = calib_entry(hw, "step_uvm_link_scale");
  if (isnan(g) && isnan(u)) return;
  double chk = calib_entry(hw, "step_val_check_rel_err");
  cJSON *s = cJSON_AddObjectToObject(o, "step_calibration");
  cJSON_AddStringToObject(s, "from",
                          "whole-step validation runs of this accelerator (runner "
                          "dlrm_step; cdplan validate report ID --calibrate)");
  cJSON_AddNumberToObject(s, "step_dlrm_gpu_scale", isnan(g) ? 1.0 : g);
  cJSON_AddNumberToObject(s, "step_uvm_link_scale", isnan(u) ? 1.0 : u);
  band(s, "held_out_median_rel_error", isnan(chk) ? 0 : fmax(chk, 1e-9));
}

cJSON *api_provenance_json(const cost_hw *hw) {
  cJSON *o = cJSON_CreateObject(), *b;
  int calibrated = hw->calib.version > 0 && !hw->calib.per_arch;
  int per_arch = hw->calib.version > 0 && hw->calib.per_arch;
  double g = per_arch ? lookup(arch_bands, sizeof arch_bands / sizeof arch_bands[0], hw->name)
                      : lookup(gemm_bands, sizeof gemm_bands / sizeof gemm_bands[0], hw->name);
  /* The accelerators the published collective rows cover. */
  static const char *const coll_hw[] = {"h100-sxm", "h200",   "b200",   "gb200",
                                        "mi300x",   "mi325x", "mi350x", "mi355x"};
  int coll = 0;
  for (size_t i = 0; i < sizeof coll_hw / sizeof coll_hw[0]; i++)
    coll |= !strcmp(coll_hw[i], hw->name);
  int nvidia = coll && !strcmp(hw->vendor, "nvidia"), amd = coll && !strcmp(hw->vendor, "amd");
  const char *basis;
  if (calibrated)
    basis = "calibrated: parameters fitted to measurements of this accelerator";
  else if (per_arch && hw->calib.per_arch == 2)
    basis = "calibrated per architecture: achievable fractions fitted to published measurements "
            "of the related architecture calibration_arch names (none of this one's)";
  else if (per_arch)
    basis = "calibrated per architecture: achievable fractions fitted to published measurements "
            "of accelerators of this architecture";
  else if (g > 0 || coll)
    basis = "datasheet figures, checked against published measurements of this accelerator";
  else
    basis = "datasheet figures only: no measurement of this accelerator checks them";
  cJSON_AddStringToObject(o, "hardware", hw->name);
  cJSON_AddNumberToObject(o, "calibration", hw->calib.version);
  if (per_arch) {
    /* per_arch 2: the calibration of the arch this one falls back to */
    const char *fb = hw->calib.per_arch == 2 ? cost_arch_fallback(hw->arch) : NULL;
    cJSON_AddStringToObject(o, "calibration_arch", fb ? fb : hw->arch);
    /* memory-path, framework and GEMM-structure terms: a measured accelerator
     * of the same arch (api/context.c inherited_prefix; the name predates the
     * GEMM terms and is kept for callers) */
    if (hw->calib.inherited_from[0])
      cJSON_AddStringToObject(o, "memory_terms_from", hw->calib.inherited_from);
  }
  cJSON_AddStringToObject(o, "basis", basis);
  b = cJSON_AddObjectToObject(o, "error_band");
  band(b, "gemm", calibrated && !strcmp(hw->name, "h200") ? H200_GEMM_HELDOUT : g);
  band(b, "collective_node", nvidia ? COLL_NV_NODE : amd ? COLL_AMD_NODE : 0);
  band(b, "collective_cluster", nvidia ? COLL_NV_CLUSTER : amd ? COLL_AMD_CLUSTER : 0);
  int h200 = calibrated && !strcmp(hw->name, "h200");
  int h100 = !strcmp(hw->name, "h100-sxm") && !calibrated;
  band(b, "step", h200 ? H200_STEP_HELDOUT : h100 ? H100_STEP_BLIND : 0);
  band(b, "transformer_step", h200 ? H200_TF_STEP_HELDOUT : 0);
  band(b, "transformer_memory", h200 ? H200_TF_MEM_HELDOUT : 0);
  band(b, "flash_attention", h200 ? H200_FLASH_HELDOUT : 0);
  band(b, "gemm_unaligned", h200 ? H200_GEMM_UNALIGNED : h100 ? H100_GEMM_UNALIGNED : 0);
  band(b, "gemm_unaligned_p90",
       h200   ? H200_GEMM_UNALIGNED_P90
       : h100 ? H100_GEMM_UNALIGNED_P90
              : 0);
  /* How many never-fitted rows each band rests on: a band of one row is
   * one measurement's error, not a distribution. */
  const gemm_band *gr =
      per_arch ? lookup_row(arch_bands, sizeof arch_bands / sizeof arch_bands[0], hw->name)
               : lookup_row(gemm_bands, sizeof gemm_bands / sizeof gemm_bands[0], hw->name);
  cJSON *n = cJSON_AddObjectToObject(o, "band_check_rows");
  band(n, "gemm", h200 ? H200_GEMM_HELDOUT_N : gr && g > 0 ? gr->rows : 0);
  band(n, "collective_node", nvidia ? COLL_NV_NODE_N : amd ? COLL_AMD_NODE_N : 0);
  band(n, "collective_cluster", nvidia ? COLL_NV_CLUSTER_N : amd ? COLL_AMD_CLUSTER_N : 0);
  band(n, "step", h200 ? H200_STEP_HELDOUT_N : h100 ? H100_STEP_BLIND_N : 0);
  band(n, "gemm_unaligned", h200 ? H200_GEMM_UNALIGNED_N : h100 ? H100_GEMM_UNALIGNED_N : 0);
  step_calibration(o, hw);
  cJSON_AddStringToObject(o, "band_meaning",
                          "median |predicted/measured - 1| on measurements never fitted "
                          "(bench/published_gemm, bench/published_accuracy, "
                          "bench/costmodel_accuracy, bench/step_accuracy; gemm_unaligned: "
                          "GEMMs with K or N not a multiple of 8 on blind awkward-shape sweeps, "
                          "bench/awkward_band.py, with its p90); null: not checked; "
                          "band_check_rows: how many such measurements each band rests on");
  return o;
}

/* Cross-accelerator ratios: bench/published_gemm scores the predicted
 * GEMM-throughput ratio of two accelerators against published pairs
 * measured with one harness (gemm_ratios.json, check rows), as a fresh
 * database prices them ("shipped": the H200's own calibration, the Hopper
 * CDNA3 and CDNA4 arch calibrations, datasheet elsewhere), 2026-12-05
 * (gemm_bench_10_gb200_152sm): median 5.8 %, worst 28.8 % (Azure MI300X / H100
 * fp8, 16384^3: that MI300X run is 12 % below its own 8192^3, which no
 * term explains; 14 ratios, 4 of them from that one harness). A whole
 * step's ratio has no published check yet: said so. compare's
 * calibration_basis gives the band of its like-basis hardware share. */
cJSON *api_ratio_confidence_json(const cost_hw *from, const cost_hw *to) {
  cJSON *o = cJSON_CreateObject();
  int same = !strcmp(from->name, to->name);
  cJSON_AddNumberToObject(o, "gemm_ratio_band", same ? 0 : 0.058);
  cJSON_AddNumberToObject(o, "gemm_ratio_worst", same ? 0 : 0.288);
  cJSON_AddStringToObject(o, "note",
                          same ? "the same accelerator on both sides: the ratio is the recipes'"
                               : "bands of GEMM-throughput ratios against published pairs (bench/"
                                 "published_gemm); the ratio of whole training steps has not been "
                                 "checked against a published pair yet");
  return o;
}
