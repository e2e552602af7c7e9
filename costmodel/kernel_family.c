/* kernel_family.c: measured family corrections for the tile-config model
 * (costmodel/kernel.h, cost_kfamily; docs/kernels.md "Family corrections").
 *
 * The analytic terms of kernel.c carry what a tile config costs for
 * reasons that follow from the hardware (MMA rate, operand feed, latency
 * over pipeline depth, waves, registers). They miss what follows from how
 * the compiler lowers a given tile and warp count -- e.g. on the H200 the
 * fit sweeps show a 128x128x32 tile with 8 warps 1.5-1.8x slower than the
 * same tile with 4 warps whenever B is loaded element by element, and
 * 128x128x64 with 4 warps 2-3x slower than with 8 when A is -- while
 * members of one family err alike across shapes (a spread of 0.03-0.13 in
 * log time against biases up to 0.35). Each entry is the weighted mean of
 * ln(measured / analytic) over one family's configs in the fit set
 * (weights best/measured per shape, so configs near the best count most),
 * shrunk toward 0 by KS_FAM_SHRINK pseudo-samples: a family seen rarely
 * keeps a small factor.
 *
 * Table: printed by `kernel_select --fit` (bench/kernel_select.c) from the
 * same fit set as the defaults of kernel_space.c -- data/measurements/
 * h200/, h200-fit2/, h200-fit3/ and h200-fit4/triton_configs.json, 60
 * shapes -- with the analytic parameters at those defaults. The held-out
 * sweeps (h200-extra/, h200-heldout2/, h200-heldout3/) were not used.
 * Hopper only, and only for the element size swept (2 bytes: bf16 and
 * fp16): Triton lowers tiles differently on other architectures and for
 * other element sizes, so those get none until sweeps of them exist.
 */
#include <math.h>
#include <string.h>

#include "costmodel/kernel.h"

/* {element bytes, BLOCK_M, BLOCK_N, BLOCK_K, num_warps, A scalar, B scalar,
 *  ln factor}; only 2-byte types (bf16, fp16) were swept. */
/* clang-format off */
static const cost_kfamily hopper_families[] = {
    {2, 32, 64, 64, 4, 0, 0, 0.040},
    {2, 32, 128, 64, 4, 0, 0, 0.015},
    {2, 64, 32, 64, 4, 0, 0, 0.015},
    {2, 64, 64, 32, 4, 0, 0, 0.035},
    {2, 64, 64, 64, 4, 0, 0, -0.027},
    {2, 64, 64, 128, 4, 0, 0, 0.018},
    {2, 64, 128, 32, 4, 0, 0, 0.007},
    {2, 64, 128, 64, 4, 0, 0, -0.034},
    {2, 64, 128, 128, 4, 0, 0, 0.005},
    {2, 64, 256, 32, 4, 0, 0, -0.035},
    {2, 64, 256, 64, 4, 0, 0, -0.035},
    {2, 128, 32, 64, 4, 0, 0, 0.019},
    {2, 128, 64, 32, 4, 0, 0, 0.054},
    {2, 128, 64, 64, 4, 0, 0, 0.009},
    {2, 128, 64, 128, 4, 0, 0, 0.098},
    {2, 128, 128, 32, 4, 0, 0, -0.024},
    {2, 128, 128, 32, 8, 0, 0, -0.009},
    {2, 128, 128, 64, 4, 0, 0, -0.057},
    {2, 128, 128, 64, 8, 0, 0, -0.038},
    {2, 128, 128, 128, 4, 0, 0, 0.059},
    {2, 128, 256, 32, 8, 0, 0, -0.057},
    {2, 128, 256, 64, 8, 0, 0, -0.045},
    {2, 256, 64, 32, 4, 0, 0, 0.037},
    {2, 256, 64, 64, 4, 0, 0, 0.095},
    {2, 256, 128, 32, 8, 0, 0, -0.035},
    {2, 256, 128, 64, 8, 0, 0, 0.058},
    {2, 32, 64, 64, 4, 0, 1, 0.042},
    {2, 32, 128, 64, 4, 0, 1, 0.051},
    {2, 64, 32, 64, 4, 0, 1, 0.287},
    {2, 64, 64, 32, 4, 0, 1, 0.101},
    {2, 64, 64, 64, 4, 0, 1, 0.101},
    {2, 64, 64, 128, 4, 0, 1, 0.302},
    {2, 64, 128, 32, 4, 0, 1, 0.061},
    {2, 64, 128, 64, 4, 0, 1, 0.078},
    {2, 64, 128, 128, 4, 0, 1, 0.192},
    {2, 64, 256, 32, 4, 0, 1, -0.030},
    {2, 64, 256, 64, 4, 0, 1, -0.038},
    {2, 64, 256, 128, 4, 0, 1, 0.053},
    {2, 128, 32, 64, 4, 0, 1, 0.077},
    {2, 128, 64, 32, 4, 0, 1, 0.105},
    {2, 128, 64, 64, 4, 0, 1, 0.168},
    {2, 128, 64, 128, 4, 0, 1, 0.171},
    {2, 128, 128, 32, 4, 0, 1, 0.046},
    {2, 128, 128, 32, 8, 0, 1, 0.241},
    {2, 128, 128, 64, 4, 0, 1, 0.134},
    {2, 128, 128, 64, 8, 0, 1, 0.205},
    {2, 128, 128, 128, 4, 0, 1, 0.006},
    {2, 128, 256, 32, 8, 0, 1, 0.091},
    {2, 128, 256, 64, 8, 0, 1, 0.040},
    {2, 128, 256, 128, 8, 0, 1, -0.101},
    {2, 256, 64, 32, 4, 0, 1, -0.005},
    {2, 256, 64, 64, 4, 0, 1, -0.040},
    {2, 256, 64, 128, 4, 0, 1, 0.109},
    {2, 256, 128, 32, 8, 0, 1, 0.085},
    {2, 256, 128, 64, 8, 0, 1, 0.133},
    {2, 256, 128, 128, 8, 0, 1, 0.058},
    {2, 32, 64, 64, 4, 1, 0, 0.078},
    {2, 32, 128, 64, 4, 1, 0, 0.047},
    {2, 64, 32, 64, 4, 1, 0, 0.002},
    {2, 64, 64, 32, 4, 1, 0, 0.044},
    {2, 64, 64, 64, 4, 1, 0, 0.044},
    {2, 64, 64, 128, 4, 1, 0, 0.001},
    {2, 64, 128, 32, 4, 1, 0, -0.034},
    {2, 64, 128, 64, 4, 1, 0, -0.018},
    {2, 64, 128, 128, 4, 1, 0, -0.000},
    {2, 64, 256, 32, 4, 1, 0, 0.024},
    {2, 64, 256, 64, 4, 1, 0, -0.029},
    {2, 64, 256, 128, 4, 1, 0, 0.317},
    {2, 128, 32, 64, 4, 1, 0, 0.009},
    {2, 128, 64, 32, 4, 1, 0, -0.000},
    {2, 128, 64, 64, 4, 1, 0, -0.076},
    {2, 128, 64, 128, 4, 1, 0, 0.386},
    {2, 128, 128, 32, 4, 1, 0, -0.068},
    {2, 128, 128, 32, 8, 1, 0, -0.061},
    {2, 128, 128, 64, 4, 1, 0, 0.633},
    {2, 128, 128, 64, 8, 1, 0, 0.233},
    {2, 128, 128, 128, 4, 1, 0, 0.281},
    {2, 128, 256, 32, 8, 1, 0, 0.023},
    {2, 128, 256, 64, 8, 1, 0, -0.007},
    {2, 128, 256, 128, 8, 1, 0, 0.280},
    {2, 256, 64, 32, 4, 1, 0, -0.088},
    {2, 256, 64, 64, 4, 1, 0, 0.357},
    {2, 256, 64, 128, 4, 1, 0, 0.135},
    {2, 256, 128, 32, 8, 1, 0, -0.098},
    {2, 256, 128, 64, 8, 1, 0, 0.415},
    {2, 256, 128, 128, 8, 1, 0, 0.061},
    {2, 32, 64, 64, 4, 1, 1, 0.034},
    {2, 32, 128, 64, 4, 1, 1, 0.043},
    {2, 64, 32, 64, 4, 1, 1, -0.020},
    {2, 64, 64, 32, 4, 1, 1, -0.019},
    {2, 64, 64, 64, 4, 1, 1, 0.009},
    {2, 64, 64, 128, 4, 1, 1, -0.123},
    {2, 64, 128, 32, 4, 1, 1, 0.005},
    {2, 64, 128, 64, 4, 1, 1, -0.038},
    {2, 64, 128, 128, 4, 1, 1, -0.123},
    {2, 64, 256, 32, 4, 1, 1, -0.150},
    {2, 64, 256, 64, 4, 1, 1, -0.152},
    {2, 64, 256, 128, 4, 1, 1, 0.049},
    {2, 128, 32, 64, 4, 1, 1, -0.054},
    {2, 128, 64, 32, 4, 1, 1, -0.121},
    {2, 128, 64, 64, 4, 1, 1, -0.170},
    {2, 128, 64, 128, 4, 1, 1, -0.010},
    {2, 128, 128, 32, 4, 1, 1, -0.086},
    {2, 128, 128, 32, 8, 1, 1, 0.179},
    {2, 128, 128, 64, 4, 1, 1, 0.228},
    {2, 128, 128, 64, 8, 1, 1, -0.104},
    {2, 128, 128, 128, 4, 1, 1, 0.132},
    {2, 128, 256, 32, 8, 1, 1, -0.007},
    {2, 128, 256, 64, 8, 1, 1, -0.245},
    {2, 128, 256, 128, 8, 1, 1, -0.282},
    {2, 256, 64, 32, 4, 1, 1, 0.255},
    {2, 256, 64, 64, 4, 1, 1, 0.184},
    {2, 256, 64, 128, 4, 1, 1, 0.100},
    {2, 256, 128, 32, 8, 1, 1, -0.009},
    {2, 256, 128, 64, 8, 1, 1, 0.389},
    {2, 256, 128, 128, 8, 1, 1, -0.101},
};
/* clang-format on */

const cost_kfamily *cost_kfamily_builtin(const cost_hw *hw, int *n) {
  if (hw && !strcmp(hw->arch, "hopper")) {
    *n = (int)(sizeof hopper_families / sizeof hopper_families[0]);
    return hopper_families;
  }
  *n = 0;
  return NULL;
}

double cost_kfamily_factor(const cost_kfamily *t, int n, const cost_kproblem *p,
                           const cost_kcfg *c) {
  int as = p->k % 16 != 0, bs = p->n % 16 != 0;
  if (p->dtype < 0 || p->dtype >= COST_DT__COUNT) return 1.0;
  int eb = (int)cost_dtype_bytes((cost_dtype)p->dtype);
  for (int i = 0; i < n; i++)
    if (t[i].elem_bytes == eb && t[i].block_m == c->block_m && t[i].block_n == c->block_n &&
        t[i].block_k == c->block_k && t[i].num_warps == c->num_warps && t[i].a_scalar == as &&
        t[i].b_scalar == bs)
      return exp(t[i].log_factor);
  return 1.0;
}
