/* step_transformer.c: one training iteration of a GPT-style transformer
 * with Megatron-LM tensor (t), pipeline (p) and data (d) parallelism.
 *
 * FLOPs (Narayanan et al., "Efficient Large-Scale Language Model Training
 * on GPU Clusters Using Megatron-LM", SC'21, eq. 3; Korthikanti et al.,
 * "Reducing Activation Recomputation in Large Transformer Models", MLSys
 * 2023, appendix A): forward + backward of a layer is 24 B s h^2 (1 +
 * s/6h) for MHA with ffn = 4h, plus 6 B s h V for the logits; here each
 * GEMM is priced with cost_gemm at its TP-sharded shape instead (QKV
 * [bs, h(1+2kv/a)/t, h], projection [bs, h, h/t], FFN [bs, f/t, h] and
 * [bs, h, f/t]; a gated (SwiGLU) FFN has two [bs, f/t, h] GEMMs, gate and
 * up: Shazeer, "GLU Variants Improve Transformer", 2020); backward is the
 * dgrad and wgrad GEMMs of each.
 * Attention core:
 *   unfused / fused_softmax: scores [s, s] and context [s, hd] per head as
 *     batched GEMMs, the scale, mask and softmax (eager ops, or Megatron's
 *     fused kernel) and dropout streamed over the b a s^2 scores;
 *   flash (FlashAttention / SDPA: Dao et al., NeurIPS 2022; Dao,
 *     arXiv:2307.08691): 4 b (a/t) s^2 hd FLOPs forward, half of them for
 *     a causal mask (tiles above the diagonal are skipped), 2.5x that
 *     backward (five matmuls against two, the backward recomputing the
 *     scores: FlashAttention-2 sec. 3.1.2), at the profile's achieved
 *     fraction of the dense tensor peak (step_flash_eff_fwd/bwd); never
 *     less than streaming Q, K, V, O (and dO, dQ, dK, dV backward).
 * Recompute: full = one more forward of every layer; selective = the
 * attention core again (Korthikanti et al. sec. 5).
 * Communication: per layer 2 all-reduces forward and 2 backward of
 * b s h activations within the TP group (with sequence parallelism the
 * same bytes as all-gather + reduce-scatter, sec. 4.2.2), not overlapped;
 * pipeline: 1F1B, time (m + p - 1)(t_f + t_b) per stage (bubble (p-1)/m,
 * Narayanan et al. sec. 2.2); the p2p of b s h / t per micro-batch
 * boundary (scatter-gather); DP gradient all-reduce after the last
 * backward, overlapped with it except the last bucket; with
 * dense_parallel fsdp, per-micro-batch gathers and reduce-scatters instead
 * (step_fsdp.c).
 * Activation memory per layer: the tensors autograd keeps, counted one by
 * one (act_layer below); for unfused attention with dropout and ffn = 4h
 * the count is Korthikanti et al.'s Table 2 exactly:
 *   none: sbh(10 + 24/t + 5as/(ht)), with SP: sbh(34/t + 5as/(ht)),
 *   selective: sbh(10 + 24/t) (SP: 34 sbh/t), full: 2 sbh;
 * flash attention keeps Q, K, V, its output and the softmax log-sum-exp
 * (fp32, b a s), never the s x s scores. With full recompute the layer
 * being recomputed holds its activations once more during its backward.
 * The first stage holds min(p, m) micro-batches in flight (sec. 4.2.3).
 * Interleaved pipeline (vp chunks per GPU, Narayanan et al. sec. 2.2.2):
 * the bubble shrinks to (p - 1) / (vp m) of a micro-batch's time; each
 * micro-batch crosses vp times as many stage boundaries, and Megatron
 * overlaps those sends with the next chunk's compute (overlap_p2p_comm,
 * on by default with interleaving), so they are counted, not exposed.
 * Context parallelism (cp ranks split each sequence: Megatron-Core's
 * context_parallel, ring attention as in Liu et al., arXiv:2310.01889):
 * every GEMM, norm, loss and activation of a rank covers s / cp tokens;
 * causal attention, load-balanced by giving each rank two mirrored
 * chunks, is 1 / cp of the whole sequence's attention per rank, priced
 * as cp times the attention of s / cp tokens; the K, V chunk travels the
 * ring cp - 1 times forward and twice as much backward (K, V and their
 * gradients), overlapped with the attention of the chunk in hand (only
 * the excess is exposed); the weight gradients are reduced over dp x cp.
 */
#include <math.h>
#include <stdlib.h>

#include "costmodel/step_int.h"

typedef struct {
  double gemm_f, gemm_b, attn_f, attn_b, ew_f, ew_b, comm_f, comm_b;
  int64_t kernels_f, kernels_b;
} layer_t;

int64_t cost_transformer_ffn(const cost_transformer *m) {
  if (m->ffn > 0) return m->ffn;
  if (m->mlp == COST_MLP_SWIGLU) return (8 * m->hidden / 3 + 255) / 256 * 256;
  return 4 * m->hidden;
}

/* Flash attention, forward (bwd = 0) or backward, of b (batch x heads)
 * rows: FlashAttention-2 (Dao, arXiv:2307.08691, Alg. 1-2) computes
 * 128 x 128 tiles of a query block against a key block, for a causal mask
 * only the nb (nb + 1) / 2 tiles on and below the diagonal (nb = s / 128);
 * a tile is 4 * 128^2 * hd FLOPs forward, 2.5 times that backward (five
 * matmuls against two, sec. 3.1.2). The profile adds what the FLOPs omit:
 * per query block block_f/b tiles' worth of work (loading Q, rescaling
 * and writing O; dQ backward), and per tile hd0 head dims' worth (softmax,
 * masking and rescaling, which do not grow with hd); the rest runs at
 * eff_f/b of the tensor peak. Never less than streaming Q, K, V, O (and
 * their gradients backward). */
static double flash_kernel_s(const cost_hw *hw, const double *prof, double bw, int64_t b,
                             int64_t heads, int64_t kv, int64_t s, int64_t hd, int dt, int bwd) {
  int cdt = dt == COST_DT_FP8 ? COST_DT_BF16 : dt;
  double nb = ceil((double)s / 128.0), tile = 128.0 * 128.0;
  double blk = prof[bwd ? COST_SP_FLASH_BLOCK_B : COST_SP_FLASH_BLOCK_F];
  double tiles = nb * (nb + 1.0) / 2.0 + blk * nb;
  double fl = 4.0 * tile * ((double)hd + prof[COST_SP_FLASH_HD0]) * tiles * (double)b *
              (double)heads * (bwd ? 2.5 : 1.0);
  double eff = prof[bwd ? COST_SP_FLASH_EFF_B : COST_SP_FLASH_EFF_F];
  double peak = hw->peak_flops[cdt] * cost_clock_ratio(hw);
  double ab = cost_dtype_bytes((cost_dtype)cdt);
  double bytes = (double)b * (double)s * (double)hd * ab * (2.0 * (double)heads + 2.0 * (double)kv);
  if (bwd) bytes *= 2.0;
  double tc = peak > 0 && eff > 0 ? fl / (peak * eff) : 0;
  double tm = bw > 0 ? bytes / bw : 0;
  return tc > tm ? tc : tm;
}

static double flash_time(step_acc *a, const cost_transformer *m, int64_t b, int64_t ht, int dt,
                         int bwd) {
  int64_t kv = m->kv_heads > 0 ? m->kv_heads : m->heads, kvt = kv * ht / m->heads;
  if (kvt < 1) kvt = 1;
  return a->launch_s + flash_kernel_s(a->hw, a->prof, a->bw, b, ht, kvt, m->seq_len,
                                      m->hidden / m->heads, dt, bwd);
}

double cost_flash_ms(const cost_hw *hw, const cost_flash_sample *s, int bwd) {
  double prof[COST_SP__COUNT];
  if (!hw || !s || s->b < 1 || s->heads < 1 || s->kv_heads < 1 || s->s < 1 || s->hd < 1) return NAN;
  step_profile_resolve(hw, prof);
  double bw = hw->hbm_bw * cost_param_value(hw, "stream_eff");
  return 1e3 *
         flash_kernel_s(hw, prof, bw, s->b, s->heads, s->kv_heads, s->s, s->hd, COST_DT_BF16, bwd);
}

int cost_flash_error(const cost_hw *hw, const cost_flash_sample *s, size_t n, double *median,
                     double *max) {
  double *e = calloc(2 * n + 1, sizeof *e);
  int k = 0;
  *median = *max = NAN;
  if (!e) return COST_EINVAL;
  for (size_t i = 0; i < n; i++)
    for (int d = 0; d < 2; d++) {
      double meas = d ? s[i].bwd_ms : s[i].fwd_ms, pr = cost_flash_ms(hw, &s[i], d);
      if (meas > 0 && isfinite(pr)) e[k++] = fabs(pr / meas - 1);
    }
  if (k) {
    *max = 0;
    for (int i = 0; i < k; i++) *max = fmax(*max, e[i]);
    *median = step_median(e, k);
  }
  free(e);
  return 0;
}

/* sum of squared log residuals of one direction at (blk, hd0), the
 * efficiency in closed form (mean log ratio); returns it, sets *eff */
static double flash_sse(const cost_hw *hw, const cost_flash_sample *s, size_t n, double *prof,
                        int bwd, double blk, double hd0, double *eff) {
  prof[bwd ? COST_SP_FLASH_BLOCK_B : COST_SP_FLASH_BLOCK_F] = blk;
  prof[COST_SP_FLASH_HD0] = hd0;
  prof[bwd ? COST_SP_FLASH_EFF_B : COST_SP_FLASH_EFF_F] = 1.0;
  double sum = 0, sq = 0;
  int k = 0;
  for (size_t i = 0; i < n; i++) {
    double meas = bwd ? s[i].bwd_ms : s[i].fwd_ms;
    if (!(meas > 0)) continue;
    /* compute-only time at efficiency 1 (the streaming floor never binds
     * for the shapes a fit needs; cost_flash_ms keeps it) */
    double t1 = 1e3 * flash_kernel_s(hw, prof, 0, s[i].b, s[i].heads, s[i].kv_heads, s[i].s,
                                     s[i].hd, COST_DT_BF16, bwd);
    double r = log(t1 / meas); /* = log(eff) at the optimum */
    sum += r;
    sq += r * r;
    k++;
  }
  if (!k) return INFINITY;
  double le = sum / k;
  *eff = exp(le);
  return sq - k * le * le;
}

int cost_flash_fit(const cost_hw *hw, const cost_flash_sample *s, size_t n, cost_calib *calib,
                   cost_flash_fit_report *rep) {
  double prof[COST_SP__COUNT];
  if (!hw || !s || !calib) return COST_EINVAL;
  size_t used = 0;
  for (size_t i = 0; i < n; i++) used += s[i].fwd_ms > 0 && s[i].bwd_ms > 0;
  if (used < 4) return COST_EINVAL;
  cost_hw h = *hw;
  h.calib = *calib;
  step_profile_resolve(&h, prof);
  cost_flash_fit_report r = {.n = (int)used};
  double ignore;
  if (cost_flash_error(&h, s, n, &r.median_err_before, &ignore)) return COST_EINVAL;
  /* forward: block term and head-dim term on a grid; backward: its block
   * term with the forward's head-dim term (the same softmax work per tile) */
  double best = INFINITY;
  for (double hd0 = 0; hd0 <= 128.0; hd0 += 1.0)
    for (double blk = 0; blk <= 8.0; blk += 0.05) {
      double eff = 0, sse = flash_sse(&h, s, n, prof, 0, blk, hd0, &eff);
      if (sse < best) best = sse, r.hd0 = hd0, r.block_f = blk, r.eff_f = eff;
    }
  best = INFINITY;
  for (double blk = 0; blk <= 16.0; blk += 0.05) {
    double eff = 0, sse = flash_sse(&h, s, n, prof, 1, blk, r.hd0, &eff);
    if (sse < best) best = sse, r.block_b = blk, r.eff_b = eff;
  }
  cost_calib c = *calib;
  if (cost_calib_set(&c, "step_flash_eff_fwd", r.eff_f) ||
      cost_calib_set(&c, "step_flash_eff_bwd", r.eff_b) ||
      cost_calib_set(&c, "step_flash_block_fwd", r.block_f) ||
      cost_calib_set(&c, "step_flash_block_bwd", r.block_b) ||
      cost_calib_set(&c, "step_flash_hd0", r.hd0))
    return COST_ENOHW;
  h.calib = c;
  if (cost_flash_error(&h, s, n, &r.median_err, &r.max_err)) return COST_EINVAL;
  *calib = c;
  if (rep) *rep = r;
  return 0;
}

/* A training step keeps the GPU under dense load from end to end: where the
 * board's power cap binds, its tensor cores run at the load clock, not at
 * the clock of the short kernels the op model is calibrated on (hw->
 * load_clock_hz: measured on the H200, data/measurements/h200-sustained;
 * published for the B200, data/hardware/b200.json). The GEMMs' times are
 * scaled by (sustained, else peak, else boost clock) / load clock.
 * Flash attention is not: its sweep (attention_fit.json) ran right after
 * the steps, on a GPU already at its load clock. */
static double load_derate(const cost_hw *hw) {
  double ref = hw->sustained_clock_hz > 0 ? hw->sustained_clock_hz
               : hw->peak_clock_hz > 0    ? hw->peak_clock_hz
                                          : hw->clock_hz;
  if (!(hw->load_clock_hz > 0) || !(ref > 0)) return 1.0;
  return fmax(1.0, ref / hw->load_clock_hz);
}

/* Seconds of one eager elementwise kernel moving `bytes` at a fraction eff
 * of the HBM bandwidth (the profile's copy_eff, bcast_eff, softmax_*). */
static double ew_s(step_acc *a, double bytes, double eff) {
  double bw = a->hw->hbm_bw * eff;
  return a->launch_s + (bytes > 0 && bw > 0 ? bytes / bw : 0);
}

/* Eager PyTorch's unfused attention core as the runner writes it
 * (validate/gpu/transformer_step.py: (Q K^T) * scale, masked_fill with a
 * causal s x s mask, softmax, dropout, times V), kernel by kernel over the
 * S = b (a/t) s^2 scores of ab bytes (torch.profiler, data/measurements/
 * h200-transformer/steps_profile_fit.json):
 *   forward: the scale (read, write: 2 ab, vectorized); masked_fill, which
 *     is a clone (2 ab) and an in-place masked_fill_ through the
 *     broadcasting, non-vectorized path (2 ab at bcast_eff); the softmax
 *     (2 ab; rows up to 2048 elements and 8 KiB in the persistent warp
 *     softmax at softmax_1k/2k, longer rows one block each at copy_eff);
 *     dropout (2 ab + a 1-byte mask);
 *   backward: dropout's (2 ab + 1), the softmax's (3 ab), masked_fill's
 *     clone and masked_fill_ again, the scale's (2 ab).
 * Grouped K, V are expanded to every head first (repeat_interleave), and
 * their gradients summed back. */
static void eager_core(step_acc *a, const cost_transformer *m, int64_t b, int64_t ht, double ab,
                       layer_t *L) {
  int64_t s = m->seq_len, hd = m->hidden / m->heads;
  double S = (double)b * (double)ht * (double)s * (double)s;
  double ce = a->prof[COST_SP_COPY_EFF], be = a->prof[COST_SP_BCAST_EFF];
  double se = s <= 1024                                 ? a->prof[COST_SP_SOFTMAX_1K]
              : (s <= 2048 && (double)s * ab <= 8192.0) ? a->prof[COST_SP_SOFTMAX_2K]
                                                        : ce;
  double drop = m->dropout > 0 ? 2 * ab + 1 : 0;
  L->attn_f += ew_s(a, S * 2 * ab, ce) + ew_s(a, S * 2 * ab, ce) + ew_s(a, S * 2 * ab, be) +
               ew_s(a, S * 2 * ab, se) + (drop > 0 ? ew_s(a, S * drop, ce) : 0);
  L->attn_b += (drop > 0 ? ew_s(a, S * drop, ce) : 0) + ew_s(a, S * 3 * ab, ce) +
               ew_s(a, S * 2 * ab, ce) + ew_s(a, S * 2 * ab, be) + ew_s(a, S * 2 * ab, ce);
  L->kernels_f += 4 + (drop > 0);
  L->kernels_b += 4 + (drop > 0);
  int64_t kv = m->kv_heads > 0 ? m->kv_heads : m->heads, kvt = kv * ht / m->heads;
  if (kvt < 1) kvt = 1;
  if (kvt < ht) {
    double x = 2.0 * (double)b * (double)s * (double)hd * ab * (double)(ht + kvt);
    L->attn_f += 2 * ew_s(a, x / 2.0, ce);
    L->attn_b += 2 * ew_s(a, x / 2.0, ce);
    L->kernels_f += 2;
    L->kernels_b += 2;
  }
}

static void layer_time(step_acc *a, const cost_transformer *m, const cost_recipe *r, int64_t b,
                       layer_t *L) {
  int dt = r->precision;
  int64_t t = r->tp, s = m->seq_len, h = m->hidden, heads = m->heads;
  int64_t kv = m->kv_heads > 0 ? m->kv_heads : heads, f = cost_transformer_ffn(m);
  int64_t hd = h / heads, bs = b * s, ht = heads / t > 0 ? heads / t : 1;
  double ab = cost_dtype_bytes((cost_dtype)(dt == COST_DT_FP8 ? COST_DT_BF16 : dt));
  int sp = r->sequence_parallel && t > 1, glu = m->mlp == COST_MLP_SWIGLU;
  memset(L, 0, sizeof *L);
  int64_t nqkv = (h + 2 * kv * hd) / t;
  /* one statement per GEMM: the list of cost_step_gemms keeps this order */
  step_tag(a, "qkv");
  L->gemm_f += step_gemm_as(a, "fwd", bs, nqkv, h, 1, dt, "nt");
  L->gemm_b += step_gemm_as(a, "dgrad", bs, h, nqkv, 1, dt, "nn");
  L->gemm_b += step_gemm_as(a, "wgrad", nqkv, h, bs, 1, dt, "tn");
  step_tag(a, "attn out");
  L->gemm_f += step_gemm_as(a, "fwd", bs, h, h / t, 1, dt, "nt");
  L->gemm_b += step_gemm_as(a, "dgrad", bs, h / t, h, 1, dt, "nn");
  L->gemm_b += step_gemm_as(a, "wgrad", h, h / t, bs, 1, dt, "tn");
  /* the FFN's GEMMs over tok tokens, n_ffn times (moe: once per expert) */
  int64_t tok = bs, n_ffn = 1;
  if (m->moe_experts > 1) {
    /* top_k experts per token, E experts' GEMMs each over its share */
    int64_t E = m->moe_experts, k = m->moe_top_k > 0 ? m->moe_top_k : 1;
    tok = (bs * k + E - 1) / E;
    n_ffn = E;
  }
  step_tag(a, "ffn up");
  double up_f = step_gemm_as(a, "fwd", tok, f / t, h, 1, dt, "nt");
  double up_b = step_gemm_as(a, "dgrad", tok, h, f / t, 1, dt, "nn");
  up_b += step_gemm_as(a, "wgrad", f / t, h, tok, 1, dt, "tn");
  step_tag(a, "ffn down");
  double down_f = step_gemm_as(a, "fwd", tok, h, f / t, 1, dt, "nt");
  double down_b = step_gemm_as(a, "dgrad", tok, f / t, h, 1, dt, "nn");
  down_b += step_gemm_as(a, "wgrad", h, f / t, tok, 1, dt, "tn");
  double nup = glu ? 2.0 : 1.0;
  L->gemm_f += (double)n_ffn * (nup * up_f + down_f);
  L->gemm_b += (double)n_ffn * (nup * up_b + down_b);
  if (n_ffn > 1) {
    L->kernels_f += n_ffn * (glu ? 3 : 2);
    L->kernels_b += n_ffn * (glu ? 6 : 4);
  }
  double der = load_derate(a->hw);
  L->gemm_f *= der;
  L->gemm_b *= der;
  double S = (double)b * (double)ht * (double)s * (double)s;
  if (m->attention == COST_ATTN_FLASH) {
    L->attn_f = flash_time(a, m, b, ht, dt, 0);
    L->attn_b = flash_time(a, m, b, ht, dt, 1);
  } else {
    /* scores [s, s] and context [s, hd] per head as batched GEMMs */
    step_tag(a, "attention");
    L->attn_f = step_gemm_as(a, "QK^T", s, s, hd, b * ht, dt, "nt");
    L->attn_f += step_gemm_as(a, "PV", s, hd, s, b * ht, dt, "nn");
    L->attn_b = 2 * L->attn_f;
    double drop = m->dropout > 0 ? 2 * ab + 1 : 0;
    if (m->attention == COST_ATTN_UNFUSED) {
      eager_core(a, m, b, ht, ab, L);
    } else {
      /* Megatron's fused scale-mask-softmax: one read and one write of the
       * scores, backward about twice; dropout adds a read, a write and a
       * 1-byte mask, twice that backward */
      double att_f = S * (2 * ab + drop);
      L->attn_f += ew_s(a, att_f, a->prof[COST_SP_COPY_EFF]);
      L->attn_b += ew_s(a, 2 * att_f, a->prof[COST_SP_COPY_EFF]);
    }
  }
  /* rotary embeddings on Q and K (RoFormer, arXiv:2104.09864), eager as
   * Llama's reference and the runner write them: x cos + rotate_half(x) sin
   * = a multiply, a negated half, a concatenation, a multiply and an add,
   * ~10 ab bytes per element of Q and K forward and as much backward; the
   * operands are strided head views and [s, hd] tables broadcast over batch
   * and heads, so the kernels take TensorIterator's non-vectorized path
   * (bcast_eff). */
  if (m->position == COST_POS_ROTARY) {
    int64_t kvt = kv * ht / heads > 0 ? kv * ht / heads : 1;
    double E = (double)bs * (double)(ht + kvt) * (double)hd;
    L->ew_f += ew_s(a, 10.0 * ab * E, a->prof[COST_SP_BCAST_EFF]) + 4 * a->launch_s;
    L->ew_b += ew_s(a, 10.0 * ab * E, a->prof[COST_SP_BCAST_EFF]) + 4 * a->launch_s;
    L->kernels_f += 5;
    L->kernels_b += 5;
  }
  /* norms (read, write) and residual adds (2 reads, a write): 10 passes
   * over b s h, with the two dropouts (read, write, 1-byte mask) 16; the
   * activation 2 passes over b s f/t (gelu) or 5 (silu, then its product
   * with the up projection); backward about twice. With sequence
   * parallelism the b s h passes run on 1/t of the tokens. */
  double H = (double)bs * (double)h * ab;
  double hpass = m->dropout > 0 ? 16.0 : 10.0;
  double ew = (sp ? hpass / (double)t : hpass) * H +
              (glu ? 5.0 : 2.0) * (double)(tok * n_ffn) * (double)(f / t) * ab;
  L->ew_f += ew_s(a, ew, a->prof[COST_SP_COPY_EFF]);
  L->ew_b += ew_s(a, 2 * ew, a->prof[COST_SP_COPY_EFF]);
  L->kernels_f += 12;
  L->kernels_b += 20;
  /* fp8 (Transformer Engine, per-tensor current scaling): each GEMM
   * operand that is not a cached weight is scaled and cast before its
   * GEMM -- an amax pass, then a cast that also writes the transposed copy
   * Hopper's and Blackwell's fp8 GEMMs need for the wgrad (TE docs, "Using
   * FP8 with Transformer Engine"; transformer_engine cast_transpose) --
   * memory-bound kernels over: forward the inputs of QKV, the projection,
   * FC1 and FC2; backward the output gradients of the same four GEMMs.
   * With sequence parallelism the inputs gathered over the TP group are
   * cast before the gather (1/t of them). step_fp8_cast_bytes is the
   * bytes moved per element, fitted on published throughputs (step_fit.c). */
  if (dt == COST_DT_FP8 && a->prof[COST_SP_FP8_CAST_B] > 0) {
    double q = a->prof[COST_SP_FP8_CAST_B], tsp = sp ? (double)t : 1.0;
    double hh = (double)h, ft = (double)(f / t) * (double)n_ffn * (double)tok / (double)bs;
    double ef = (double)bs * (2.0 * hh / tsp + hh / (double)t + ft);
    double eb = (double)bs * ((double)nqkv + 2.0 * hh / tsp + nup * ft);
    L->ew_f += ew_s(a, q * ef, a->prof[COST_SP_COPY_EFF]) + 7 * a->launch_s;
    L->ew_b += ew_s(a, q * eb, a->prof[COST_SP_COPY_EFF]) + 7 * a->launch_s;
    L->kernels_f += 8;
    L->kernels_b += 8;
  }
  if (t > 1) {
    double c = step_coll(a, COST_COLL_ALLREDUCE, H, t, r->gpus_per_node);
    L->comm_f = 2 * c;
    L->comm_b = 2 * c;
  }
}

/* Bytes one layer keeps for its backward, per micro-batch (header):
 * ckpt is the recipe's checkpointing other than full. */
static double act_layer(const cost_transformer *m, const cost_recipe *r, int64_t b, double ab,
                        int ckpt) {
  double t = r->tp > 0 ? (double)r->tp : 1.0;
  int sp = r->sequence_parallel && r->tp > 1;
  double s = (double)m->seq_len, h = (double)m->hidden, a = (double)m->heads;
  double kv = m->kv_heads > 0 ? (double)m->kv_heads : a, hd = h / a;
  double f = (double)cost_transformer_ffn(m), sb = s * (double)b, sbh = sb * h;
  double rep = sp ? 1.0 / t : 1.0; /* tensors replicated over the TP group (1/t with SP) */
  int drop = m->dropout > 0;
  double bytes = 0;
  bytes += 2.0 * sbh * ab * rep;              /* the two norms' inputs */
  bytes += sbh * ab * rep;                    /* QKV GEMM input (norm output) */
  bytes += sb * (h + 2.0 * kv * hd) / t * ab; /* Q, K, V */
  bytes += sbh / t * ab;                      /* context: projection input (flash: O) */
  /* rotary: the rotated Q and K are new tensors the attention keeps, while
   * V (a view) keeps the QKV GEMM's output alive */
  if (m->position == COST_POS_ROTARY) bytes += sb * (h + kv * hd) / t * ab;
  if (m->attention == COST_ATTN_FLASH) {
    bytes += sb * a / t * 4.0; /* log-sum-exp, fp32 */
  } else if (ckpt != COST_CKPT_SELECTIVE) {
    double sc = sb * s * a / t;                      /* b (a/t) s^2 scores */
    bytes += sc * ab + (drop ? sc * (1.0 + ab) : 0); /* softmax out; dropout mask, out */
  }
  if (drop) bytes += 2.0 * sbh * rep; /* hidden dropouts' masks */
  bytes += sbh * ab * rep;            /* FFN input (norm output) */
  double ntok = m->moe_experts > 1 ? (double)(m->moe_top_k > 0 ? m->moe_top_k : 1) : 1.0;
  /* gelu: its input and output; swiglu: gate, up, silu(gate), the product */
  bytes += (m->mlp == COST_MLP_SWIGLU ? 4.0 : 2.0) * ntok * sb * f / t * ab;
  return bytes;
}

/* Seconds to send `bytes` to a neighbour: an allgather of 2 n bytes over
 * 2 ranks costs alpha + n / B, inside the scale-up domain or across it. */
static double send_s(step_acc *a, double bytes, int in_node, int64_t gpn) {
  cost_collective_op c = {.kind = COST_COLL_ALLGATHER,
                          .ranks = 2,
                          .scope = in_node ? COST_SCOPE_NODE : COST_SCOPE_CLUSTER,
                          .gpus_per_node = in_node ? (gpn > 2 ? gpn : 2) : 1,
                          .bytes = 2.0 * bytes};
  cost_result cr;
  return cost_collective_p(a->hw, a->p, &c, &cr) == 0 ? cr.ms * 1e-3 : 0;
}

/* Context parallelism (header): the attention of the whole sequence split
 * over c ranks, and the ring's exposed K, V traffic, per layer. L was
 * priced for s / c tokens (ml). */
static void cp_attention(step_acc *a, const cost_transformer *ml, const cost_recipe *r, int64_t b,
                         int64_t c, layer_t *L) {
  int64_t t = r->tp > 0 ? r->tp : 1, hd = ml->hidden / ml->heads;
  int64_t kv = ml->kv_heads > 0 ? ml->kv_heads : ml->heads, kvt = kv / t > 0 ? kv / t : 1;
  int64_t gpn = r->gpus_per_node > 0 ? r->gpus_per_node
                                     : (a->hw->scaleup_domain > 0 ? a->hw->scaleup_domain : 8);
  int dt = r->precision;
  double ab = cost_dtype_bytes((cost_dtype)(dt == COST_DT_FP8 ? COST_DT_BF16 : dt));
  L->attn_f *= (double)c;
  L->attn_b *= (double)c;
  double chunk = 2.0 * (double)b * (double)ml->seq_len * (double)(kvt * hd) * ab; /* K and V */
  double ring = (double)(c - 1) * send_s(a, chunk, t * c <= gpn, gpn);
  L->comm_f += fmax(0.0, ring - L->attn_f);
  L->comm_b += fmax(0.0, 2.0 * ring - L->attn_b);
}

int step_transformer(step_acc *a, const cost_transformer *m, const cost_recipe *r) {
  cost_step_result *res = a->r;
  int64_t t = r->tp > 0 ? r->tp : 1, p = r->pp > 0 ? r->pp : 1, b = r->batch_per_gpu;
  int64_t c = r->cp > 1 ? r->cp : 1, v = r->vp > 1 && p > 1 ? r->vp : 1;
  if (m->layers < 1 || m->hidden < 1 || m->heads < 1 || m->seq_len < 1 || m->vocab < 1 ||
      m->hidden % m->heads)
    return COST_EINVAL;
  if (r->gpus % (t * p * c) || m->heads % t || (m->kv_heads > 0 && m->heads % m->kv_heads) ||
      m->seq_len % c)
    return COST_ESTEP_SHAPE;
  int64_t d = r->gpus / (t * p * c);
  int64_t gb = r->global_batch > 0 ? r->global_batch : b * d;
  if (gb % (b * d)) return COST_ESTEP_SHAPE;
  int64_t mb = gb / (b * d), Lp = (m->layers + p - 1) / p;
  /* this rank's share of each sequence (context parallelism) */
  cost_transformer mloc = *m;
  mloc.seq_len = m->seq_len / c;
  int dt = r->precision;
  int64_t h = m->hidden, s = mloc.seq_len, V = m->vocab, f = cost_transformer_ffn(m);
  int64_t kv = m->kv_heads > 0 ? m->kv_heads : m->heads, hd = h / m->heads;
  double ab = cost_dtype_bytes((cost_dtype)(dt == COST_DT_FP8 ? COST_DT_BF16 : dt));
  layer_t L;
  layer_time(a, &mloc, r, b, &L);
  if (a->err) return a->err;
  if (c > 1) cp_attention(a, &mloc, r, b, c, &L);

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
  double der = load_derate(a->hw);
  step_tag(a, "lm head");
  double logit_f = der * step_gemm_as(a, "fwd", b * s, V / t, h, 1, dt, "nt");
  double logit_d = step_gemm_as(a, "dgrad", b * s, h, V / t, 1, dt, "nn");
  double logit_b = der * (logit_d + step_gemm_as(a, "wgrad", V / t, h, b * s, 1, dt, "tn"));
  /* cross-entropy over the fp32 logits: the fused loss ~4 fp32 passes each
   * way. Eager: the cast to fp32 (ab + 4 bytes per logit), log-softmax,
   * whose rows (V fp32 values) outgrow shared memory so that
   * cunn_SoftMaxForward reads each row three times (max, sum of
   * exponentials, output) and writes it once (16 B; aten/src/ATen/native/
   * cuda/SoftMax.cu), the nll; backward the nll's zero-filled fp32 gradient
   * (4 B), cunn_SoftMaxBackward (the gradient twice, the output once, a
   * write: 16 B) and the cast back (4 + ab). Profiled on the fitting half
   * (steps_profile_fit.json) the two log-softmax kernels move 16 B per
   * logit at 4.1 and 3.8 TB/s. */
  double nlog = (double)b * s * (double)(V / t), ce_eff = a->prof[COST_SP_COPY_EFF];
  double ce_f = ew_s(a, (m->loss == COST_LOSS_FUSED ? 16.0 : ab + 4.0 + 16.0) * nlog, ce_eff);
  double ce_b = ew_s(a, (m->loss == COST_LOSS_FUSED ? 16.0 : 4.0 + 16.0 + 4.0 + ab) * nlog, ce_eff);
  double stage_f = (double)Lp * (L.gemm_f + L.attn_f + L.ew_f + L.comm_f) + logit_f + ce_f;
  double stage_b = (double)Lp * (L.gemm_b + L.attn_b + L.ew_b + L.comm_b + rec) + logit_b + ce_b;
  double p2p = 0;
  /* adjacent stages: assumed on two nodes; forward activations and
   * backward gradients, once per chunk (vp) */
  if (p > 1) p2p = 2.0 * (double)v * send_s(a, (double)b * s * h * ab / (double)t, 0, 1);
  double p2p_exposed = v > 1 ? 0 : p2p;
  double per_mb = stage_f + stage_b + p2p_exposed;
  res->pipeline_bubble = (double)(p - 1) / ((double)v * (double)mb);

  /* class accounting (whole step on this GPU) */
  double nm = (double)mb, bub = (double)(p - 1) * per_mb / (double)v;
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
  double ew = (double)Lp * (L.ew_f + L.ew_b + (r->checkpointing == COST_CKPT_FULL ? L.ew_f : 0)) +
              ce_f + ce_b;
  step_add(a, COST_KC_ELEMENTWISE, COST_COMP_OTHER, PH_FB, nm * ew,
           (int64_t)(nm * (Lp * (L.kernels_f + L.kernels_b + rec_k))),
           (int64_t)(nm * (Lp * (L.kernels_f + L.kernels_b + rec_k))));
  double tpc =
      (double)Lp * (L.comm_f + L.comm_b + (r->checkpointing == COST_CKPT_FULL ? L.comm_f : 0));
  step_comm(a, r->sequence_parallel ? COST_KC_ALLGATHER_RS : COST_KC_ALLREDUCE, nm * tpc, nm * tpc,
            (int64_t)(nm * Lp * (r->checkpointing == COST_CKPT_FULL ? 6 : 4)));
  step_comm(a, COST_KC_P2P, nm * p2p, nm * p2p_exposed, p > 1 ? 2 * v * mb : 0);
  if (p > 1) {
    a->r->class_ms[COST_KC_BUBBLE] += bub * 1e3;
    a->r->comp_ms[COST_COMP_OTHER] += bub * 1e3;
    a->gpu[PH_FB] += bub;
  }

  /* parameters on this GPU and the optimizer */
  double per_layer = (double)h * (double)(h + 2 * kv * hd) + (double)h * h +
                     (m->moe_experts > 1 ? (double)m->moe_experts : 1.0) *
                         (m->mlp == COST_MLP_SWIGLU ? 3.0 : 2.0) * (double)h * f +
                     4.0 * h;
  double params = (double)Lp * per_layer / (double)t + (double)V * h / (double)t;
  /* mixed-precision Adam (Megatron): bf16 weights, fp32 main grads, fp32
   * master weights + m + v; the update streams ~30 bytes per parameter */
  /* Megatron's distributed optimizer (the performance recipes') updates
   * only this rank's 1 / (d c) share */
  int fsdp = r->dense_parallel == COST_DP_FSDP && d * c > 1;
  double oshare = r->framework == COST_FW_MEGATRON || fsdp ? 1.0 / (double)(d * c) : 1.0;
  step_add(a, COST_KC_DENSE_OPT, COST_COMP_OPTIMIZER, PH_OPT,
           ew_s(a, params * 30.0 * oshare, a->prof[COST_SP_COPY_EFF]), 4, 4);
  /* Eager mixed precision (torch.autocast over fp32 master weights, the
   * runner's and plain PyTorch's way): every forward casts each weight to
   * 16 bits (4 + ab bytes per parameter; autocast's cast cache lives only
   * for one autocast region, so a full recompute casts the layers' weights
   * again), and the backward casts each 16-bit weight gradient to fp32 (ab
   * + 4) and adds it to the kept fp32 .grad (AccumulateGrad: two reads and a
   * write of 4 bytes). Three kernels per parameter tensor. Megatron keeps
   * 16-bit weights and accumulates into fp32 main grads inside the
   * weight-gradient GEMM (gradient_accumulation_fusion): none of this. */
  if (r->framework == COST_FW_PYTORCH_EAGER && dt != COST_DT_FP32) {
    double lparams = (double)Lp * per_layer / (double)t;
    double cast = 4.0 + ab, by = params * (cast + cast + 12.0);
    if (r->checkpointing == COST_CKPT_FULL) by += lparams * cast;
    int64_t ntens =
        Lp * ((m->mlp == COST_MLP_SWIGLU ? 5 : 4) + (m->norm == COST_NORM_LAYERNORM ? 4 : 2)) + 3;
    step_add(a, COST_KC_ELEMENTWISE, COST_COMP_OTHER, PH_FB,
             (double)ntens * 3.0 * a->launch_s + by / (a->hw->hbm_bw * a->prof[COST_SP_COPY_EFF]),
             3 * ntens, 3 * ntens);
  }
  /* The weight gradients are reduced over the d x c ranks that hold the
   * same weights. Megatron orders ranks tp, cp, dp, pp (Megatron-Core
   * parallel_state.initialize_model_parallel), so such a group has
   * gpn / t members in each scale-up domain, not gpn. */
  int64_t dg = d * c, gpn = r->gpus_per_node > 0
                                ? r->gpus_per_node
                                : (a->hw->scaleup_domain > 0 ? a->hw->scaleup_domain : 8);
  int64_t gdp = gpn / t > 1 ? gpn / t : 1;
  /* FSDP: per-micro-batch gathers and reduce-scatters (step_fsdp.c) */
  step_fsdp_in fs = {.layer_params = per_layer / (double)t,
                     .root_params = (double)V * h / (double)t,
                     .layers = Lp,
                     .micro_batches = mb,
                     .dg = dg,
                     .gdp = gdp,
                     .fwd_s = L.gemm_f + L.attn_f + L.ew_f + L.comm_f,
                     .bwd_s = L.gemm_b + L.attn_b + L.ew_b + L.comm_b + rec,
                     .head_b_s = logit_b + ce_b,
                     .framework = r->framework,
                     .precision = dt};
  if (fsdp) {
    step_fsdp(a, &fs);
  } else if (dg > 1 && r->framework == COST_FW_MEGATRON) {
    /* Megatron-Bridge / NeMo performance recipes (scripts/performance):
     * use_distributed_optimizer, overlap_grad_reduce, overlap_param_gather
     * and grad_reduce_in_fp32 = False. A reduce-scatter of the 16-bit
     * gradients runs in buckets (40M parameters, Megatron's default)
     * during the last micro-batch's backward, the only one after which
     * the gradients are final; the all-gather of the updated 16-bit
     * weights runs during the next step's first forward. Exposed: what
     * outlasts that window, at least one bucket. */
    double by = params * 2.0, lastb = fmin(1.0, 80e6 / by);
    double rs = step_coll(a, COST_COLL_REDUCESCATTER, by, dg, gdp);
    double ag = step_coll(a, COST_COLL_ALLGATHER, by, dg, gdp);
    step_comm(a, COST_KC_ALLGATHER_RS, rs + ag,
              fmax(rs * lastb, rs - stage_b) + fmax(ag * lastb, ag - stage_f),
              2 * (int64_t)ceil(by / 80e6));
  } else if (dg > 1) {
    double ar = step_coll(a, COST_COLL_ALLREDUCE, params * 4.0, dg, gdp);
    double last = ar * fmin(1.0, 40e6 / (params * 4.0));
    step_comm(a, COST_KC_ALLREDUCE, ar, fmax(last, ar - stage_b * nm * 0.5),
              (int64_t)ceil(params * 4 / 40e6));
  }

  /* memory (first stage: min(p, m) micro-batches of activations in flight) */
  double per, sbh = (double)s * b * h;
  double tt = (double)t;
  int sp = r->sequence_parallel && t > 1;
  if (r->checkpointing == COST_CKPT_FULL)
    per = sbh * ab / (sp ? tt : 1.0); /* each layer's input (2 sbh bytes at 16 bits) */
  else
    per = act_layer(&mloc, r, b, ab, r->checkpointing);
  double inflight = (double)(mb < p ? mb : p);
  /* logits [b s V/t]: eager cross-entropy (log_softmax of an fp32 copy)
   * peaks in its backward, where the fp32 log-softmax, the fp32 gradient
   * nll_loss hands it and the fp32 gradient it makes are alive when the
   * cast back makes the 16-bit gradient: 12 + ab bytes per logit. A
   * least-squares fit of the peaks of the fitting half of data/
   * measurements/h200-transformer (flash, no recompute: per logit, per
   * sbh, per K/V element, per FFN element, per parameter) gives 14.05 B per
   * logit at ab = 2 and 12.99 / 4.02 / 3.87 / 18.12 for the others, the
   * counts of act_layer (12 + LSE, 4, 4, 18) within 8%. A fused loss
   * (Megatron's vocab-parallel cross-entropy) keeps 4 ab, Korthikanti et
   * al.'s count. */
  double lg = (double)b * s * (double)(V / t);
  double logits = m->loss == COST_LOSS_FUSED ? 4.0 * lg * ab : lg * (12.0 + ab);
  /* FSDP: every persistent term 1 / (d c), plus the gathered units */
  double wshare = fsdp ? oshare : 1.0, gbuf = 0;
  double wbuf = fsdp ? step_fsdp_buffers(&fs, &gbuf) : 0;
  res->mem_bytes[COST_MEM_WEIGHTS] = params * ab * wshare + wbuf;
  res->mem_bytes[COST_MEM_GRADIENTS] = params * 4.0 * wshare + gbuf;
  res->mem_bytes[COST_MEM_OPTIMIZER_STATE] = params * 12.0 * oshare;
  /* with full recompute the loss's peak (before any layer's backward) and a
   * recomputed layer's activations (during its backward, the logits freed)
   * are not alive together: the larger of the two */
  double lp = p == 1 ? logits : 0;
  double extra = r->checkpointing == COST_CKPT_FULL
                     ? fmax(lp, act_layer(&mloc, r, b, ab, COST_CKPT_NONE))
                     : lp;
  res->mem_bytes[COST_MEM_ACTIVATIONS] = per * (double)Lp * inflight + extra;
  res->mem_bytes[COST_MEM_WORKSPACE] = a->prof[COST_SP_WORKSPACE_MB] * 1048576.0;

  /* eager full recompute: the host's time through the step grows by the
   * profile's ckpt_host_mult (step_fit.c) */
  if (r->checkpointing == COST_CKPT_FULL && r->framework == COST_FW_PYTORCH_EAGER)
    step_host(a, PH_FB, (a->prof[COST_SP_CKPT_HOST] - 1.0) * a->host[PH_FB]);

  /* model FLOPs per GPU per step (no recompute): Narayanan et al. eq. 3 */
  double L_all = (double)m->layers;
  double sf = (double)m->seq_len;
  double fl = 72.0 * (double)gb * sf * L_all * (double)h * h *
              (1.0 + sf / (6.0 * h) + (double)V / (16.0 * L_all * h));
  res->model_flops = fl / (double)r->gpus;
  res->tokens_per_s = 0;
  return 0;
}
