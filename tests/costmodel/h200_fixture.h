/* The H200 descriptor as plain values (data/hardware/h200.json), so the
 * formula tests need no file. */
#ifndef CDPLAN_TEST_H200_FIXTURE_H
#define CDPLAN_TEST_H200_FIXTURE_H
#include <string.h>

#include "costmodel/costmodel.h"

static inline void h200_fixture(cost_hw *hw) {
  memset(hw, 0, sizeof *hw);
  strcpy(hw->name, "h200");
  strcpy(hw->arch, "hopper");
  hw->compute_units = 132;
  hw->clock_hz = 1980e6;
  hw->hbm_bw = 4.8e12;
  hw->hbm_bytes = 151397597184.0;
  hw->l2_bytes = 62914560;
  hw->smem_per_unit = 233472;
  hw->regs_per_unit = 65536;
  hw->peak_flops[COST_DT_FP64] = 66.9e12;
  hw->peak_flops[COST_DT_FP32] = 66.9e12;
  hw->peak_flops[COST_DT_TF32] = 494.7e12;
  hw->peak_flops[COST_DT_BF16] = 989.4e12;
  hw->peak_flops[COST_DT_FP16] = 989.4e12;
  hw->peak_flops[COST_DT_FP8] = 1978.9e12;
  hw->peak_flops[COST_DT_INT8] = 1978.9e12;
  hw->n_mma = 4;
  hw->mma[0] = (cost_mma){COST_DT_BF16, 64, 256, 16};
  hw->mma[1] = (cost_mma){COST_DT_FP16, 64, 256, 16};
  hw->mma[2] = (cost_mma){COST_DT_TF32, 64, 256, 8};
  hw->mma[3] = (cost_mma){COST_DT_FP8, 64, 256, 32};
  hw->scaleup_bw = 450e9;
  hw->scaleup_domain = 8;
  hw->scaleout_bw = 50e9;
  hw->host_link_bw = 63.0e9;
}
#endif
