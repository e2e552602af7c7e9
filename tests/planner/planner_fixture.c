/* Planner test fixtures: see planner_fixture.h. */
#include <math.h>
#include <string.h>

#include "tests/planner/planner_fixture.h"

void fx_hw(cost_hw *hw, double usable_gb) {
  memset(hw, 0, sizeof *hw);
  strcpy(hw->name, "testgpu");
  strcpy(hw->vendor, "nvidia");
  strcpy(hw->arch, "hopper");
  hw->compute_units = 132;
  hw->clock_hz = 1.98e9;
  hw->hbm_bytes = usable_gb * 1e9;
  hw->hbm_usable_bytes = usable_gb * 1e9;
  hw->hbm_bw = 4.8e12;
  hw->l2_bytes = 50e6;
  hw->smem_per_unit = 228 * 1024;
  hw->regs_per_unit = 65536;
  hw->peak_flops[COST_DT_FP32] = 67e12;
  hw->peak_flops[COST_DT_TF32] = 494e12;
  hw->peak_flops[COST_DT_BF16] = 989e12;
  hw->peak_flops[COST_DT_FP16] = 989e12;
  hw->peak_flops[COST_DT_FP8] = 1979e12;
  hw->n_mma = 2;
  hw->mma[0] = (cost_mma){COST_DT_BF16, 64, 256, 16};
  hw->mma[1] = (cost_mma){COST_DT_FP8, 64, 256, 32};
  hw->scaleup_bw = 450e9;
  hw->scaleup_domain = 8;
  hw->scaleout_bw = 50e9;
  hw->host_link_bw = 63e9;
  hw->price_per_hour = 3.5;
}

double fx_rand(uint64_t *s) {
  *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(*s >> 11) / 9007199254740992.0;
}

void fx_problem(plan_emb_problem *p, int gpn, int nodes, double cap_gb) {
  memset(p, 0, sizeof *p);
  fx_hw(&p->hw, 141);
  p->gpus_per_node = gpn;
  p->nodes = nodes;
  p->batch_per_gpu = 2048;
  p->emb_dtype = COST_DT_FP32;
  p->act_bytes = 2;
  p->sparse_opt = PLAN_SOPT_ROWWISE_ADAGRAD;
  p->cap_bytes = cap_gb * 1e9;
  p->allow_host = 1;
  p->cw_max = 2;
}

void fx_cheapest(const emb_inst *in, size_t n, int *choice) {
  for (size_t i = 0; i < n; i++) {
    double best = INFINITY;
    for (int o = 0; o < in->nopt; o++) {
      const emb_opt *e = EOPT(in, i, o);
      double w = e->ms * (e->kind == EK_UNIFORM ? in->R : e->kind == EK_NODE ? in->G : e->k);
      if (e->ok && w < best) best = w, choice[i] = o;
    }
  }
}
