/* costmodel: pure functions from a hardware descriptor and an op to a
 * predicted time, the bound, and the terms behind it. No I/O, no globals,
 * no allocation in the hot paths: the same input gives the same output.
 *
 * Units: bytes, bytes/s, FLOP/s, seconds inside; results carry ms.
 * Formulas and their sources: docs/model.md (each function cites it too).
 */
#ifndef CDPLAN_COSTMODEL_H
#define CDPLAN_COSTMODEL_H

#include <stdint.h>

typedef enum {
  COST_DT_FP64 = 0,
  COST_DT_FP32,
  COST_DT_TF32,
  COST_DT_BF16,
  COST_DT_FP16,
  COST_DT_FP8,
  COST_DT_FP6,
  COST_DT_FP4,
  COST_DT_INT8,
  COST_DT__COUNT
} cost_dtype;

/* "fp32" -> COST_DT_FP32; -1 for an unknown name. */
int cost_dtype_parse(const char *name);
const char *cost_dtype_name(cost_dtype dt);
/* Bytes per element as stored in memory (tf32 is stored as fp32; fp6 and
 * fp4 are fractional: 0.75 and 0.5). */
double cost_dtype_bytes(cost_dtype dt);

#define COST_MAX_MMA 8

/* One matrix-instruction shape (wgmma / MFMA) for a dtype. */
typedef struct {
  int dtype; /* cost_dtype */
  int m, n, k;
} cost_mma;

/* Calibration: per-hardware efficiency parameters with physical meaning,
 * fitted by cost_calibrate (bounded least squares on log time). A zeroed
 * struct (version 0) means "datasheet only": the model uses its defaults. */
#define COST_MAX_CALIB 48
typedef struct {
  int version;  /* 0 = none */
  int per_arch; /* 1: fitted per architecture on published measurements (cost_calibrate_arch),
                   not on this accelerator; 2: the arch's fallback's (cost_arch_fallback) */
  int n;        /* parameters in use */
  char inherited_from[64]; /* per_arch only, "" if none: the measured accelerator of the same
                              architecture whose memory-path and framework terms it took */
  char names[COST_MAX_CALIB][32];
  double values[COST_MAX_CALIB];
} cost_calib;

/* The hardware descriptor as plain values (transparent: api/ fills it from
 * JSON, hwdb/ stores it as JSON text). Zero means "unknown / absent". */
typedef struct {
  char name[64];
  char vendor[32];   /* "nvidia", "amd", "google", "intel" */
  char arch[32];     /* "hopper", "blackwell", "ampere", "cdna2", "cdna3", "cdna4", ... */
  int compute_units; /* SMs / CUs / cores */
  double clock_hz;   /* peak engine clock */
  /* Clocks behind the tensor peak (0 = unknown): the clock the datasheet's
   * dense peak assumes, and the clock a dense GEMM sustains at the board's
   * power limit. Their ratio scales the achievable tensor rate
   * (cost_clock_ratio). */
  double peak_clock_hz;
  double sustained_clock_hz;
  /* The SM clock under a training step's continuous dense load, where the
   * board's power cap binds (0 = no derating): the step models run their
   * tensor work at load / (sustained or peak) of the op model's rate, whose
   * calibration comes from short kernels timed from a cool GPU. */
  double load_clock_hz;
  double hbm_bytes;                  /* physical capacity */
  double hbm_usable_bytes;           /* what a framework can allocate */
  double hbm_bw;                     /* bytes/s, datasheet peak */
  double l2_bytes;                   /* L2 (per device, summed over dies) */
  double llc_bytes;                  /* last-level cache beyond L2 (Infinity Cache), 0 if none */
  double smem_per_unit;              /* shared memory / LDS per SM/CU usable by one block, bytes */
  double regs_per_unit;              /* 32-bit registers per SM/CU */
  double peak_flops[COST_DT__COUNT]; /* dense FLOP/s (int8: OP/s); 0 = not supported */
  int n_mma;
  cost_mma mma[COST_MAX_MMA];
  double scaleup_bw;  /* bytes/s per GPU per direction inside the scale-up domain */
  int scaleup_domain; /* GPUs in one scale-up domain (NVLink / Infinity Fabric) */
  /* How the domain is wired: 0 = through a switch (NVSwitch: every GPU
   * reaches the switch at scaleup_bw whatever the peer count), 1 = a fully
   * connected mesh of point-to-point links (AMD xGMI: a GPU reaches each
   * peer over its own link, so g GPUs of the mesh use g-1 links). */
  int scaleup_mesh;
  double scaleup_link_bw;   /* mesh: bytes/s per direction of one peer link; 0 = scaleup_bw /
                               (domain-1) */
  int in_switch_reduction;  /* the switch reduces (NVLink SHARP / NVLS): all-reduce moves n, not 2n
                             */
  double scaleout_bw;       /* bytes/s per GPU per direction across nodes */
  double host_link_bw;      /* bytes/s per direction between the GPU and host memory (PCIe, C2C) */
  double host_mem_per_node; /* bytes of host (CPU) memory per node of the reference system, 0 =
                               unknown (the planner's bound on host-placed tables) */
  double tdp_w;
  double price_per_hour; /* USD per GPU-hour, 0 = unknown */
  /* The launch-to-completion floor of one kernel timed with CUDA events on
   * this accelerator's measured hosts, us (0 = unknown: the generic
   * datasheet default of params.c). It is the uncalibrated value of
   * launch_us: a calibration of the accelerator's own still wins. */
  double launch_floor_us;
  cost_calib calib;
} cost_hw;

/* ---- Results ------------------------------------------------------------ */

/* What limits an op's time. */
typedef enum {
  COST_BOUND_COMPUTE = 0,
  COST_BOUND_MEMORY,
  COST_BOUND_LATENCY,
  COST_BOUND_NETWORK,
  COST_BOUND__COUNT
} cost_bound;

/* "compute", "memory", "latency", "network"; "unknown" out of range. */
const char *cost_bound_name(int bound);

#define COST_MAX_TERMS 16

/* One named quantity behind a result (compute_ms, memory_ms, launch_ms,
 * waves, tile_m, align_bytes, ...). Units are in the name. */
typedef struct {
  char name[24];
  double value;
} cost_term;

typedef struct {
  double ms;    /* predicted time */
  int bound;    /* cost_bound */
  double flops; /* useful FLOPs (not padded) */
  double bytes; /* bytes moved to/from DRAM (or over the network) */
  double achieved_flops_per_s;
  double achieved_bytes_per_s;
  int n_terms;
  cost_term terms[COST_MAX_TERMS];
  const char *detail; /* static text: how it was priced (collectives: algorithm and links) */
} cost_result;

/* ---- Ops ---------------------------------------------------------------- */

/* Dense C[M,N] = A[M,K] x B[K,N], batch independent products. layout is
 * "nn" (both row-major, the default when empty), "nt" (B stored [N,K]),
 * "tn" (A stored [K,M]) or "tt". fp8 means e4m3 inputs, bf16 output. */
typedef struct {
  int64_t m, n, k, batch;
  int dtype; /* cost_dtype */
  char layout[3];
} cost_gemm_op;

typedef enum {
  COST_EW_ADD = 0,   /* c = a + b: reads 2, writes 1 */
  COST_EW_GELU,      /* y = gelu(x) (erf form): reads 1, writes 1 */
  COST_EW_LAYERNORM, /* over rows of 1024: reads 1, writes 1, plus reductions */
  COST_EW_SOFTMAX,   /* over rows of 1024: reads 1, writes 1, plus reductions */
  COST_EW__COUNT
} cost_ew_kind;

typedef struct {
  int kind; /* cost_ew_kind */
  int64_t numel;
  int dtype; /* cost_dtype */
} cost_elementwise_op;

typedef enum { COST_EMB_FWD = 0, COST_EMB_FWD_BWD, COST_EMB__COUNT } cost_emb_pass;

/* nn.EmbeddingBag(mode="sum"): batch bags of pooling lookups each into a
 * table of rows x dim; fwd_bwd adds the backward with sparse gradients. */
typedef struct {
  int64_t rows, dim, batch, pooling;
  int dtype; /* cost_dtype */
  int pass;  /* cost_emb_pass */
} cost_embedding_op;

typedef enum {
  COST_COLL_ALLREDUCE = 0,
  COST_COLL_ALLGATHER,
  COST_COLL_REDUCESCATTER,
  COST_COLL_ALLTOALL,
  COST_COLL__COUNT
} cost_coll_kind;

typedef enum { COST_SCOPE_NODE = 0, COST_SCOPE_CLUSTER, COST_SCOPE__COUNT } cost_scope;

/* bytes: the size of the full (per-rank input for allreduce and alltoall,
 * gathered output for allgather, input for reducescatter) buffer. */
typedef struct {
  int kind; /* cost_coll_kind */
  double bytes;
  int64_t ranks;
  int scope; /* cost_scope */
  /* Ranks per scale-up domain (node). 0: scope node puts all ranks in one
   * domain; scope cluster fills domains of hw->scaleup_domain. 1: every
   * rank on its own node (a flat collective over the NICs). */
  int64_t gpus_per_node;
} cost_collective_op;

/* Name <-> enum helpers for the wire names ("gelu", "fwd_bwd", "allreduce",
 * "cluster"); parse returns -1 for an unknown name. */
int cost_ew_kind_parse(const char *name);
const char *cost_ew_kind_name(int kind);
int cost_emb_pass_parse(const char *name);
const char *cost_emb_pass_name(int pass);
int cost_coll_kind_parse(const char *name);
const char *cost_coll_kind_name(int kind);
int cost_scope_parse(const char *name);
const char *cost_scope_name(int scope);

/* Error returns of the op functions (out is zeroed on error). */
#define COST_EINVAL (-1) /* sizes out of range, unknown kind or layout */
#define COST_EDTYPE (-2) /* the hardware has no peak for this dtype */
#define COST_ENOHW (-3)  /* descriptor lacks a figure the op needs */

/* Each returns 0 and fills out, or a negative COST_E* code. Pure: reads
 * only its arguments (hw->calib when version > 0 or n > 0). */
int cost_gemm(const cost_hw *hw, const cost_gemm_op *op, cost_result *out);
/* sustained / peak clock of hw's tensor units, at most 1: the descriptor's
 * measured sustained clock, else the power model's bf16 clock where the
 * architecture has one (costmodel/gemm_arch.c), else 1. */
double cost_clock_ratio(const cost_hw *hw);
/* The same for one dtype: the power model gives each dtype its own clock
 * (a descriptor's measured sustained clock still wins). */
double cost_clock_ratio_dt(const cost_hw *hw, int dtype);

/* Board power under dense matrix load (gemm_arch.c):
 * TDP = p0_w + k[dt] * F_dt[TFLOP/s] * (f / f_peak)^3. */
typedef struct {
  double p0_w;
  double k_w_per_tflops[COST_DT__COUNT]; /* 0 = no figure for the dtype */
} cost_power_model;
/* One measured point: a GEMM of dtype at tdp_w ran at ratio = f / f_peak
 * on a chip whose dtype peak at f_peak is peak_tflops. */
typedef struct {
  int dtype;
  double tdp_w, peak_tflops, ratio;
} cost_power_point;
/* The architecture's power model (NULL where none is known). */
const cost_power_model *cost_power_model_of(const cost_hw *hw);
/* f / f_peak at tdp_w for a dtype whose peak is peak_flops (FLOP/s). */
double cost_power_clock_ratio(const cost_power_model *pm, double tdp_w, double peak_flops,
                              int dtype);
/* The architecture whose published-data calibration an arch without one
 * borrows (cdna4 -> cdna3), or NULL. */
const char *cost_arch_fallback(const char *arch);
/* Least-squares fit (log clock) of one P0 and a k per dtype present. */
int cost_power_fit(const cost_power_point *pt, size_t n, cost_power_model *out);
int cost_elementwise(const cost_hw *hw, const cost_elementwise_op *op, cost_result *out);
int cost_embedding_bag(const cost_hw *hw, const cost_embedding_op *op, cost_result *out);
int cost_collective(const cost_hw *hw, const cost_collective_op *op, cost_result *out);

/* ---- Calibration -------------------------------------------------------- */

/* The model's parameters: name, datasheet default for hw, bounds. index in
 * [0, cost_param_count()). Returns 0, or COST_EINVAL out of range. */
int cost_param_count(void);
int cost_param_info(int index, const cost_hw *hw, const char **name, double *def, double *lo,
                    double *hi);
/* The value the model uses for a parameter: hw->calib's when present, the
 * default otherwise. NAN for an unknown name. */
double cost_param_value(const cost_hw *hw, const char *name);
/* The index of a parameter (as cost_param_info), -1 for an unknown name. */
int cost_param_index(const char *name);
/* The parameter vector the op functions read, p[cost_param_count()] (at
 * most COST_MAX_CALIB): hw->calib's values where named (clamped to their
 * bounds), the defaults elsewhere. For fits that try parameter values
 * through cost_collective_p (bench/published_accuracy). */
void cost_params_resolve(const cost_hw *hw, double *p);
/* cost_collective with an explicit parameter vector p (cost_params_resolve
 * gives the one cost_collective uses). */
int cost_collective_p(const cost_hw *hw, const double *p, const cost_collective_op *op,
                      cost_result *out);

typedef enum {
  COST_OP_GEMM = 0,
  COST_OP_ELEMENTWISE,
  COST_OP_EMBEDDING,
  COST_OP__COUNT
} cost_op_kind;

/* One measurement: an op and its measured time. */
typedef struct {
  int kind; /* cost_op_kind */
  union {
    cost_gemm_op gemm;
    cost_elementwise_op ew;
    cost_embedding_op emb;
  } u;
  double ms;
} cost_sample;

/* Error classes a fit reports on. */
typedef enum {
  COST_CLASS_GEMM = 0,
  COST_CLASS_ELEMENTWISE,
  COST_CLASS_EMB_FWD,
  COST_CLASS_EMB_FWD_BWD,
  COST_CLASS__COUNT
} cost_class;
const char *cost_class_name(int cls); /* "gemm", "elementwise", "embedding_fwd", ... */
int cost_sample_class(const cost_sample *s);

typedef struct {
  char name[24];
  int n;
  double median_before, p90_before; /* relative error |pred-meas|/meas */
  double median_after, p90_after;
} cost_fit_class;

typedef struct {
  int n_samples; /* used (valid, positive time) */
  int n_skipped; /* invalid or unsupported by hw */
  int iterations;
  double rms_log_before, rms_log_after; /* RMS of log(pred/meas) */
  cost_fit_class cls[COST_CLASS__COUNT];
} cost_fit_report;

/* Fit the parameters that the samples inform (bounded least squares on
 * log time, Levenberg-Marquardt with projection onto the bounds), starting
 * from hw's current values. out gets every parameter (names + values);
 * out->version is left 0 for the caller to set. rep may be NULL. Returns
 * 0, or COST_EINVAL when no sample is usable. Allocates O(n) scratch. */
int cost_calibrate(const cost_hw *hw, const cost_sample *samples, size_t n, cost_calib *out,
                   cost_fit_report *rep);

/* Per-architecture calibration from published GEMM throughputs. Each row
 * carries its own descriptor: the accelerator's, with sustained_clock_hz
 * set to the clock the source says the GEMM ran at when it says so. The
 * fitted quantity is physical: the achievable fraction of the
 * clock-scaled dense peak per dtype (gemm_eff_<dtype>), one per dtype the
 * rows hold, each by a robust (Cauchy, c = 0.10 in log time) 1-D fit over
 * that dtype's rows. out gets only the fitted parameters, per_arch = 1,
 * version 0. Returns 0, or COST_EINVAL when no row is a usable GEMM. */
typedef struct {
  cost_hw hw;
  cost_sample s;
} cost_arch_row;

typedef struct {
  int n_rows;                         /* GEMM rows used */
  int n_params;                       /* parameters fitted */
  double median_before, median_after; /* |pred/meas - 1| over the rows */
} cost_arch_fit_report;

int cost_calibrate_arch(const cost_arch_row *rows, size_t n, cost_calib *out,
                        cost_arch_fit_report *rep);

/* Whether c sets the parameter called name (1) or not (0). */
int cost_calib_has(const cost_calib *c, const char *name);

/* Add or replace one named entry of c (COST_ENOHW when c is full). */
int cost_calib_set(cost_calib *c, const char *name, double v);

/* Fills c with every parameter of base that c does not set (an arch's own
 * calibration over its fallback's, cost_arch_fallback: the CDNA4 fit has no
 * fp16 row, so its fp16 fraction is CDNA3's). c's other fields are kept. */
void cost_calib_fill(cost_calib *c, const cost_calib *base);

/* Model time of one sample under hw (dispatch over the op kinds). */
int cost_sample_predict(const cost_hw *hw, const cost_sample *s, cost_result *out);

/* Median and 90th percentile of |pred/meas - 1| over n samples; writes
 * errors into scratch (n doubles). */
void cost_error_stats(const cost_hw *hw, const cost_sample *samples, size_t n, double *scratch,
                      double *median, double *p90);

#endif
