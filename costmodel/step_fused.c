/* step_fused.c: the per-table glue around the runner's fused_triton
 * embeddings (validate/gpu/fused_tbe.py build/call, validate/gpu/dlrm_step.py
 * forward) that the TBE's two kernels do not cover: each table's pooled rows
 * leave the one [B, sum(dims)] output as views, and autograd pays for them
 * per table in the backward.
 *
 * Counted from torch.profiler over one fused step of 26 tables
 * (data/measurements/h200-dcn-host/dcn_repeat.json, `profile`: the fp32
 * and bf16 fused rows; counts per step / 26 tables):
 *  every dtype, per table: the split's view and the forward's [:B] slice
 *    (aten::slice 82 = ~3 a table with slice_backward's own), and in the
 *    backward SliceBackward0 -> aten::slice_backward: a zero-filled [B, dim]
 *    fp32 buffer (FillFunctor<float> 28) and the gradient copied into it
 *    (direct_copy 27): 2 kernels, 4 host ops (slice, the autograd node,
 *    the zero fill, the copy);
 *  bf16 under autocast, per table more: the cast of the pooled rows to bf16
 *    (bfloat16_copy 29, aten::_to_copy 56 = 2 a table), its backward
 *    (ToCopyBackward0 26: the cast back, unrolled direct_copy 26) and one
 *    more copy of the strided gradient view (nocast direct_copy 52 = 2 a
 *    table against fp32's 1): 3 kernels, 4 host ops (the cast, the node,
 *    the cast back, the copy).
 * So the profiled step runs 3 (fp32) or 6 (bf16) kernels a table where the
 * fused profile counted 1 (torch.full of the bag lengths). Each kernel is
 * priced as queued (step_add: ~1 us) plus its bytes streamed. */
#include "costmodel/step_int.h"

/* Does the runner's step run under autocast (16-bit compute; fp32, tf32
 * and fp8 recipes do not)? */
static int autocast(const cost_recipe *r) {
  return r->precision != COST_DT_FP32 && r->precision != COST_DT_FP8 &&
         r->precision != COST_DT_TF32;
}

void step_fused_glue(step_acc *a, const cost_recipe *r, int64_t B, double n_tables,
                     double sum_dim) {
  if (r->framework != COST_FW_FUSED_TRITON || !(n_tables > 0)) return;
  int low = autocast(r);
  double ab = cost_dtype_bytes((cost_dtype)r->precision);
  double X = (double)B * sum_dim; /* all tables' pooled elements */
  int64_t T = (int64_t)n_tables;
  /* slice_backward: zero fill (4 B written) and the copy (4 read, 4 written) */
  double g = step_stream(a, 4.0 * X) + step_stream(a, 8.0 * X);
  step_add(a, COST_KC_ELEMENTWISE, COST_COMP_OTHER, PH_FB, g + 2.0 * (n_tables - 1) * a->launch_s,
           2 * T, 4 * T);
  if (low) {
    /* the cast forward (4 read, ab written), back (ab read, 4 written), one
     * more strided copy of the fp32 gradient */
    double c = 2.0 * step_stream(a, (4.0 + ab) * X) + step_stream(a, 8.0 * X);
    step_add(a, COST_KC_ELEMENTWISE, COST_COMP_OTHER, PH_FB, c + 3.0 * (n_tables - 1) * a->launch_s,
             3 * T, 4 * T);
  }
}

/* Fitted on the fused rows of data/measurements/h200-dcn-host sets A and B
 * only (fit_fused.py there), at the profile's per-op time; a recipe's
 * host_op_us scales it with host_scale. */
#ifndef STEP_FUSED_SERIAL_US
#define STEP_FUSED_SERIAL_US 1250.0
#endif

/* The runner times every step to a device sync (validate/gpu/dlrm_step.py
 * _one_case: step(), env.sync()), so each step's GPU starts idle and waits
 * for the host to issue its forward. Up to the interaction's first GEMM the
 * GPU has little to do (the bottom MLP's forward, the TBE forward) while the
 * host issues (job_env.py bce_train_step; dlrm_step.py forward; fused_tbe.py
 * build/call and _TBEFn.forward):
 *  the bottom MLP: a linear and a relu per layer (2 ops);
 *  the TBE's inputs: per table a reshape and torch.full of the bag lengths
 *    (2T), then two cats, zeros, cumsum and the offsets' slice-copy (5), the
 *    Function's apply, its anchor and output buffers, the Triton launch (4),
 *    the split (1); per table the [:B] slice (T); the cat into x0 (1);
 *  under autocast (bf16/fp16): per table the cast of the pooled rows (T),
 *    per layer the weight and bias casts (2) and the input's (1), and
 *    autocast's re-dispatch of the forward ops above (one op each, as the
 *    region's ops in step_dlrm.c).
 * plus a per-step serial host time that no op count explains (the loop, the
 * optimizers' zero_grad, the sync's wake-up): STEP_FUSED_SERIAL_US. The
 * lead-in the GPU cannot hide is max(host, GPU) over this part
 * (step_finish); the rest overlaps as before. */
void step_fused_lead(step_acc *a, const cost_recipe *r, int64_t n_bottom, double n_tables,
                     double gpu_s) {
  if (r->framework != COST_FW_FUSED_TRITON) return;
  int cast = autocast(r);
  double nb = (double)n_bottom, T = n_tables;
  double base = 2.0 * nb + 3.0 * T + 11.0;
  double ops = base + (cast ? T + 2.0 * nb + 1.0 + (2.0 * nb + 3.0 * T) : 0.0);
  double serial = STEP_FUSED_SERIAL_US * 1e-6 * a->host_scale;
  step_host(a, PH_FB, serial);
  a->lead_host = ops * a->op_s + serial;
  a->lead_gpu = gpu_s;
}
