/* gemm_arch.c: the per-architecture terms of the GEMM model that are not
 * kernel selection (gemm.c keeps that): the clock a dense GEMM sustains
 * under the board's power limit, and how much of a CTA's per-tile fill the
 * architecture hides.
 *
 * Power-limited clock. Under dense matrix load an AMD Instinct board runs
 * at its power limit, not its clock limit (AMD ROCm blog, "Measuring
 * Max-Achievable FLOPs, Part 2", 2025: MI300X BF16 at 1207 MHz of 2100 at
 * 750 W, MI325X at 1447 MHz at 1000 W). Board power is a load-independent
 * part P0 (leakage, HBM, fabric) plus the matrix units' dynamic power,
 * C V^2 f with V rising about linearly with f across the DVFS range
 * (Weste and Harris, CMOS VLSI Design, 4th ed., sec. 5.2: P_dyn = a C V^2 f;
 * Kim et al., "Power-efficient GPU DVFS", the linear V-f region), so
 *   TDP = P0 + k_dt * F_dt * r^3,   r = f / f_peak,
 * F_dt the dtype's dense peak at f_peak and k_dt the watts per peak FLOP/s
 * at f_peak. P0 and k_dt are fitted (cost_power_fit) on the "fit" rows of
 * data/measurements/published/gemm.json that state clock and power (the
 * amdmaf rows, CDNA3); bench/published_gemm refits them and prints both.
 * CDNA4 (MI350X, MI355X) is taken at CDNA3's P0 and energy per peak FLOP:
 * an assumption (N3P compute dies, double-rate matrix cores); no CDNA4
 * clock under load naming its board is published. The CDNA4 fit on
 * HipKittens' MI355X rows prices the MI355X within ~2 % and the MI350X
 * 15 % fast (bench/published_gemm, GEMM.md): P0 alone sets the split
 * between the 1000 W and 1400 W boards, and CDNA3's may be too low for
 * CDNA4. The one CDNA4 clock under load found (rocm-libraries PR #4026,
 * gfx950 at 1205 MHz) names neither board nor power, so it is a fit row of
 * the fraction, not a power point; P0 = 611 or 713 W would price the
 * MI350X rows at 9 or 3 % but its MLPerf training rows 10 or 14 % slow
 * (GEMM.md, printed by bench/published_gemm, not used here). A
 * descriptor's measured sustained clock always wins over the model.
 *
 * Tile fill on Blackwell. tcgen05 MMAs accumulate in tensor memory, 512
 * columns per SM: two 256-column accumulators, so a persistent kernel
 * runs tile i's epilogue while tile i+1's main loop runs (CUTLASS 3.8+
 * sm100 persistent kernels, accumulator pipeline of 2 stages; Triton
 * Gluon example "overlapping-accumulator", TMEM_COLS 512). The per-tile
 * fill and epilogue that a Hopper wave pays (gemm.c, tile_fill_us) is paid
 * once per CTA there, not once per wave.
 */
#include <math.h>
#include <string.h>

#include "costmodel/costmodel_int.h"

/* CDNA3 fit (cost_power_fit on the five amdmaf fit rows: MI300X fp16/bf16
 * at 750 W, 1115/1207 MHz; MI325X fp16/bf16/fp8 at 1000 W, 1354/1447/1464
 * MHz; the bench prints the refit, tests/costmodel checks it): P0 in W,
 * k in W per TFLOP/s of the dtype's peak. int8 takes fp8's (same MFMA
 * rate). Residual of the fit: rms 0.3 % in clock. */
static const cost_power_model amd_power = {
    .p0_w = 419.5,
    .k_w_per_tflops = {[COST_DT_BF16] = 1.3442,
                       [COST_DT_FP16] = 1.6726,
                       [COST_DT_FP8] = 0.6552,
                       [COST_DT_INT8] = 0.6552},
};

const cost_power_model *cost_power_model_of(const cost_hw *hw) {
  if (!hw || strcmp(hw->vendor, "amd")) return NULL;
  if (strcmp(hw->arch, "cdna3") && strcmp(hw->arch, "cdna4")) return NULL;
  return &amd_power;
}

double cost_power_clock_ratio(const cost_power_model *pm, double tdp_w, double peak_flops, int dt) {
  if (!pm || !(tdp_w > 0) || !(peak_flops > 0) || dt < 0 || dt >= COST_DT__COUNT) return 1;
  double k = pm->k_w_per_tflops[dt];
  if (!(k > 0)) return 1;
  if (!(tdp_w > pm->p0_w)) return 1;
  return fmin(1.0, cbrt((tdp_w - pm->p0_w) / (k * peak_flops * 1e-12)));
}

double cost_clock_ratio_dt(const cost_hw *hw, int dt) {
  if (!hw) return 1;
  double peak = hw->peak_clock_hz > 0 ? hw->peak_clock_hz : hw->clock_hz;
  if (hw->sustained_clock_hz > 0 && peak > 0) return fmin(1.0, hw->sustained_clock_hz / peak);
  const cost_power_model *pm = cost_power_model_of(hw);
  if (!pm || dt < 0 || dt >= COST_DT__COUNT) return 1;
  /* A dtype without its own k runs at the bf16 clock (the AMD figure). */
  int d = pm->k_w_per_tflops[dt] > 0 ? dt : COST_DT_BF16;
  return cost_power_clock_ratio(pm, hw->tdp_w, hw->peak_flops[d], d);
}

double cost_clock_ratio(const cost_hw *hw) {
  if (!hw || !(hw->peak_clock_hz > 0) || !(hw->sustained_clock_hz > 0))
    return cost_clock_ratio_dt(hw, COST_DT_BF16);
  return fmin(1.0, hw->sustained_clock_hz / hw->peak_clock_hz);
}

/* Sum of squared log-clock errors of the points under P0 = p0 with each
 * dtype's k at its least-squares value (log k = mean of the points'
 * log((TDP - P0) / (F r^3))); fills k when k is not NULL. */
static double power_sse(const cost_power_point *pt, size_t n, double p0, double *k) {
  double sum[COST_DT__COUNT] = {0}, sse = 0;
  int cnt[COST_DT__COUNT] = {0};
  for (size_t i = 0; i < n; i++) {
    if (!(pt[i].tdp_w > p0)) return INFINITY;
    sum[pt[i].dtype] += log((pt[i].tdp_w - p0) / (pt[i].peak_tflops * pow(pt[i].ratio, 3)));
    cnt[pt[i].dtype]++;
  }
  for (size_t i = 0; i < n; i++) {
    double lk = sum[pt[i].dtype] / cnt[pt[i].dtype];
    double lr = (log(pt[i].tdp_w - p0) - lk - log(pt[i].peak_tflops)) / 3.0;
    sse += (lr - log(pt[i].ratio)) * (lr - log(pt[i].ratio));
  }
  if (k)
    for (int d = 0; d < COST_DT__COUNT; d++) k[d] = cnt[d] ? exp(sum[d] / cnt[d]) : 0;
  return sse;
}

int cost_power_fit(const cost_power_point *pt, size_t n, cost_power_model *out) {
  if (!pt || !out || n < 2) return COST_EINVAL;
  double lo = 0, hi = INFINITY;
  for (size_t i = 0; i < n; i++) {
    if (pt[i].dtype < 0 || pt[i].dtype >= COST_DT__COUNT || !(pt[i].tdp_w > 0) ||
        !(pt[i].peak_tflops > 0) || !(pt[i].ratio > 0 && pt[i].ratio <= 1))
      return COST_EINVAL;
    hi = fmin(hi, pt[i].tdp_w);
  }
  /* P0 on a 0.1 W grid, then the k's at the best P0: a one-dimensional
   * search, cheap and without local-minimum surprises. */
  double best = INFINITY, p0 = 0;
  for (double p = lo; p < hi - 0.05; p += 0.1) {
    double s = power_sse(pt, n, p, NULL);
    if (s < best) best = s, p0 = p;
  }
  if (!isfinite(best)) return COST_EINVAL;
  memset(out, 0, sizeof *out);
  out->p0_w = p0;
  power_sse(pt, n, p0, out->k_w_per_tflops);
  return 0;
}

int cost_gemm_fill_once(const cost_hw *hw) { return hw && !strcmp(hw->arch, "blackwell"); }

/* The architecture whose published-data calibration stands in for one
 * without its own, and for the parameters its own fit lacks
 * (cost_calib_fill): CDNA4 takes CDNA3's (the same hipBLASLt library and
 * matrix-core lineage; the power model above makes the same assumption
 * about its energy per FLOP). NULL: none. */
const char *cost_arch_fallback(const char *arch) {
  return arch && !strcmp(arch, "cdna4") ? "cdna3" : NULL;
}

/* CDNA3/CDNA4 GEMM kernels. hipBLASLt's (Tensile) macro tiles on MI300X/
 * MI325X are 128, 192 or 256 on a side, up to 256x256, and the library
 * prefers the large ones because they move less data per FLOP, so draw less
 * power and hold a higher clock (AMD ROCm blog, "Measuring Max-Achievable
 * FLOPs, Part 2", 2025-02-28, sections "Optimal Matrix Size" and "Software
 * Efficiency": "Common GPU tile sizes are 128, 192, and 256", "larger
 * compute tiles (up to 256x256 on MI300X/MI325X)"; its MAF shapes are
 * 16 x 19 = 304 tiles of 256x256 (bf16, 4096x4864) and of 256x192 (fp8,
 * 4096x3648), one per CU). Each CU runs one tile at a time and a partial
 * last wave leaves CUs idle (same blog: "it is important that each compute
 * unit performs an equal amount of work and avoids partial utilization in
 * the final phase"), so a grid of w waves costs ceil(w) tile times: no
 * stream-K tail balancing as on NVIDIA (gemm.c). On the fit rows this
 * moves gaunernst-mi300x-bf16-4096 (256 tiles of 256x256 on 304 CUs) from
 * +20.1 % to +2.8 % and leaves the amdmaf rows (whole waves) as they were;
 * bench/published_gemm prints the rest. CDNA4 (MI350X/MI355X, 256 CUs) is
 * taken to run the same tile family (an assumption: the blog covers CDNA3;
 * the MI355X check row tests it). Tiles under 128 (hipBLASLt has them for
 * small problems) are not modelled: split-K stands in for them. */
static const cost_tile cdna_tiles[] = {{256, 256}, {256, 192}, {192, 256}, {192, 192}, {256, 128},
                                       {128, 256}, {192, 128}, {128, 192}, {128, 128}};

static int is_cdna34(const cost_hw *hw) {
  return hw && !strcmp(hw->vendor, "amd") &&
         (!strcmp(hw->arch, "cdna3") || !strcmp(hw->arch, "cdna4"));
}

const cost_tile *cost_gemm_arch_tiles(const cost_hw *hw, int *n) {
  if (!is_cdna34(hw) || !n) return NULL;
  *n = (int)(sizeof cdna_tiles / sizeof cdna_tiles[0]);
  return cdna_tiles;
}

int cost_gemm_tail_balanced(const cost_hw *hw) { return !is_cdna34(hw); }
