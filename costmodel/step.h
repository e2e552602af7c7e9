/* costmodel/step: the time and peak memory of one training step of a
 * whole model -- a DLRM-style recommendation model or a GPT-style
 * transformer -- under a recipe (GPUs, batch, precision, sharding,
 * checkpointing, framework), priced kernel by kernel with the op models of
 * costmodel.h. Pure like the rest of costmodel/: no I/O, no globals; the
 * only allocation is O(tables) scratch inside cost_step (sharding).
 *
 * Framework profile: the per-kernel host overheads of plain PyTorch eager
 * vs fused TorchRec/FBGEMM kernels, and the few costs the op models do not
 * cover (the sparse optimizer's coalesce, the sort behind the interaction's
 * backward). Its parameters are read from hw->calib by name (the "step_"
 * entries, fitted by cost_step_fit from whole-step measurements) with
 * documented defaults otherwise.
 *
 * Formulas and sources: docs/step-model.md.
 */
#ifndef CDPLAN_COSTMODEL_STEP_H
#define CDPLAN_COSTMODEL_STEP_H

#include <stddef.h>
#include <stdint.h>

#include "costmodel/costmodel.h"

#define COST_STEP_MAX_LAYERS 64

typedef enum { COST_WL_DLRM = 0, COST_WL_TRANSFORMER, COST_WL__COUNT } cost_wl_kind;

typedef enum {
  COST_OPT_SGD = 0,
  COST_OPT_ADAM,
  COST_OPT_ADAGRAD,
  COST_OPT_ROWWISE_ADAGRAD,
  COST_OPT__COUNT
} cost_optimizer;

typedef enum {
  COST_SHARD_DATA_PARALLEL = 0,
  COST_SHARD_TABLE_WISE,
  COST_SHARD_ROW_WISE,
  COST_SHARD_COLUMN_WISE,
  COST_SHARD_TABLE_ROW_WISE, /* one node's GPUs split the rows (TorchRec TWRW, HugeCTR hier) */
  COST_SHARD__COUNT
} cost_sharding;

/* hbm: rows in GPU memory; host: rows in CPU memory, looked up and updated
 * by the CPU (plain PyTorch); uvm: rows in pinned host memory that GPU
 * kernels read and update in place over the host link (FBGEMM's fused UVM
 * placement; the runner's validate/gpu/uvm_bag.py). */
typedef enum {
  COST_PLACE_HBM = 0,
  COST_PLACE_HOST,
  COST_PLACE_UVM,
  COST_PLACE__COUNT
} cost_placement;
typedef enum {
  COST_CKPT_NONE = 0,
  COST_CKPT_SELECTIVE,
  COST_CKPT_FULL,
  COST_CKPT__COUNT
} cost_ckpt;
/* hugectr: NVIDIA Merlin HugeCTR as the MLPerf DLRM-DCNv2 submissions run
 * it (train.py: use_cuda_graph, grouped_all_reduce, mixed precision,
 * hierarchical embedding exchange); docs/step-model.md, "HugeCTR".
 * pytorch_eager: plain PyTorch modules (transformers: torch.autocast over fp32
 * master weights); torchrec_fbgemm: TorchRec with FBGEMM's fused kernels
 * (DLRM); megatron: Megatron-LM's transformer (16-bit weights, fp32 main
 * grads accumulated inside the weight-gradient GEMM); fused_triton: the
 * runner's own fused embedding kernels (validate/gpu/fused_tbe.py, DLRM). */
typedef enum {
  COST_FW_PYTORCH_EAGER = 0,
  COST_FW_TORCHREC_FBGEMM,
  COST_FW_HUGECTR,
  COST_FW_MEGATRON,
  COST_FW_FUSED_TRITON,
  COST_FW__COUNT
} cost_framework;
typedef enum { COST_DP_DDP = 0, COST_DP_FSDP, COST_DP__COUNT } cost_dense_parallel;
/* dot (DLRM), dcn (cross layers over x0 = [x, embeddings]) or concat (x0
 * itself into the top MLP: projection-style arches, any table dims) */
typedef enum {
  COST_INTER_DOT = 0,
  COST_INTER_DCN,
  COST_INTER_CONCAT,
  COST_INTER__COUNT
} cost_interaction;

/* Wire names ("rowwise_adagrad", "table_wise", "host", "selective",
 * "torchrec_fbgemm", "fsdp", "dcn"); parse returns -1 when unknown. */
int cost_optimizer_parse(const char *s);
const char *cost_optimizer_name(int v);
int cost_sharding_parse(const char *s);
const char *cost_sharding_name(int v);
int cost_placement_parse(const char *s);
const char *cost_placement_name(int v);
int cost_ckpt_parse(const char *s);
const char *cost_ckpt_name(int v);
int cost_framework_parse(const char *s);
const char *cost_framework_name(int v);
int cost_dense_parallel_parse(const char *s);
const char *cost_dense_parallel_name(int v);
int cost_interaction_parse(const char *s);
const char *cost_interaction_name(int v);
int cost_attention_parse(const char *s);
const char *cost_attention_name(int v);
int cost_mlp_parse(const char *s);
const char *cost_mlp_name(int v);
int cost_norm_parse(const char *s);
const char *cost_norm_name(int v);
int cost_position_parse(const char *s);
const char *cost_position_name(int v);
int cost_loss_parse(const char *s);
const char *cost_loss_name(int v);

/* One embedding table (count identical copies). sharding / placement -1 =
 * the recipe's default. */
typedef struct {
  char name[48];
  int64_t rows, dim, pooling, count;
  int sharding;  /* cost_sharding or -1 */
  int placement; /* cost_placement or -1 */
  /* row_wise: the GPUs its rows are split over (HugeCTR's row splits,
   * e.g. 4 of 8); table_row_wise: the nodes; 0 = all GPUs / one node */
  int64_t row_shards;
} cost_table;

/* A dense block cdplan does not model op by op (DHEN-style layers,
 * projections, attention over a sample's features), between the
 * interaction and the top MLP: a list of GEMMs, each a linear layer of in
 * -> out over rows x batch rows, count times; or only its parameters and
 * forward FLOPs per sample, priced as one square layer with those figures
 * (docs/step-model.md, "Dense blocks"). out: the width it hands the top
 * MLP; 0 = no block. */
#define COST_STEP_MAX_BLOCK_GEMMS 64
typedef struct {
  int64_t in, out, count, rows;
} cost_block_gemm;
typedef struct {
  int64_t out;
  size_t n_gemms;
  cost_block_gemm gemms[COST_STEP_MAX_BLOCK_GEMMS];
  double params, flops_per_sample; /* the opaque form (n_gemms 0) */
} cost_dense_block;

/* The square layer that prices an opaque block: width w = sqrt of the
 * parameters active per sample (min(params, flops / 2)) rounded to a
 * multiple of 64, rows = forward FLOPs / (2 w^2) per sample (at least 1). */
void cost_dense_block_square(const cost_dense_block *b, int64_t *w, int64_t *rows);
/* Its parameters, forward FLOPs per sample and linear layers (the opaque
 * form: its own figures, one layer). */
void cost_dense_block_size(const cost_dense_block *b, double *params, double *flops,
                           double *layers);

typedef struct {
  int64_t dense_features;
  size_t n_tables;
  const cost_table *tables; /* borrowed: the caller owns the array */
  int n_bottom, n_top;
  int64_t bottom[COST_STEP_MAX_LAYERS]; /* output widths, dense_features -> ... */
  int64_t top[COST_STEP_MAX_LAYERS];    /* output widths, interaction -> ... -> 1 */
  int interaction;                      /* cost_interaction */
  int64_t cross_layers;                 /* dcn: cross layers (0 for dot) */
  int64_t cross_rank; /* dcn: rank r of low-rank cross layers (W = U V^T, U, V d x r); 0 = full */
  int64_t pad_interaction_to;            /* 0 = no padding */
  int dense_optimizer, sparse_optimizer; /* cost_optimizer */
  cost_dense_block block;                /* block.out 0 = none */
} cost_dlrm;

/* Transformer kernels (docs/step-model.md, "Transformers"). */
typedef enum {
  COST_ATTN_FLASH = 0,     /* SDPA / FlashAttention */
  COST_ATTN_UNFUSED,       /* scores materialised, scale, mask and softmax as eager PyTorch ops */
  COST_ATTN_FUSED_SOFTMAX, /* scores materialised, Megatron's fused scale-mask-softmax kernel */
  COST_ATTN__COUNT
} cost_attention;
typedef enum { COST_MLP_GELU = 0, COST_MLP_SWIGLU, COST_MLP__COUNT } cost_mlp;
typedef enum { COST_NORM_LAYERNORM = 0, COST_NORM_RMSNORM, COST_NORM__COUNT } cost_norm;
/* position encoding: a learned table added to the input (GPT-2) or rotary
 * embeddings applied to Q and K in every layer (Su et al., RoFormer,
 * arXiv:2104.09864; Llama) */
typedef enum { COST_POS_LEARNED = 0, COST_POS_ROTARY, COST_POS__COUNT } cost_position;
typedef enum { COST_LOSS_EAGER = 0, COST_LOSS_FUSED, COST_LOSS__COUNT } cost_loss;

typedef struct {
  int64_t layers, hidden, heads, kv_heads, ffn, seq_len, vocab;
  int64_t moe_experts, moe_top_k; /* 0 = dense FFN */
  int attention;  /* cost_attention: flash (SDPA/FlashAttention, default) or unfused */
  int mlp;        /* cost_mlp: gelu (default) or swiglu (gated: three GEMMs) */
  int norm;       /* cost_norm: layernorm (default) or rmsnorm */
  int position;   /* cost_position: learned (default) or rotary */
  int loss;       /* cost_loss: eager cross-entropy on fp32 logits (default) or fused */
  double dropout; /* dropout probability of the attention and hidden dropouts (default 0) */
} cost_transformer;

/* The FFN width: t->ffn, else 4 h (gelu) or 8h/3 rounded up to 256 (swiglu,
 * as Llama: Touvron et al. 2023, "LLaMA", sec. 2.2; Meta's reference code
 * rounds to multiple_of = 256). */
int64_t cost_transformer_ffn(const cost_transformer *t);

typedef struct {
  int kind; /* cost_wl_kind */
  cost_dlrm dlrm;
  cost_transformer tf;
} cost_workload;

typedef struct {
  int64_t gpus;            /* total GPUs */
  int64_t batch_per_gpu;   /* DLRM: samples per GPU; transformer: micro-batch (sequences) */
  int64_t tp, pp;          /* transformer: tensor / pipeline parallel sizes (1 = none) */
  int64_t global_batch;    /* transformer: sequences per step (0 = batch_per_gpu * dp) */
  int64_t gpus_per_node;   /* 0 = hw->scaleup_domain */
  int precision;           /* cost_dtype of dense compute (fp32, bf16, fp16, fp8) */
  int embedding_precision; /* cost_dtype of embedding tables */
  int framework;           /* cost_framework */
  int sharding;            /* default cost_sharding of tables */
  int placement;           /* default cost_placement of tables */
  int checkpointing;       /* cost_ckpt */
  int dense_parallel;      /* cost_dense_parallel */
  int64_t pad_to;          /* round MLP widths and embedding dims up to a multiple (0/1 = off) */
  int sequence_parallel;   /* transformer: Megatron sequence parallelism (0/1) */
  int64_t vp;              /* transformer: interleaved pipeline chunks per GPU (0/1 = none) */
  int64_t cp;              /* transformer: context-parallel size (0/1 = none) */
  /* Host speed of the machine that runs the step (docs/step-model.md, "Host
   * speed per machine"): a measured host time per eager op in us (the
   * runner's host probe, validate/gpu/host_probe.py), used in place of the
   * profile's per-op time (step_eager_op_us; step_fused_op_us for
   * torchrec_fbgemm), and scaling its other host terms (step_coalesce_sync_us,
   * step_host_fixed_us) by the same ratio; 0 = the profile's. */
  double host_op_us;
  /* fused_triton: measured host time of one Triton kernel launch, us
   * (host_probe.py); 0 = the per-op time. */
  double triton_launch_us;
  /* The host measured as the case's own model stepped at a small batch
   * (the runner's host_mini_batch, validate/gpu/dlrm_step.py _host_mini):
   * that batch and its measured step time (ms); 0 = none.
   * cost_step_host_mini turns them into host_op_us; the step itself reads
   * only whether there is one (host_op_source mini_step). */
  int64_t host_mini_batch;
  double host_mini_step_ms;
} cost_recipe;

/* Defaults: 1 GPU, fp32, pytorch_eager, data_parallel tables in HBM, no
 * checkpointing, DDP, tp = pp = 1. */
void cost_recipe_init(cost_recipe *r);

/* ---- Results ------------------------------------------------------------ */

typedef enum {
  COST_COMP_GEMM = 0,      /* MLP / transformer GEMMs, interaction bmm, attention */
  COST_COMP_EMBEDDING,     /* embedding lookups and their backward */
  COST_COMP_COMMUNICATION, /* exposed (not overlapped) collectives, pipeline p2p */
  COST_COMP_OPTIMIZER,     /* dense and sparse optimizer updates */
  COST_COMP_OTHER,         /* elementwise, casts, loss, interaction gather, pipeline bubble */
  COST_COMP_OVERHEAD,      /* host-bound time: the GPU idles while the framework dispatches */
  COST_COMP__COUNT
} cost_component;
const char *cost_component_name(int c);

typedef enum {
  COST_MEM_WEIGHTS = 0,
  COST_MEM_GRADIENTS, /* dense gradients and sparse-gradient buffers */
  COST_MEM_OPTIMIZER_STATE,
  COST_MEM_ACTIVATIONS, /* saved for backward (and data inputs) at the peak */
  COST_MEM_EMBEDDINGS,  /* embedding tables (+ their optimizer state) */
  COST_MEM_WORKSPACE,   /* cuBLAS workspace, allocator reserve, transient buffers */
  COST_MEM__COUNT
} cost_mem_use;
const char *cost_mem_use_name(int u);

typedef enum {
  COST_KC_GEMM_FWD = 0,
  COST_KC_GEMM_BWD,
  COST_KC_ATTENTION,
  COST_KC_INTERACTION,
  COST_KC_ELEMENTWISE,
  COST_KC_EMB_FWD,
  COST_KC_EMB_BWD,
  COST_KC_SPARSE_OPT,
  COST_KC_DENSE_OPT,
  COST_KC_ALLTOALL,
  COST_KC_ALLREDUCE,
  COST_KC_ALLGATHER_RS, /* FSDP gathers / reduce-scatters, sequence-parallel */
  COST_KC_P2P,
  COST_KC_BUBBLE,
  COST_KC_HOST,
  COST_KC__COUNT
} cost_kclass;
const char *cost_kclass_name(int k);

typedef struct {
  double step_ms;
  double samples_per_s;     /* DLRM: global samples/s; transformer: sequences/s */
  double tokens_per_s;      /* transformer only */
  double peak_memory_bytes; /* per GPU (the most loaded one) */
  double hbm_usable_bytes;
  int fits;               /* peak <= usable HBM */
  double gpu_ms;          /* busy time of the GPU's streams */
  double host_ms;         /* framework dispatch time on the host */
  double model_flops;     /* per GPU per step, without recompute */
  double mfu;             /* model FLOP/s over the dense peak of the precision */
  double pipeline_bubble; /* transformer: (p-1)/m */
  int64_t kernels;        /* kernel launches per step per GPU */
  int peak_phase;         /* 0 = end of forward, 1 = backward */
  double comp_ms[COST_COMP__COUNT];
  double mem_bytes[COST_MEM__COUNT];
  double class_ms[COST_KC__COUNT]; /* GPU time per kernel class (comm: full, not just exposed) */
  int64_t class_kernels[COST_KC__COUNT];
  double host_op_us;  /* the per-op host time the step used (us; 0: no eager dispatch) */
  int host_op_source; /* cost_host_op_source: where host_op_us came from */
  int host_op_probe;  /* 1: host_op_us is the calibration's measured step_host_op_us (a host
                         probe stored by cdplan calibrate --host-probe), not a fitted per-op time */
} cost_step_result;

/* The per-op host time of a machine from its host probe's step kernel
 * (validate/gpu/host_probe.py, step_kernel_us): host_op_us = K x
 * step_kernel_us, K fitted on two H100 hosts' eager DCN rows
 * (data/measurements/h200-dcn-host/k_host.json, fit_host.py; blind on
 * ../h100-dcn-mlperf's fifth set: 3.3 % median, 13.2 % max). */
#define COST_HOST_PROBE_K 0.344

/* The per-op host times the lent machines showed (2026-12-05/06): their
 * probes, K x step_kernel_us 14.3-31.8 us = 4.92-10.94 us (11 probes on 7
 * lent H100 hosts: data/measurements/h200-dcn-host/dcn_*.json,
 * ../h100-dcn-mlperf/blind4.json, blind5.json, profile5.json); where no
 * probe ran, the per-op time at which this model (the serial optimizer
 * phase of 2026-12-06) meets each host-bound measured step: 10.46-13.41 us
 * on the H200 lent host (../h200-dcn-mlperf/dcn.json, 5 steps), 4.52-8.82
 * us on the H100 blind sets 2, 4, 5 (7 steps) -- data/measurements/
 * h100-dcn-mlperf/host_implied.py, host_implied.txt (10.08-12.62 and
 * 4.58-9.42 us with the overlapping phase before); and the mini route's
 * per-case figures on three lent H100 hosts, 5.28-12.55 us
 * (../dcn-blind7: blind7, its rerun, blind8). The range a step priced at a
 * host figure that is not the machine's own may land in (api/step.c
 * host_sensitivity). */
#define COST_HOST_PROBED_OP_US_LO 4.52
#define COST_HOST_PROBED_OP_US_HI 13.41

/* Where a step's per-op host time came from: the recipe's measured
 * host_op_us, the hardware's calibration (step_eager_op_us fitted, or the
 * machine's measured step_host_op_us: host_op_probe), or the profile's
 * default. */
typedef enum {
  COST_HOSTOP_DEFAULT = 0,
  COST_HOSTOP_CALIBRATION,
  COST_HOSTOP_RECIPE,
  COST_HOSTOP_MINI /* fitted to the recipe's host mini step (cost_step_host_mini) */
} cost_host_op_source;
const char *cost_host_op_source_name(int s);

/* Errors beyond the COST_E* of costmodel.h. */
#define COST_ESTEP_SHAPE (-10)    /* inconsistent shapes (dims vs bottom MLP, padding < width) */
#define COST_ESTEP_OVERFLOW (-11) /* a byte count past 2^62 */

/* Predict one step. Returns 0, or a negative COST_E* / COST_ESTEP_* code
 * (out zeroed). O(tables * log tables + layers). */
/* The per-op host time at which the step of w under r, at batch
 * r->host_mini_batch, takes r->host_mini_step_ms: the case's own host
 * measured where every kernel is a few microseconds (docs/step-model.md,
 * "The mini route"; data/measurements/dcn-blind7). Bisection on
 * [COST_HOST_MINI_LO_US, COST_HOST_MINI_HI_US]; a mini step outside what
 * that range gives returns the nearer end and *clamped = 1. 0, or
 * COST_EINVAL without a mini step / for a step that dispatches nothing
 * (HugeCTR's graph), or the step's own error. */
#define COST_HOST_MINI_LO_US 0.5
#define COST_HOST_MINI_HI_US 60.0
int cost_step_host_mini(const cost_hw *hw, const cost_workload *w, const cost_recipe *r,
                        double *host_op_us, int *clamped);

int cost_step(const cost_hw *hw, const cost_workload *w, const cost_recipe *r,
              cost_step_result *out);

/* One GEMM the step model priced: its name ("bottom[0] fwd", "qkv wgrad",
 * "interaction bmm"), the op, and the op model's answer for one call (ms
 * before the step applies its repeats -- layers, micro-batches, recompute --
 * and derates). Interaction bmms too small for a GEMM tile are priced by
 * a roofline (step_dlrm.c small_bmm) and listed with that price. */
typedef struct {
  char name[32];
  cost_gemm_op op;
  double ms, flops, bytes;
  int bound; /* cost_bound */
} cost_step_gemm;

/* The distinct GEMMs cost_step prices for w under r, in the order it prices
 * them, into out[0..cap); *n = how many there are (may exceed cap: only
 * cap are written). Returns what cost_step returns. */
int cost_step_gemms(const cost_hw *hw, const cost_workload *w, const cost_recipe *r,
                    cost_step_gemm *out, size_t cap, size_t *n);

/* ---- Framework profile and its fit --------------------------------------- */

typedef enum {
  COST_SP_EAGER_OP_US = 0, /* host time per eager op (Python + dispatcher + launch) */
  COST_SP_SPARSE_UPD_NS,   /* eager sparse optimizer: per looked-up index (coalesce + scatter) */
  COST_SP_INDEX_SORT_NS,   /* eager index_put(accumulate) backward: per element (sort-based) */
  COST_SP_WORKSPACE_MB,    /* allocator-held workspace beyond the model (cuBLAS, sort, caches) */
  COST_SP_FUSED_OP_US,     /* host time per op with fused TorchRec/FBGEMM kernels */
  COST_SP_HOST_GATHER_NS,  /* host-placed tables: one random row access in host DRAM, ns */
  COST_SP_HOST_COPY_GBPS,  /* host-placed tables: pageable host<->GPU copy bandwidth, GB/s */
  COST_SP_HOST_MEM_GBPS,   /* host-placed tables: CPU rate on fresh sparse-grad buffers, GB/s */
  COST_SP_HOST_THREADS,    /* host-placed tables: CPU threads of the host ops (not fitted) */
  COST_SP_HOST_LLC_MB,     /* host-placed tables: CPU last-level cache, MB (not fitted) */
  COST_SP_STEP_HOST_US,    /* host time per step outside op dispatch (loop, autograd, optimizers) */
  COST_SP_OVERLAP_P,       /* host/GPU overlap: p of the soft maximum of host and GPU time */
  COST_SP_UVM_READ_EFF,    /* uvm tables: share of the host link's bandwidth random row reads get */
  COST_SP_UVM_UPDATE_EFF,  /* uvm tables: the same for the in-place row update (read + write) */
  COST_SP_UVM_REACH_MB,    /* uvm tables: host memory the link's address translation covers, MB */
  COST_SP_UVM_WALK_NS,     /* uvm tables: one row's translation miss, ns (throughput) */
  COST_SP_UVM_SYNC_US,   /* uvm tables: host time exposed after each table's synchronizing unique */
  COST_SP_FLASH_EFF_F,   /* flash attention forward: achieved / dense tensor peak in its tiles */
  COST_SP_FLASH_EFF_B,   /* flash attention backward: the same */
  COST_SP_FLASH_BLOCK_F, /* forward: cost per query block outside its tiles, in tiles */
  COST_SP_FLASH_BLOCK_B, /* backward: the same */
  COST_SP_FLASH_HD0,     /* head-dim-independent work per tile (softmax, masks), in head dims */
  COST_SP_COPY_EFF,      /* a large eager elementwise kernel: achieved / HBM bandwidth */
  COST_SP_BCAST_EFF,     /* the same through the non-vectorized (broadcasting) path */
  COST_SP_SOFTMAX_1K,    /* eager softmax forward, rows <= 1024: achieved / HBM bandwidth */
  COST_SP_SOFTMAX_2K,    /* the same, rows of 1025..2048 */
  COST_SP_CKPT_HOST,     /* eager full recompute: host time per step over the plain dispatch's */
  /* fitted from whole-step validation runs (cost_step_val_fit, api/val_calibrate.c): */
  COST_SP_DLRM_GPU_SCALE, /* DLRM step: GPU time of its kernels in a whole step / the op models' */
  COST_SP_UVM_LINK_SCALE, /* uvm tables: link-bound time in a whole step / the microbenchmark's */
  /* fitted on published throughputs (bench/published_llm, fit rows only): */
  COST_SP_FP8_CAST_B, /* fp8 GEMMs: HBM bytes of scaling + casting per element of each operand */
  /* fitted on the fitting half of the H100 MLPerf-shaped DCN steps
   * (data/measurements/h100-dcn-mlperf/fit_coalesce.py): */
  COST_SP_COALESCE_SYNC_US, /* eager coalescing sparse optimizer: exposed time per table's syncs */
  COST_SP_COALESCE_NS,      /* the same: GPU time per lookup beyond the op model's update */
  /* fitted on the H100 fused-TBE bench's B = 16384 rows (data/measurements/h100-fused-tbe): */
  COST_SP_FUSED_TBE_NS, /* fused_triton: GPU time per lookup of the runner's Triton TBE */
  /* measured on the machine, not fitted (cdplan calibrate --host-probe, api/calibrate_host.c): */
  COST_SP_HOST_OP_US, /* this machine's host time per eager op, us, as a recipe's host_op_us
                         (0: none, the per-op time above) */
  COST_SP__COUNT
} cost_step_param;

/* Name ("step_eager_op_us", ...), default, bounds of a profile parameter. */
int cost_step_param_info(int id, const char **name, double *def, double *lo, double *hi);
/* The value in use: hw->calib's entry of that name, else the default. */
double cost_step_param_value(const cost_hw *hw, int id);

/* One table shard off HBM -- placement COST_PLACE_HOST (plain PyTorch:
 * CPU gather, pageable copies, CPU backward and SGD, serial with the GPU)
 * or COST_PLACE_UVM (GPU kernels on pinned host memory over the host link,
 * a synchronizing backward) -- against the same shard in HBM: *extra_ms =
 * that path - HBM path, for `bags` bags of `pooling` lookups of `dim` from
 * `rows`, under r's embedding precision and d's sparse optimizer. The
 * planner prices eager recipes' host tables with it. Returns 0,
 * COST_EINVAL, or COST_ENOHW (uvm on hardware without a host link figure). */
int cost_step_host_table_ms(const cost_hw *hw, const cost_dlrm *d, const cost_recipe *r,
                            int placement, int64_t rows, int64_t dim, int64_t bags, int64_t pooling,
                            double *extra_ms);

/* One host-mapped (uvm) embedding-bag measurement: the runner's
 * memory_ops uvm_embedding_bag rows (forward; forward + backward with the
 * fused SGD update), ms; 0 = not measured. */
typedef struct {
  int64_t rows, dim, batch, pooling;
  int dtype; /* cost_dtype of the rows */
  double fwd_ms, fwd_bwd_ms;
} cost_uvm_sample;

/* The step model's uvm path for one such op alone (prof: a profile
 * vector, COST_SP__COUNT). COST_ENOHW when hw has no host_link_bw. */
int cost_uvm_bag_p(const cost_hw *hw, const double *prof, const cost_uvm_sample *u, double *fwd_ms,
                   double *fwd_bwd_ms);

typedef struct {
  int n_fwd, n_fwd_bwd;          /* samples the fit used */
  double values[COST_SP__COUNT]; /* the profile after the fit (uvm entries fitted) */
  double median_err_before[2], median_err_after[2]; /* fwd, fwd_bwd */
  double max_err_after[2];
} cost_uvm_fit_report;

/* Fit step_uvm_read_eff, step_uvm_reach_mb and step_uvm_walk_ns
 * (forward rows) and then step_uvm_update_eff (forward + backward rows) by
 * least squares on log time, over the rows of which the link and
 * translation terms make at least half (small ops are bound by the host
 * issuing them). Writes the four into *calib (adds or replaces). Returns 0, COST_EINVAL (no usable
 * row), COST_ENOHW (hw has no host link figure, or calib is full). rep may be NULL. */
int cost_uvm_fit(const cost_hw *hw, const cost_uvm_sample *s, size_t n, cost_calib *calib,
                 cost_uvm_fit_report *rep);

/* One timing of causal flash attention alone (data/measurements/
 * h200-transformer/attention_*.json): fwd_ms forward, bwd_ms backward. */
typedef struct {
  int64_t b, heads, kv_heads, s, hd;
  double fwd_ms, bwd_ms;
} cost_flash_sample;

typedef struct {
  int n;
  double median_err_before, median_err, max_err; /* forward and backward rows together */
  double eff_f, eff_b, block_f, block_b, hd0;
} cost_flash_fit_report;

/* Fit step_flash_eff_fwd/bwd, step_flash_block_fwd/bwd and step_flash_hd0
 * (costmodel/step_transformer.c, flash_time) to bf16 timings by least
 * squares on log time: a grid over the block and head-dim terms, the
 * efficiency in closed form. Writes the five into *calib. Returns 0,
 * COST_EINVAL (fewer than 4 usable rows), COST_ENOHW (calib is full). */
int cost_flash_fit(const cost_hw *hw, const cost_flash_sample *s, size_t n, cost_calib *calib,
                   cost_flash_fit_report *rep);

/* The model's time of one such sample (ms), forward or backward, under hw's
 * calibration; NAN when it cannot be priced. */
double cost_flash_ms(const cost_hw *hw, const cost_flash_sample *s, int bwd);

/* Median and max |predicted/measured - 1| over the forward and backward
 * times of s[0..n) under hw's calibration (NAN when none is priced).
 * 0, or COST_EINVAL when out of memory. */
int cost_flash_error(const cost_hw *hw, const cost_flash_sample *s, size_t n, double *median,
                     double *max);

/* One whole-step measurement. */
typedef struct {
  cost_workload w;
  cost_recipe r;
  double step_ms;
  double peak_bytes;  /* 0 = not measured */
  double gpu_busy_ms; /* GPU busy time per step (profiler: union of kernel intervals); 0 = none */
} cost_step_sample;

/* Does the sample place any table in host memory? */
int cost_step_sample_host(const cost_step_sample *s);

typedef struct {
  int n;
  double median_step_err_before, max_step_err_before;
  double median_step_err, max_step_err; /* in-sample, after the fit */
  double median_mem_err, max_mem_err;
  double median_step_err_loo, max_step_err_loo; /* leave-one-out */
  double median_mem_err_loo, max_mem_err_loo;
  double values[COST_SP__COUNT];
  int fitted[COST_SP__COUNT];
} cost_step_fit_report;

/* Fit the profile parameters the samples inform (eager op time, sparse
 * update and index sort per element from step_ms; workspace from
 * peak_bytes) by bounded least squares on log error, starting from the
 * defaults. Writes (adds or replaces) the step_ entries of *calib, keeping
 * its other entries; hw's own calib is used for the op models. rep may be
 * NULL. Returns 0, COST_EINVAL when no sample is usable, or COST_ENOHW
 * when calib has no room (COST_MAX_CALIB). */
int cost_step_fit(const cost_hw *hw, const cost_step_sample *s, size_t n, cost_calib *calib,
                  cost_step_fit_report *rep);

/* Step-level calibration from whole-step validation runs (plan validations,
 * runner kind dlrm_step): two physical scales on top of everything else
 * fitted on this accelerator, chosen because they are what the H200 runs
 * (data/measurements/h200-plan-validate) showed off:
 *  step_dlrm_gpu_scale g: every DLRM kernel's GPU time in a whole step over
 *    what the op models (fitted to kernels timed alone) give -- sustained
 *    clocks under a long step's power draw, caches cold between kernels,
 *    the caching allocator; the all-HBM side pins it;
 *  step_uvm_link_scale u: the link-bound time of uvm tables (rows read and
 *    written back over the host link) in a whole step over the uvm
 *    microbenchmark's -- the link shared with the step's other traffic;
 *    only rows with uvm tables inform it (on top of g).
 * Least squares on log step time over the samples (coordinate-wise
 * golden-section search on log g, log u; bounds of the profile table).
 * Starts from and keeps hw->calib's other entries: writes (adds or
 * replaces) the fitted entries into *calib, which the caller initialises
 * (normally to hw->calib). A scale that moves no sample's prediction (a
 * host-bound step hides the GPU's time) is not fitted. Returns 0,
 * COST_EINVAL (no sample the model prices, or none that either scale
 * moves), COST_ENOHW (calib is full). */
typedef struct {
  int n;                  /* samples priced */
  int n_uvm;              /* of which with uvm tables */
  int fitted_g, fitted_u; /* which scales the samples informed */
  double g, u;            /* the values written */
  double rms_log_before, rms_log_after;
} cost_step_val_report;
int cost_step_val_fit(const cost_hw *hw, const cost_step_sample *s, size_t n, cost_calib *calib,
                      cost_step_val_report *rep);

/* Evaluate with an explicit profile vector (the fit's inner loop). */
int cost_step_p(const cost_hw *hw, const double *prof, const cost_workload *w, const cost_recipe *r,
                cost_step_result *out);

#endif
