/* step_transformer.c: one training iteration of a GPT-style transformer
 * with Megatron-LM tensor (t), pipeline (p) and data (d) parallelism.
 *
 * FLOPs (Narayanan et al., "Efficient Large-Scale Language Model Training
 * on GPU Clusters Using Megatron-LM", SC'21, eq. 3; Korthikanti et al.,
 * "Reducing Activation Recomputation in Large Transformer Models", MLSys
 * 2023, appendix A): forward + backward of a layer is 24 B s h^2 (1 +
 * s/6h) for MHA with ffn = 4h, plus 6 B s h V for the logits; here each
 * GEMM is priced with cost_gemm at its TP-sharded shape instead (QKV
 * [bs, h(1+2kv/a)/t, h], scores and context batched over b a/t heads,
 * projection [bs, h, h/t], FFN [bs, f/t, h] and [bs, h, f/t]); backward is
 * the dgrad and wgrad GEMMs of each. Recompute: full = one more forward
 * of every layer; selective = the attention core (QK^T, softmax, dropout,
 * attention over V) again (Korthikanti et al. sec. 5).
 * Communication: per layer 2 all-reduces forward and 2 backward of
 * b s h activations within the TP group (with sequence parallelism the
 * same bytes as all-gather + reduce-scatter, sec. 4.2.2), not overlapped;
 * pipeline: 1F1B, time (m + p - 1)(t_f + t_b) per stage (bubble (p-1)/m,
 * Narayanan et al. sec. 2.2); the p2p of b s h / t per micro-batch
 * boundary (scatter-gather); DP gradient all-reduce after the last
 * backward, overlapped with it except the last bucket.
 * Activation memory per layer: Korthikanti et al. Table 2:
 *   none: sbh(10 + 24/t + 5as/(ht)), with SP: sbh(34/t + 5as/(ht)),
 *   selective: sbh(10 + 24/t) (SP: 34 sbh/t), full: 2 sbh;
 * the first stage holds min(p, m) micro-batches in flight (sec. 4.2.3).
 */
#include <math.h>

#include "costmodel/step_int.h"

typedef struct {
  double gemm_f, gemm_b, attn_f, attn_b, ew_f, ew_b, comm_f, comm_b;
  int64_t kernels_f, kernels_b;
} layer_t;

static void layer_time(step_acc *a, const cost_transformer *m, const cost_recipe *r, int64_t b,
                       layer_t *L) {
  int dt = r->precision;
  int64_t t = r->tp, s = m->seq_len, h = m->hidden, heads = m->heads;
  int64_t kv = m->kv_heads > 0 ? m->kv_heads : heads, f = m->ffn > 0 ? m->ffn : 4 * h;
  int64_t hd = h / heads, bs = b * s, ht = heads / t > 0 ? heads / t : 1;
  double ab = cost_dtype_bytes((cost_dtype)(dt == COST_DT_FP8 ? COST_DT_BF16 : dt));
  int sp = r->sequence_parallel && t > 1;
  memset(L, 0, sizeof *L);
  int64_t nqkv = (h + 2 * kv * hd) / t;
  L->gemm_f += step_gemm(a, bs, nqkv, h, 1, dt, "nt") + step_gemm(a, bs, h, h / t, 1, dt, "nt");
  L->gemm_b += step_gemm(a, bs, h, nqkv, 1, dt, "nn") + step_gemm(a, nqkv, h, bs, 1, dt, "tn") +
               step_gemm(a, bs, h / t, h, 1, dt, "nn") + step_gemm(a, h, h / t, bs, 1, dt, "tn");
  if (m->moe_experts > 1) {
    /* top_k experts per token, E experts' GEMMs each over its share */
    int64_t E = m->moe_experts, k = m->moe_top_k > 0 ? m->moe_top_k : 1;
    int64_t tok = (bs * k + E - 1) / E;
    double f1 = step_gemm(a, tok, f / t, h, 1, dt, "nt"),
           f2 = step_gemm(a, tok, h, f / t, 1, dt, "nt");
    L->gemm_f += (double)E * (f1 + f2);
    L->gemm_b += 2.0 * (double)E * (f1 + f2);
    L->kernels_f += 2 * E;
    L->kernels_b += 4 * E;
  } else {
    double f1 = step_gemm(a, bs, f / t, h, 1, dt, "nt"),
           f2 = step_gemm(a, bs, h, f / t, 1, dt, "nt");
    L->gemm_f += f1 + f2;
    L->gemm_b += step_gemm(a, bs, h, f / t, 1, dt, "nn") + step_gemm(a, f / t, h, bs, 1, dt, "tn") +
                 step_gemm(a, bs, f / t, h, 1, dt, "nn") + step_gemm(a, h, f / t, bs, 1, dt, "tn");
  }
  /* attention core: scores [s, s] and context [s, hd] per head */
  L->attn_f = step_gemm(a, s, s, hd, b * ht, dt, "nt") + step_gemm(a, s, hd, s, b * ht, dt, "nn");
  L->attn_b = 2 * L->attn_f;
  double S = (double)b * (double)ht * (double)s * (double)s;
  /* fused scale-mask-softmax (read, write) + dropout (read, write, 1-byte
   * mask); backward about twice */
  double att_bytes = S * (2 * ab + 2 * ab + 1);
  L->attn_f += step_stream(a, att_bytes);
  L->attn_b += step_stream(a, 2 * att_bytes);
  /* layer norms, dropouts, residual adds, bias-gelu: ~16 passes over b s h
   * (1/t of them with sequence parallelism) and 2 over b s f/t */
  double H = (double)bs * (double)h * ab;
  double ew = (sp ? 16.0 / (double)t : 16.0) * H + 2.0 * (double)bs * (double)(f / t) * ab;
  L->ew_f = step_stream(a, ew);
  L->ew_b = step_stream(a, 2 * ew);
  L->kernels_f += 12;
  L->kernels_b += 20;
  if (t > 1) {
    double c = step_coll(a, COST_COLL_ALLREDUCE, H, t, r->gpus_per_node);
    L->comm_f = 2 * c;
    L->comm_b = 2 * c;
  }
}

int step_transformer(step_acc *a, const cost_transformer *m, const cost_recipe *r) {
  cost_step_result *res = a->r;
  int64_t t = r->tp > 0 ? r->tp : 1, p = r->pp > 0 ? r->pp : 1, b = r->batch_per_gpu;
  if (m->layers < 1 || m->hidden < 1 || m->heads < 1 || m->seq_len < 1 || m->vocab < 1 ||
      m->hidden % m->heads)
    return COST_EINVAL;
  if (r->gpus % (t * p) || m->heads % t || (m->kv_heads > 0 && m->heads % m->kv_heads))
    return COST_ESTEP_SHAPE;
  int64_t d = r->gpus / (t * p);
  int64_t gb = r->global_batch > 0 ? r->global_batch : b * d;
  if (gb % (b * d)) return COST_ESTEP_SHAPE;
  int64_t mb = gb / (b * d), Lp = (m->layers + p - 1) / p;
  int dt = r->precision;
  int64_t h = m->hidden, s = m->seq_len, V = m->vocab, f = m->ffn > 0 ? m->ffn : 4 * h;
  int64_t kv = m->kv_heads > 0 ? m->kv_heads : m->heads, hd = h / m->heads;
  double ab = cost_dtype_bytes((cost_dtype)(dt == COST_DT_FP8 ? COST_DT_BF16 : dt));
  layer_t L;
  layer_time(a, m, r, b, &L);
  if (a->err) return a->err;

  /* per micro-batch, per stage */
  double rec = 0;
  int64_t rec_k = 0;
  if (r->checkpointing == COST_CKPT_FULL) {
    rec = L.gemm_f + L.attn_f + L.ew_f + L.comm_f;
    rec_k = L.kernels_f;
  } else if (r->checkpointing == COST_CKPT_SELECTIVE) {
    rec = L.attn_f;
    rec_k = 4;
  }
  double logit_f = step_gemm(a, b * s, V / t, h, 1, dt, "nt");
  double logit_b =
      step_gemm(a, b * s, h, V / t, 1, dt, "nn") + step_gemm(a, V / t, h, b * s, 1, dt, "tn");
  double ce = step_stream(a, 4.0 * (double)b * s * (double)(V / t) * 4.0);
  double stage_f = (double)Lp * (L.gemm_f + L.attn_f + L.ew_f + L.comm_f) + logit_f + ce;
  double stage_b = (double)Lp * (L.gemm_b + L.attn_b + L.ew_b + L.comm_b + rec) + logit_b + ce;
  double p2p = 0;
  if (p > 1) {
    cost_collective_op c = {.kind = COST_COLL_ALLGATHER,
                            .ranks = 2,
                            .scope = COST_SCOPE_CLUSTER,
                            .gpus_per_node = 1, /* adjacent stages: assumed on two nodes */
                            .bytes = 2.0 * (double)b * s * h * ab / (double)t};
    cost_result cr;
    /* a send of n bytes ~ an allgather of 2n over 2 ranks: alpha + n/B */
    if (cost_collective_p(a->hw, a->p, &c, &cr) == 0) p2p = 2 * cr.ms * 1e-3;
  }
  double per_mb = stage_f + stage_b + p2p;
  res->pipeline_bubble = (double)(p - 1) / (double)mb;

  /* class accounting (whole step on this GPU) */
  double nm = (double)mb, bub = (double)(p - 1) * per_mb;
  step_add(a, COST_KC_GEMM_FWD, COST_COMP_GEMM, PH_FB, nm * ((double)Lp * L.gemm_f + logit_f),
           (int64_t)(nm * Lp * 5), (int64_t)(nm * Lp * 5));
  step_add(a, COST_KC_GEMM_BWD, COST_COMP_GEMM, PH_FB,
           nm * ((double)Lp * (L.gemm_b + (r->checkpointing == COST_CKPT_FULL ? L.gemm_f : 0)) +
                 logit_b),
           (int64_t)(nm * Lp * 10), (int64_t)(nm * Lp * 10));
  double att =
      (double)Lp * (L.attn_f + L.attn_b + (r->checkpointing == COST_CKPT_SELECTIVE ? rec : 0) +
                    (r->checkpointing == COST_CKPT_FULL ? L.attn_f : 0));
  step_add(a, COST_KC_ATTENTION, COST_COMP_GEMM, PH_FB, nm * att, (int64_t)(nm * Lp * 8),
           (int64_t)(nm * Lp * 8));
  double ew =
      (double)Lp * (L.ew_f + L.ew_b + (r->checkpointing == COST_CKPT_FULL ? L.ew_f : 0)) + 2 * ce;
  step_add(a, COST_KC_ELEMENTWISE, COST_COMP_OTHER, PH_FB, nm * ew,
           (int64_t)(nm * (Lp * (L.kernels_f + L.kernels_b + rec_k))),
           (int64_t)(nm * (Lp * (L.kernels_f + L.kernels_b + rec_k))));
  double tpc =
      (double)Lp * (L.comm_f + L.comm_b + (r->checkpointing == COST_CKPT_FULL ? L.comm_f : 0));
  step_comm(a, r->sequence_parallel ? COST_KC_ALLGATHER_RS : COST_KC_ALLREDUCE, nm * tpc, nm * tpc,
            (int64_t)(nm * Lp * (r->checkpointing == COST_CKPT_FULL ? 6 : 4)));
  step_comm(a, COST_KC_P2P, nm * p2p, nm * p2p, p > 1 ? 2 * mb : 0);
  if (p > 1) {
    a->r->class_ms[COST_KC_BUBBLE] += bub * 1e3;
    a->r->comp_ms[COST_COMP_OTHER] += bub * 1e3;
    a->gpu[PH_FB] += bub;
  }

  /* parameters on this GPU and the optimizer */
  double per_layer = (double)h * (double)(h + 2 * kv * hd) + (double)h * h +
                     (m->moe_experts > 1 ? (double)m->moe_experts : 1.0) * 2.0 * (double)h * f +
                     4.0 * h;
  double params = (double)Lp * per_layer / (double)t + (double)V * h / (double)t;
  /* mixed-precision Adam (Megatron): bf16 weights, fp32 main grads, fp32
   * master weights + m + v; the update streams ~30 bytes per parameter */
  step_add(a, COST_KC_DENSE_OPT, COST_COMP_OPTIMIZER, PH_OPT, step_stream(a, params * 30.0), 4, 4);
  if (d > 1) {
    double ar = step_coll(a, COST_COLL_ALLREDUCE, params * 4.0, d, r->gpus_per_node);
    double last = ar * fmin(1.0, 40e6 / (params * 4.0));
    step_comm(a, COST_KC_ALLREDUCE, ar, fmax(last, ar - stage_b * nm * 0.5),
              (int64_t)ceil(params * 4 / 40e6));
  }

  /* memory (first stage: min(p, m) micro-batches of activations in flight) */
  double sbh = (double)s * b * h, as_h = 5.0 * (double)m->heads * s / (double)h;
  double tt = (double)t, per;
  int sp = r->sequence_parallel && t > 1;
  switch (r->checkpointing) {
  case COST_CKPT_FULL:
    per = 2.0 * sbh / (sp ? tt : 1.0);
    break;
  case COST_CKPT_SELECTIVE:
    per = sp ? 34.0 * sbh / tt : sbh * (10.0 + 24.0 / tt);
    break;
  default:
    per = sp ? sbh * (34.0 / tt + as_h / tt) : sbh * (10.0 + 24.0 / tt + as_h / tt);
    break;
  }
  per *= ab / 2.0; /* the paper's byte counts assume 16-bit activations */
  double inflight = (double)(mb < p ? mb : p);
  res->mem_bytes[COST_MEM_WEIGHTS] = params * ab;
  res->mem_bytes[COST_MEM_GRADIENTS] = params * 4.0;
  res->mem_bytes[COST_MEM_OPTIMIZER_STATE] = params * 12.0;
  res->mem_bytes[COST_MEM_ACTIVATIONS] =
      per * (double)Lp * inflight + (p == 1 ? 4.0 * (double)b * s * (double)(V / t) * ab : 0);
  res->mem_bytes[COST_MEM_WORKSPACE] = a->prof[COST_SP_WORKSPACE_MB] * 1048576.0;

  /* model FLOPs per GPU per step (no recompute): Narayanan et al. eq. 3 */
  double L_all = (double)m->layers;
  double fl = 72.0 * (double)gb * s * L_all * (double)h * h *
              (1.0 + (double)s / (6.0 * h) + (double)V / (16.0 * L_all * h));
  res->model_flops = fl / (double)r->gpus;
  res->tokens_per_s = 0;
  return 0;
}
