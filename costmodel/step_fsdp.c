/* step_fsdp.c: fully sharded data parallelism (ZeRO-3) of a transformer:
 * recipe dense_parallel "fsdp", as PyTorch FSDP2 (torch.distributed.fsdp.
 * fully_shard) and Megatron-FSDP (Megatron-Core's
 * data_parallel_sharding_strategy "optim_grads_params", the
 * Megatron-Bridge / NeMo GB200 and H100 Llama recipes' use_megatron_fsdp)
 * run it. docs/step-model.md, "FSDP".
 *
 * Sharding (Rajbhandari et al., "ZeRO", SC'20, stage 3; Megatron-FSDP
 * docs/mfsdp_design.md, "Sharding Strategies"): parameters, gradients and
 * optimizer state are split over the dg = dp x cp ranks that hold the same
 * weights (Megatron-Core flattens DP and CP into the FSDP mesh). The FSDP
 * unit is one transformer layer (Megatron-FSDP's fsdp_unit_modules =
 * TransformerLayer; FSDP2 applied per block as torchtitan does), plus a
 * root unit holding the embedding and output layer.
 *
 * Per micro-batch (PyTorch FSDP2 docs, "user contract": pre-forward and
 * pre-backward hooks all-gather, post-backward reduce-scatters; Megatron-
 * FSDP mfsdp_design.md, "Flow": the same stages, repeated for every micro-
 * batch of a gradient accumulation), each layer's weights are all-gathered
 * before its forward and again before its backward (they are freed after
 * the forward: that is what makes the memory 1/dg), and its gradients are
 * reduce-scattered after its backward. The root unit is gathered once per
 * micro-batch: FSDP2 keeps the root's parameters unsharded from forward to
 * backward (reshard_after_forward is False for the root, fully_shard docs).
 * Overlap (Megatron-FSDP runtime_schedule.md, "Prefetching"; FSDP2 notes,
 * "FSDP Prefetch Nuances"): the gather of layer i+1 runs on its own stream
 * during layer i's forward; in backward the gather of layer i-1 and the
 * reduce-scatter of layer i+1 both run during layer i's backward (the same
 * links carry both, so their times add). Exposed per micro-batch: the root's
 * and the first layer's gathers (nothing runs before them), what each
 * later gather or gather + reduce-scatter outlasts its layer's compute, the
 * gather of the last layer beyond the output layer's backward, and the
 * last layer's and the root's reduce-scatters (after the last backward
 * kernel; the next micro-batch's gathers queue behind them on the links).
 *
 * Bytes per parameter: Megatron (the Megatron-Bridge performance recipes):
 * fp8 weights are gathered in fp8 (fp8_param_gather = True in
 * bf16_with_fp8_current_scaling_mixed), other precisions in the compute
 * dtype; gradients reduced in the compute dtype (grad_reduce_in_fp32 =
 * False). Eager PyTorch (this model's eager path keeps fp32 master weights
 * under autocast, i.e. FSDP2 without a MixedPrecisionPolicy): fp32 both ways.
 * Not modelled: the SMs the NCCL kernels take from overlapped compute (no
 * published figure found beyond one forum measurement), link contention
 * with tensor-parallel collectives in the same window, HSDP.
 */
#include <math.h>

#include "costmodel/step_int.h"

/* bytes per parameter of the gathers and of the reduce-scatters */
static void wire_bytes(const step_fsdp_in *in, double *agb, double *rsb) {
  double ab =
      cost_dtype_bytes((cost_dtype)(in->precision == COST_DT_FP8 ? COST_DT_BF16 : in->precision));
  if (in->framework == COST_FW_MEGATRON) {
    *agb = in->precision == COST_DT_FP8 ? 1.0 : ab;
    *rsb = ab;
  } else {
    *agb = 4.0;
    *rsb = 4.0;
  }
}

double step_fsdp_buffers(const step_fsdp_in *in, double *grad_bytes) {
  double agb, rsb;
  wire_bytes(in, &agb, &rsb);
  /* two layers' weights in flight (the one computing, the one prefetched:
   * Megatron-FSDP's fsdp_double_buffer; FSDP2's implicit prefetch), the
   * root unit's for the whole micro-batch; two layers' unsharded gradients
   * (one being filled, one being reduced: runtime_schedule.md, "Fused
   * Weight Gradients") */
  double layers = in->layers > 1 ? 2.0 : 1.0;
  if (grad_bytes) *grad_bytes = layers * in->layer_params * rsb;
  return (layers * in->layer_params + in->root_params) * agb;
}

void step_fsdp(step_acc *a, const step_fsdp_in *in) {
  if (in->dg <= 1 || in->layers < 1 || in->micro_batches < 1) return;
  double agb, rsb;
  wire_bytes(in, &agb, &rsb);
  double ag = step_coll(a, COST_COLL_ALLGATHER, in->layer_params * agb, in->dg, in->gdp);
  double rs = step_coll(a, COST_COLL_REDUCESCATTER, in->layer_params * rsb, in->dg, in->gdp);
  double ag0 = step_coll(a, COST_COLL_ALLGATHER, in->root_params * agb, in->dg, in->gdp);
  double rs0 = step_coll(a, COST_COLL_REDUCESCATTER, in->root_params * rsb, in->dg, in->gdp);
  double n = (double)in->layers, nm = (double)in->micro_batches;
  /* forward: root and first layer exposed, later gathers behind a layer */
  double ex = ag0 + ag + (n - 1.0) * fmax(0.0, ag - in->fwd_s);
  /* backward: the last layer's gather behind the output layer's backward,
   * then per layer a gather and a reduce-scatter behind one layer's
   * backward, the last layer's and the root's reduce-scatters after it */
  ex += fmax(0.0, ag - in->head_b_s) + (n - 1.0) * fmax(0.0, ag + rs - in->bwd_s) + rs + rs0;
  double full = ag0 + rs0 + n * (2.0 * ag + rs);
  step_comm(a, COST_KC_ALLGATHER_RS, nm * full, nm * ex,
            (int64_t)(nm * (3.0 * n + 2.0))); /* 2 n + 1 gathers, n + 1 reduce-scatters */
}
