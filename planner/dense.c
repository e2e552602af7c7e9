/* dense.c: the dense part of a DLRM step under a recipe, from the step
 * model (costmodel/step.h). The tables are replaced by data-parallel
 * tables of one row, one per distinct dim with its count: the interaction, the
 * pooled-embedding activations and every MLP keep their shapes, while the
 * embedding work (lookups, their communication, table memory) shrinks to
 * nothing and is subtracted exactly (its component and memory use) -- the
 * embedding side is priced by plan_emb_* per sharding option instead.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "planner/planner_int.h"

int64_t plan_pad_multiple(const cost_hw *hw, int dtype) {
  int64_t m = 0;
  for (int i = 0; i < hw->n_mma && i < COST_MAX_MMA; i++)
    if (hw->mma[i].dtype == dtype && hw->mma[i].n > m) m = hw->mma[i].n;
  if (m <= 0) m = 64;
  if (m > 128) m = 128; /* wider instruction tiles are covered by 128-wide CTA tiles */
  if (m < 8) m = 8;
  return m;
}

int plan_dense_step(void *user, const cost_hw *hw, const plan_recipe *r, plan_dense_cost *out,
                    svc_err *err) {
  const plan_step_dense *sd = user;
  cost_workload w = sd->w;
  cost_recipe cr = sd->base;
  cost_table one = {.name = "dense_only",
                    .rows = 1,
                    .dim = 16,
                    .pooling = 1,
                    .count = 0,
                    .sharding = COST_SHARD_DATA_PARALLEL,
                    .placement = COST_PLACE_HBM};
  cost_table *tiny = NULL;
  size_t nt = 0;
  cost_step_result res;
  memset(out, 0, sizeof *out);
  /* one tiny table per distinct dim, so that mixed dims (dcn, concat) keep
   * the interaction's width */
  if (w.dlrm.n_tables && !(tiny = calloc(w.dlrm.n_tables, sizeof *tiny)))
    return svc_err_set(err, SVC_NOMEM, "", NULL);
  for (size_t i = 0; i < w.dlrm.n_tables; i++) {
    const cost_table *t = &w.dlrm.tables[i];
    size_t j = 0;
    while (j < nt && tiny[j].dim != t->dim) j++;
    if (j == nt) {
      tiny[nt] = one;
      tiny[nt++].dim = t->dim;
    }
    tiny[j].count += t->count > 0 ? t->count : 1;
  }
  if (nt) {
    w.dlrm.tables = tiny;
    w.dlrm.n_tables = nt;
  }
  cr.gpus = (int64_t)r->gpus_per_node * r->nodes;
  cr.gpus_per_node = r->gpus_per_node;
  cr.batch_per_gpu = r->batch_per_gpu;
  cr.precision = r->dense_dtype;
  cr.embedding_precision = r->emb_dtype;
  cr.checkpointing = r->checkpointing;
  cr.dense_parallel = r->fsdp ? COST_DP_FSDP : COST_DP_DDP;
  cr.pad_to = r->pad ? plan_pad_multiple(hw, r->dense_dtype) : 0;
  cr.sharding = COST_SHARD_DATA_PARALLEL;
  cr.placement = COST_PLACE_HBM;
  int rc = cost_step(hw, &w, &cr, &res);
  free(tiny);
  if (rc)
    return svc_err_set(err, rc == COST_EDTYPE ? SVC_UNSUPPORTED_DTYPE : SVC_BAD_FIELD, "workload",
                       "the step model cannot price the dense part on %s (code %d)", hw->name, rc);
  out->ms = res.step_ms - res.comp_ms[COST_COMP_EMBEDDING];
  out->weights_bytes = res.mem_bytes[COST_MEM_WEIGHTS];
  out->grads_bytes = res.mem_bytes[COST_MEM_GRADIENTS];
  out->optim_bytes = res.mem_bytes[COST_MEM_OPTIMIZER_STATE];
  out->act_bytes = res.mem_bytes[COST_MEM_ACTIVATIONS];
  out->workspace_bytes = res.mem_bytes[COST_MEM_WORKSPACE];
  out->bytes = res.peak_memory_bytes - res.mem_bytes[COST_MEM_EMBEDDINGS];
  out->comm_ms = res.comp_ms[COST_COMP_COMMUNICATION];
  out->overhead_ms = res.comp_ms[COST_COMP_OVERHEAD];
  out->kernels = res.kernels;
  if (!(out->ms > 0) || !isfinite(out->bytes))
    return svc_err_set(err, SVC_INTERNAL, "", "the step model returned no dense time");
  return 0;
}
