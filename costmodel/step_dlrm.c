/* step_dlrm.c: one training step of a DLRM-style model (Naumov et al.,
 * "Deep Learning Recommendation Model for Personalization and
 * Recommendation Systems", 2019): bottom MLP, embedding bags, a dot (or
 * DCN cross) interaction, top MLP, BCE loss, dense + sparse optimizers.
 *
 * Every kernel of forward, backward and optimizer is priced with the op
 * models (cost_gemm_p, cost_embedding_p, cost_collective_p, streaming
 * bytes); a Linear layer y = x W^T is the GEMM (M=batch, N=out, K=in, "nt")
 * forward, dgrad (M=batch, N=in, K=out, "nn") and wgrad (M=out, N=in,
 * K=batch, "tn") backward. What plain PyTorch eager adds -- autocast casts,
 * per-op host dispatch, the sparse-gradient buffers and the synchronizing
 * sparse optimizer -- is the framework profile's; TorchRec/FBGEMM fuses all
 * tables into one TBE kernel per pass with the optimizer in its backward.
 * Memory is tracked alongside: what is alive at the end of the forward
 * (activations saved for backward, eager locals) and at the embedding
 * backward (sparse gradients); the peak is the larger. See
 * docs/step-model.md for the inventory and its check against
 * data/measurements/h200/dlrm_step.json.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "costmodel/step_int.h"

#define BYTE_LIMIT 4.6e18 /* 2^62: byte counts past this are refused */

/* Per-GPU load of the embedding work. */
typedef struct {
  double t_f, t_b, t_opt; /* GPU seconds: lookups, their backward, sparse optimizer */
  double host_s;          /* host seconds (host-placed tables) */
  double table_bytes, state_bytes, sparse_grad_bytes, saved_bytes, out_bytes, idx_bytes;
  double lookups, n_local;          /* looked-up rows, table shards on this GPU */
  int64_t ops_fb, ops_opt, kernels; /* host ops (dispatches); kernels in all */
  int64_t k_f, k_b, k_opt;          /* GPU kernels: lookups, backward, sparse optimizer */
} emb_load;

typedef struct {
  double cost; /* seconds, the LPT key */
  emb_load l;
} tw_item;

static void load_add(emb_load *d, const emb_load *s, double times) {
  d->t_f += s->t_f * times;
  d->t_b += s->t_b * times;
  d->t_opt += s->t_opt * times;
  d->host_s += s->host_s * times;
  d->table_bytes += s->table_bytes * times;
  d->state_bytes += s->state_bytes * times;
  d->sparse_grad_bytes += s->sparse_grad_bytes * times;
  d->saved_bytes += s->saved_bytes * times;
  d->out_bytes += s->out_bytes * times;
  d->idx_bytes += s->idx_bytes * times;
  d->lookups += s->lookups * times;
  d->n_local += s->n_local * times;
  d->ops_fb += (int64_t)(s->ops_fb * times);
  d->ops_opt += (int64_t)(s->ops_opt * times);
  d->kernels += (int64_t)(s->kernels * times);
  d->k_f += (int64_t)(s->k_f * times);
  d->k_b += (int64_t)(s->k_b * times);
  d->k_opt += (int64_t)(s->k_opt * times);
}

/* Optimizer state per row (bytes) for a sparse optimizer. */
static double sparse_state_bytes(int opt, int64_t dim) {
  switch (opt) {
  case COST_OPT_ROWWISE_ADAGRAD:
    return 4.0;
  case COST_OPT_ADAGRAD:
    return 4.0 * (double)dim;
  case COST_OPT_ADAM:
    return 8.0 * (double)dim;
  default:
    return 0;
  }
}

/* A host-mapped (uvm) table shard: rows in pinned host memory that GPU
 * kernels read and update in place over the host link, the optimizer fused
 * into the backward (FBGEMM's TBE with EmbeddingLocation.HOST, Mudigere et
 * al. 2022 "Software-hardware co-design for fast and scalable training of
 * DLRM models", sec. 4; the runner's validate/gpu/uvm_bag.py, SGD):
 *  forward: one kernel reads the `lookups` rows over the link, each rounded
 *    up to 32-byte sectors, at host_link_bw * uvm_read_eff; a row costs at
 *    least its share of translation misses, miss * uvm_walk_ns with miss =
 *    1 - uvm_reach_mb / table bytes (docs/step-model.md, "uvm tables");
 *  backward, on the GPU: the pooled gradient expanded to one row per lookup
 *    and summed per unique row (sort-based unique + index_add: per-index
 *    cost sparse_bwd_ns_per_index, as the eager sparse backward, plus the
 *    streamed bytes), then one kernel reads and writes back each unique row
 *    over the link at host_link_bw * uvm_update_eff (in address order:
 *    no translation floor). Unique rows of uniform ids: rows * (1 -
 *    exp(-lookups / rows));
 *  host: torch.unique hands its size to the host, so each table's backward
 *    synchronizes and the GPU then idles at the host's dispatch pace for
 *    uvm_sync_us, serial with the GPU (step_host_serial).
 * Kernels (torch.profiler, data/measurements/h200-uvm/uvm_steps.json): 1
 * forward, 8 backward; host ops: 3 forward (autograd Function + Triton
 * launch), 8 backward. Nothing of the table is in HBM. */
static void uvm_load(step_acc *a, int64_t rows, int64_t dim, int64_t bags, int64_t pooling,
                     double row_bytes, emb_load *o) {
  double link = a->hw->host_link_bw;
  if (!(link > 0)) {
    if (!a->err) a->err = COST_ENOHW;
    return;
  }
  double lookups = (double)bags * (double)pooling, R = (double)rows;
  double uniq = R * -expm1(-lookups / R), wire = 32.0 * ceil(row_bytes / 32.0);
  double g_bytes = (double)dim * 4.0; /* fp32 gradient rows */
  const double *pf = a->prof;
  double tb = R * row_bytes, reach = pf[COST_SP_UVM_REACH_MB] * 1e6;
  double walk = (tb > reach ? 1.0 - reach / tb : 0.0) * pf[COST_SP_UVM_WALK_NS] * 1e-9;
  /* step_uvm_link_scale: the link-bound time inside a whole step over the
   * microbenchmark's (fitted from plan validations: cost_step_val_fit) */
  double ls = pf[COST_SP_UVM_LINK_SCALE];
  double rd = ls * fmax(wire / (link * pf[COST_SP_UVM_READ_EFF]), walk);
  /* torch.unique returns the ids sorted, so the update walks the table in
   * address order and its translations hit: no miss floor there (12M-row
   * tables update at the 2M-row tables' rate in uvm_micro.json) */
  double upd = ls * wire / (link * pf[COST_SP_UVM_UPDATE_EFF]);
  o->t_f = lookups * rd + a->launch_s;
  o->t_b = lookups * a->p[P_SPARSE_NS_IDX] * 1e-9 +
           (2.0 * lookups * g_bytes + 2.0 * uniq * g_bytes + lookups * 16.0) / a->bw + uniq * upd +
           8.0 * a->launch_s;
  o->host_s = pf[COST_SP_UVM_SYNC_US] * 1e-6;
  o->k_f = 1;
  o->k_b = 8;
  o->kernels = o->k_f + o->k_b;
  o->ops_fb = 11;
  o->out_bytes = (double)bags * (double)dim * 4.0;
  o->saved_bytes = lookups * 8.0;
  o->sparse_grad_bytes = lookups * g_bytes + uniq * (g_bytes + 8.0);
}

/* The work of one table shard: bags lookups of `pooling` rows of `dim`
 * from `rows`. */
static void table_load(step_acc *a, const cost_dlrm *d, const cost_recipe *r, int64_t rows,
                       int64_t dim, int64_t bags, int64_t pooling, int placement, emb_load *o) {
  memset(o, 0, sizeof *o);
  int edt = r->embedding_precision;
  double eb = cost_dtype_bytes((cost_dtype)edt), lookups = (double)bags * (double)pooling;
  double row_bytes = (double)dim * eb, ob = eb < 2 ? 2 : eb; /* pooled output dtype */
  int eager = r->framework == COST_FW_PYTORCH_EAGER;
  double st_row = sparse_state_bytes(d->sparse_optimizer, dim);
  o->lookups = lookups;
  o->n_local = 1;
  o->out_bytes = (double)bags * (double)dim * ob;
  o->idx_bytes = lookups * 8.0;
  if (placement == COST_PLACE_HOST) {
    /* The runner's CPU EmbeddingBag (plain PyTorch, sparse=True, SGD), all
     * on the host (docs/step-model.md, "Host-placed tables"):
     *  forward: the fbgemm gather of `lookups` random rows, parallel over
     *    the intra-op threads; a row that is not in the LLC costs one DRAM
     *    access (host_gather_ns) -- tables that fit the LLC stay resident;
     *  the pooled rows (fp32) to the GPU and their gradient back, pageable
     *    copies at host_copy_gbps (the copy back synchronizes with the GPU);
     *  backward: index_select of the gradient rows into lookups x dim values
     *    and AccumulateGrad's clone, fresh buffers at host_mem_gbps;
     *  SGD: add_(dense, uncoalesced sparse): every thread scans all indices
     *    (~1 ns each) and updates its share of rows; the rows the forward
     *    read are still cached only while the step's host footprint
     *    (a->host_ws) fits the LLC;
     *  ~12 eager ops (embedding_bag, to, copy back, index_select, sparse
     *    tensor, clone, add_, ...), dispatched serially.
     * This work is serial with the GPU's step (step_host_serial). */
    const double *pf = a->prof;
    double T = fmax(1.0, pf[COST_SP_HOST_THREADS]), lat = pf[COST_SP_HOST_GATHER_NS] * 1e-9;
    double llc = pf[COST_SP_HOST_LLC_MB] * 1e6, tb = (double)rows * row_bytes;
    double miss_tab = tb > llc ? 1.0 - llc / tb : 0.0;
    double miss_upd = a->host_ws > llc ? miss_tab * (1.0 - llc / a->host_ws) : 0.0;
    double pooled = (double)bags * (double)dim * eb, grad = (double)bags * (double)dim * 4.0;
    double vals = lookups * row_bytes, core_bw = 20e9; /* one core streaming cached rows */
    double gather = lookups * (lat * miss_tab + row_bytes / core_bw) / T;
    double copies = (pooled + grad) / (pf[COST_SP_HOST_COPY_GBPS] * 1e9);
    double bwd = 2.0 * vals / (pf[COST_SP_HOST_MEM_GBPS] * 1e9);
    double sgd = lookups * 1e-9 + lookups * (lat * miss_upd + 2.0 * row_bytes / core_bw) / T;
    o->host_s = gather + copies + bwd + sgd + 12.0 * a->op_s;
    o->t_f = step_stream(a, 0); /* the copy's GPU side */
    o->t_b = o->t_f;
    o->kernels = 2;
    o->k_f = o->k_b = 1;
    o->ops_fb = 0; /* their dispatch is in host_s */
    o->saved_bytes = (double)bags * 8.0 * 2;
    return;
  }
  if (placement == COST_PLACE_UVM) {
    uvm_load(a, rows, dim, bags, pooling, row_bytes, o);
    return;
  }
  o->table_bytes = (double)rows * row_bytes;
  o->state_bytes = (double)rows * st_row;
  cost_embedding_op e = {.rows = rows,
                         .dim = dim,
                         .batch = bags,
                         .pooling = pooling,
                         .dtype = edt,
                         .pass = COST_EMB_FWD};
  cost_result fwd;
  int rc = cost_embedding_p(a->hw, a->p, &e, &fwd);
  if (rc) {
    if (!a->err) a->err = rc;
    return;
  }
  /* The backward's GPU time only: the op model's fwd+bwd floor
   * (sparse_bwd_host_us) is the host issuing the chain in a microbenchmark;
   * in a step the host's dispatch is priced per op (op_s), so keeping the
   * floor counted that host time twice, as GPU time. With the kernel
   * counts below (torch.profiler) this fits the shared steps better
   * (median 6.4% -> 5.4%, variant pairs 18 -> 19 of 19). */
  double t_f = fwd.ms * 1e-3, t_b = lookups * a->p[P_SPARSE_NS_IDX] * 1e-9;
  if (eager) {
    /* EmbeddingBag(sparse=True): ~3 ops forward, ~10 in the sparse
     * backward (offset2bag, index_select, sort/unique), and the optimizer's
     * add_ of an uncoalesced sparse gradient: coalesce (sort + segment
     * reduce) then index_add -- per looked-up index, plus the rows read and
     * written (and the state rows for adagrad/adam). */
    double upd_rows = st_row > 0 ? 2.0 + 2.0 * st_row / row_bytes : 2.0;
    int upd_ops = d->sparse_optimizer == COST_OPT_SGD ? 10 : 20;
    o->t_f = t_f;
    o->t_b = t_b;
    o->t_opt = upd_ops * a->launch_s + lookups * a->prof[COST_SP_SPARSE_UPD_NS] * 1e-9 +
               lookups * row_bytes * (1.0 + upd_rows) / a->bw;
    if (d->sparse_optimizer != COST_OPT_SGD) { /* coalesce first: step_fit.c */
      o->t_opt += lookups * a->prof[COST_SP_COALESCE_NS] * 1e-9;
      /* the host's wait and restart after the syncs: a host speed's share
       * (a measured host_op_us scales it with the per-op time) */
      o->host_s += a->prof[COST_SP_COALESCE_SYNC_US] * 1e-6 * a->host_scale;
    }
    o->ops_fb = 13;
    o->ops_opt = upd_ops;
    /* GPU kernels per table, counted by torch.profiler
     * (data/measurements/h200-probe/step_shared.json, fp32 rows): the
     * bag kernel forward; index_select (gather) and an arange backward;
     * one index_add_ for SGD. The other ops are views and allocations.
     * Adagrad/Adam (coalesce, state update) were not profiled: one kernel
     * per op. */
    o->k_f = 1;
    o->k_b = 2;
    o->k_opt = d->sparse_optimizer == COST_OPT_SGD ? 1 : upd_ops;
    o->kernels = o->k_f + o->k_b + o->k_opt;
    o->sparse_grad_bytes = lookups * ((double)dim * eb + 8.0);
    o->saved_bytes = lookups * 8.0 + (double)bags * 16.0; /* offset2bag, bag_size, offsets */
  } else {
    /* FBGEMM TBE: forward gather; backward sorts the indices (radix sort,
     * ~4 passes over 16-byte key/value pairs) and applies the optimizer to
     * each unique row in place: read grads, read+write rows and state. */
    double uniq = (double)rows * -expm1(-lookups / (double)rows);
    double bwd_bytes = lookups * (row_bytes + 16.0 * 4.0 * 2.0) + uniq * 2.0 * (row_bytes + st_row);
    if (r->framework == COST_FW_FUSED_TRITON)
      /* the runner's Triton TBE (validate/gpu/fused_tbe.py): per lookup its
       * bag id (8 B written), the global row id (bag / B, the table's row
       * offset, the add: ~56 B), torch.sort of 8-byte keys with 8-byte
       * positions (CUB's LSD radix sort, 8-bit digits: 8 passes reading and
       * writing 16 B + 16 B), then the update kernel reads the sorted key
       * (twice: its own and the previous), the position, the bag id and the
       * pooled fp32 gradient row; each unique row is read and written once
       * with its state (FBGEMM's sort-then-update order, Mudigere et al.
       * 2022, sec. 4). */
      bwd_bytes = lookups * (8.0 + 56.0 + 8.0 * 32.0 + 32.0 + (double)dim * 4.0) +
                  uniq * 2.0 * (row_bytes + st_row);
    o->t_f = t_f - a->launch_s;
    o->t_b = bwd_bytes / a->bw;
    if (r->framework == COST_FW_FUSED_TRITON) /* latency-bound programs: step_fit.c */
      o->t_b += lookups * a->prof[COST_SP_FUSED_TBE_NS] * 1e-9;
    o->saved_bytes = lookups * 8.0;
  }
}

/* Bytes per element of the pooled embeddings exchanged between GPUs and
 * of the gradients all-reduced. The pooled rows leave in the table's
 * dtype (at least 16 bits), the gradients of fp32 master weights in fp32
 * (PyTorch AMP, DDP). HugeCTR under mixed precision exchanges and
 * all-reduces half: its embedding collection's emb_type and wgrad_type
 * are Half (HugeCTR src/pybind/model.cpp, EmbeddingCollectionConfig), and
 * the dense gradients are all-reduced as GroupedExchangeWgrad<__half>. */
static double exch_bytes(const cost_recipe *r) {
  double eb = cost_dtype_bytes((cost_dtype)r->embedding_precision);
  if (r->framework == COST_FW_HUGECTR && cost_dtype_bytes((cost_dtype)r->precision) == 2)
    return 2.0;
  return eb < 2 ? 2 : eb;
}
static double wgrad_bytes(const cost_recipe *r) {
  return r->framework == COST_FW_HUGECTR && cost_dtype_bytes((cost_dtype)r->precision) == 2 ? 2.0
                                                                                            : 4.0;
}

/* The dense side (MLPs, interaction, autocast) is plain PyTorch under the
 * runner's fused_triton embeddings as under pytorch_eager. */
static int dense_eager(const cost_recipe *r) {
  return r->framework == COST_FW_PYTORCH_EAGER || r->framework == COST_FW_FUSED_TRITON;
}

/* Sharding of the tables across gpus: data-parallel, row- and
 * column-wise shards load every GPU alike; table-wise tables are placed
 * by LPT (longest processing time first) and the busiest GPU counts. */
static int cmp_item(const void *x, const void *y) {
  double a = ((const tw_item *)x)->cost, b = ((const tw_item *)y)->cost;
  return a < b ? 1 : a > b ? -1 : 0;
}

typedef struct {
  emb_load even, busiest;
  double a2a_bytes;     /* per rank, forward (backward the same) */
  double rail_bytes;    /* HugeCTR hierarchical: per rank, the all-to-all over one rail */
  double rs_bytes;      /* row-wise: reduce-scatter forward / allgather backward */
  double rs_node_bytes; /* table-row-wise: the same inside one node (per node, mean) */
  double dp_grad_bytes; /* data-parallel tables: allreduced gradients */
  int64_t n_tables;     /* total (counts expanded) */
  int64_t interaction_dim;
  int64_t dim0; /* common dim (dot), -1 if mixed */
} emb_plan;

static int heap_pop_push(double *h, int64_t *idx, int64_t n, double add) {
  /* min-heap of bin loads: add to the root, sift down; returns root bin */
  int64_t root = idx[0];
  h[0] += add;
  int64_t i = 0;
  for (;;) {
    int64_t l = 2 * i + 1, rr = l + 1, m = i;
    if (l < n && h[l] < h[m]) m = l;
    if (rr < n && h[rr] < h[m]) m = rr;
    if (m == i) break;
    double t = h[i];
    h[i] = h[m];
    h[m] = t;
    int64_t ti = idx[i];
    idx[i] = idx[m];
    idx[m] = ti;
    i = m;
  }
  return (int)root;
}

/* LPT: biggest first onto the least loaded of nb bins (Graham 1969:
 * within 4/3 of the optimum makespan); the busiest bin's load. */
static int lpt(tw_item *items, size_t k, int64_t nb, emb_load *busiest) {
  double *h = calloc((size_t)nb, sizeof *h);
  int64_t *idx = calloc((size_t)nb, sizeof *idx);
  emb_load *bins = calloc((size_t)nb, sizeof *bins);
  if (!h || !idx || !bins) {
    free(h), free(idx), free(bins);
    return -1;
  }
  for (int64_t b = 0; b < nb; b++) idx[b] = b;
  qsort(items, k, sizeof *items, cmp_item);
  for (size_t i = 0; i < k; i++) {
    int64_t bin = heap_pop_push(h, idx, nb, items[i].cost);
    load_add(&bins[bin], &items[i].l, 1.0);
  }
  int64_t worst = 0;
  for (int64_t b = 1; b < nb; b++)
    if (bins[b].t_f + bins[b].t_b + bins[b].t_opt + bins[b].host_s >
        bins[worst].t_f + bins[worst].t_b + bins[worst].t_opt + bins[worst].host_s)
      worst = b;
  *busiest = bins[worst];
  free(h), free(idx), free(bins);
  return 0;
}

static int plan_tables(step_acc *a, const cost_dlrm *d, const cost_recipe *r, emb_plan *pl) {
  int64_t G = r->gpus, B = r->batch_per_gpu;
  int64_t g = r->gpus_per_node > 0 && r->gpus_per_node < G ? r->gpus_per_node : G;
  int64_t N = (G + g - 1) / g;
  size_t n_tw = 0, n_twrw = 0, k2 = 0;
  tw_item *items = NULL, *items2 = NULL;
  int rc = 0;
  memset(pl, 0, sizeof *pl);
  pl->dim0 = -2;
  for (size_t i = 0; i < d->n_tables; i++) {
    const cost_table *t = &d->tables[i];
    int sh = t->sharding >= 0 ? t->sharding : r->sharding;
    if (G > 1 && sh == COST_SHARD_TABLE_WISE && t->count % G) n_tw++;
    if (G > 1 && sh == COST_SHARD_ROW_WISE && t->row_shards > 0 && t->row_shards < G)
      n_tw += (size_t)t->row_shards;
    if (G > 1 && sh == COST_SHARD_TABLE_ROW_WISE)
      n_twrw += t->row_shards > 1 && t->row_shards < N ? (size_t)t->row_shards : 1;
  }
  /* the remainders of count mod G go through LPT, one item per table */
  if (n_tw && !(items = calloc(n_tw, sizeof *items))) return COST_EINVAL;
  if (n_twrw && !(items2 = calloc(n_twrw, sizeof *items2))) {
    free(items);
    return COST_EINVAL;
  }
  size_t k = 0;
  for (size_t i = 0; i < d->n_tables; i++) {
    const cost_table *t = &d->tables[i];
    int sh = G > 1 ? (t->sharding >= 0 ? t->sharding : r->sharding) : COST_SHARD_DATA_PARALLEL;
    int pc = t->placement >= 0 ? t->placement : r->placement;
    int64_t dim = step_pad(t->dim, r->pad_to), cnt = t->count > 0 ? t->count : 1;
    double eb = cost_dtype_bytes((cost_dtype)r->embedding_precision), ob = exch_bytes(r);
    emb_load l;
    pl->n_tables += cnt;
    pl->interaction_dim += dim * cnt;
    pl->dim0 = pl->dim0 == -2 ? dim : (pl->dim0 == dim ? dim : -1);
    if ((double)t->rows * (double)dim * eb > BYTE_LIMIT) {
      free(items);
      free(items2);
      return COST_ESTEP_OVERFLOW;
    }
    switch (sh) {
    case COST_SHARD_TABLE_WISE:
      table_load(a, d, r, t->rows, dim, G * B, t->pooling, pc, &l);
      load_add(&pl->even, &l, (double)(cnt / G));
      if (cnt % G) {
        items[k].l = l;
        items[k].cost = (l.t_f + l.t_b + l.t_opt + l.host_s) * (double)(cnt % G);
        load_add(&items[k].l, &l, (double)(cnt % G) - 1.0); /* the item carries cnt % G tables */
        k++;
      }
      pl->a2a_bytes += (double)B * (double)dim * ob * (double)cnt;
      break;
    case COST_SHARD_COLUMN_WISE: {
      int64_t cdim = (dim + G - 1) / G;
      table_load(a, d, r, t->rows, cdim, G * B, t->pooling, pc, &l);
      load_add(&pl->even, &l, (double)cnt);
      pl->a2a_bytes += (double)B * (double)dim * ob * (double)cnt;
      break;
    }
    case COST_SHARD_ROW_WISE:
      if (t->row_shards > 0 && t->row_shards < G) {
        /* split over k of the G GPUs (HugeCTR's uniform model-parallel
         * embedding, embedding/operators/communication.cpp: each shard
         * looks up its rows for the global batch and sends every GPU the
         * partial sums of its samples, ncclSend/ncclRecv to each peer; the
         * owner adds the k parts): k shards of 1/k of the work go by LPT
         * with the table-wise tables, and each GPU receives k partial rows
         * per sample -- an all-to-all of k x B x dim, backward the same */
        int64_t ks = t->row_shards;
        table_load(a, d, r, (t->rows + ks - 1) / ks, dim, G * B, t->pooling, pc, &l);
        l.t_f /= (double)ks;
        l.t_b /= (double)ks;
        l.t_opt /= (double)ks;
        l.sparse_grad_bytes /= (double)ks;
        l.lookups /= (double)ks;
        for (int64_t j = 0; j < ks; j++, k++) {
          items[k].l = l;
          load_add(&items[k].l, &l, (double)cnt - 1.0);
          items[k].cost = (l.t_f + l.t_b + l.t_opt + l.host_s) * (double)cnt;
        }
        pl->a2a_bytes += (double)ks * (double)B * (double)dim * ob * (double)cnt;
        break;
      }
      table_load(a, d, r, (t->rows + G - 1) / G, dim, G * B, t->pooling, pc, &l);
      /* each GPU sees about 1/G of the global lookups */
      l.t_f /= (double)G;
      l.t_b /= (double)G;
      l.t_opt /= (double)G;
      l.sparse_grad_bytes /= (double)G;
      l.lookups /= (double)G;
      load_add(&pl->even, &l, (double)cnt);
      pl->rs_bytes += (double)G * (double)B * (double)dim * ob * (double)cnt;
      break;
    case COST_SHARD_TABLE_ROW_WISE: {
      /* the node's GPUs serve the global batch for the table (each about
       * 1/g of its lookups, LPT below), reduce-scatter the partial sums
       * inside the node, and the pooled rows leave by all-to-all as for
       * table-wise (TorchRec's TWRW; HugeCTR's hierarchical embedding,
       * the MLPerf DLRM-DCNv2 submissions' hier_auto plan). row_shards k:
       * the rows are split over k nodes (hier_auto plans tables over the
       * nodes and gives every GPU of a node the node's whole list: the
       * submissions' sharding/__init__.py, generate_plan), each node
       * serving 1/k of the lookups and sending partial sums that the
       * owner of each sample adds. */
      int64_t kn = t->row_shards > 1 && t->row_shards < N ? t->row_shards : 1;
      table_load(a, d, r, (t->rows + kn - 1) / kn, dim, G * B, t->pooling, pc,
                 &l); /* 1/(k g) of it below */
      l.t_f /= (double)kn;
      l.t_b /= (double)kn;
      l.t_opt /= (double)kn;
      l.sparse_grad_bytes /= (double)kn;
      l.lookups /= (double)kn;
      for (int64_t j = 0; j < kn; j++, k2++) {
        items2[k2].l = l;
        items2[k2].cost = (l.t_f + l.t_b + l.t_opt + l.host_s) * (double)cnt;
        load_add(&items2[k2].l, &l, (double)cnt - 1.0);
      }
      double x = (double)kn * (double)B * (double)dim * ob * (double)cnt;
      pl->rs_node_bytes += (double)G * x / (double)N;
      /* HugeCTR's hierarchical exchange (embedding/
       * hier_model_parallel_embedding.cpp, operators/communication.cpp
       * hier_communicate): after the reduction in the node, GPU i of each
       * node sends to GPU i of every other node only -- an all-to-all of N
       * ranks over one rail, each through its own NIC */
      if (r->framework == COST_FW_HUGECTR && N > 1)
        pl->rail_bytes += x;
      else
        pl->a2a_bytes += x;
      break;
    }
    default: /* data parallel (and every table on one GPU) */
      table_load(a, d, r, t->rows, dim, B, t->pooling, pc, &l);
      load_add(&pl->even, &l, (double)cnt);
      if (G > 1 && pc == COST_PLACE_HBM)
        pl->dp_grad_bytes += (r->framework == COST_FW_HUGECTR ? l.table_bytes / eb * wgrad_bytes(r)
                                                              : l.table_bytes) *
                             (double)cnt;
      break;
    }
  }
  if (k && lpt(items, k, G, &pl->busiest)) rc = COST_EINVAL;
  if (k2 && !rc) {
    /* table-row-wise: tables go whole to nodes (LPT over the N nodes), each
     * node's g GPUs split its tables' rows and so its work; the busiest
     * node's share per GPU adds to the busiest GPU (an upper bound when
     * table-wise tables are mixed in). */
    emb_load node;
    if (lpt(items2, k2, N, &node)) rc = COST_EINVAL;
    load_add(&pl->busiest, &node, 1.0 / (double)g);
  }
  free(items);
  free(items2);
  return rc;
}

/* The interaction's batched GEMM. For F < 64 each product is smaller
 * than one CTA tile of the op model's menu (64x64 and up), and cuBLAS
 * runs its small-matrix batched kernels, which stream the operands: a
 * roofline (operand and result bytes at streaming bandwidth vs FLOPs at the
 * tensor peak x efficiency) prices them. Larger F goes to cost_gemm. */
static double small_bmm(step_acc *a, const char *pass, int64_t m, int64_t n, int64_t k,
                        int64_t batch, int dt, const char *layout) {
  if (m >= 64 && n >= 64) return step_gemm_as(a, pass, m, n, k, batch, dt, layout);
  double b = cost_dtype_bytes((cost_dtype)dt);
  double bytes = (double)batch * ((double)m * k + (double)k * n + (double)m * n) * b;
  double flops = 2.0 * (double)batch * m * n * k;
  int eff = dt == COST_DT_FP32   ? P_EFF_FP32
            : dt == COST_DT_TF32 ? P_EFF_TF32
            : dt == COST_DT_FP16 ? P_EFF_FP16
            : dt == COST_DT_FP8  ? P_EFF_FP8
                                 : P_EFF_BF16;
  double peak = a->hw->peak_flops[dt] * cost_clock_ratio(a->hw) * a->p[eff];
  double mem = bytes / a->bw, math = peak > 0 ? flops / peak : 0;
  if (a->gemms && m > 0 && n > 0 && k > 0) {
    cost_gemm_op g;
    memset(&g, 0, sizeof g);
    g.m = m, g.n = n, g.k = k, g.batch = batch, g.dtype = dt;
    memcpy(g.layout, layout, 3);
    step_gemm_list(a, pass, &g, a->launch_s + fmax(mem, math), flops, bytes,
                   mem >= math ? COST_BOUND_MEMORY : COST_BOUND_COMPUTE);
  }
  return a->launch_s + fmax(mem, math);
}

/* One dense layer (in -> out) forward, backward, casts; memory saved.
 * need_dgrad 0 for the first layer (its input needs no gradient). */
typedef struct {
  double saved;  /* bytes saved for backward per layer output */
  double params; /* parameters */
  double fwd_s, bwd_s;
} mlp_acc;

static void linear(step_acc *a, const cost_recipe *r, int64_t B, int64_t in, int64_t out, int relu,
                   int need_dgrad, int recompute, mlp_acc *m) {
  int dt = r->precision, eager = dense_eager(r);
  double ab = cost_dtype_bytes((cost_dtype)dt), act = (double)B * (double)out * ab;
  int cast = eager && dt != COST_DT_FP32 && dt != COST_DT_FP8;
  double wbytes = (double)in * (double)out;
  double f = step_gemm_as(a, "fwd", B, out, in, 1, dt, "nt");
  step_add(a, COST_KC_GEMM_FWD, COST_COMP_GEMM, PH_FB, f * (recompute ? 2 : 1), recompute ? 2 : 1,
           recompute ? 2 : 1);
  if (relu) {
    double e = step_stream(a, 2 * act);
    step_add(a, COST_KC_ELEMENTWISE, COST_COMP_OTHER, PH_FB, e * (recompute ? 2 : 1),
             recompute ? 2 : 1, recompute ? 2 : 1);
    step_add(a, COST_KC_ELEMENTWISE, COST_COMP_OTHER, PH_FB, step_stream(a, 3 * act), 1, 1);
    m->saved += act;
  }
  double g = step_gemm_as(a, "wgrad", out, in, B, 1, dt, "tn");
  if (need_dgrad) g += step_gemm_as(a, "dgrad", B, in, out, 1, dt, "nn");
  step_add(a, COST_KC_GEMM_BWD, COST_COMP_GEMM, PH_FB, g, need_dgrad ? 2 : 1, need_dgrad ? 2 : 1);
  /* bias gradient: a column reduction over the batch */
  step_add(a, COST_KC_ELEMENTWISE, COST_COMP_OTHER, PH_FB, step_stream(a, act), 1, 1);
  if (cast) /* autocast: W and b cast per forward, their grads cast back */
    step_add(a, COST_KC_ELEMENTWISE, COST_COMP_OTHER, PH_FB, 4 * step_stream(a, wbytes * 6), 4, 4);
  m->params += wbytes + (double)out;
  m->fwd_s += f;
}

/* The cross layers R' = x0 * layer(R) + R over x0 (B x dd, xb bytes per
 * element; ab: the layers' compute dtype): their GEMMs and elementwise
 * kernels. Adds the layers' parameters to *params; returns the bytes they
 * save for the backward. */
static double dcn_layers(step_acc *a, const cost_dlrm *d, const cost_recipe *r, int64_t B,
                         int64_t dd, double ab, double xb, int ck_full, double *params) {
  int deager = dense_eager(r), dt = r->precision;
  int cast = deager && dt != COST_DT_FP32 && dt != COST_DT_FP8;
  double X = (double)B * (double)dd, saved = 0;
  /* Low rank (DCN V2, section 3.2; the MLPerf DLRM-DCNv2 reference's
   * rank 512): W x = U (V^T x), two GEMMs of d x r instead of one d x d,
   * and the B x r product is one more saved activation. */
  int64_t rank = d->cross_rank > 0 && d->cross_rank < dd ? d->cross_rank : 0;
  for (int64_t l = 0; l < d->cross_layers; l++) {
    mlp_acc mc = {0};
    if (rank) {
      step_tag(a, "cross[%lld] V", (long long)l);
      linear(a, r, B, dd, rank, 0, 1, ck_full, &mc);
      step_tag(a, "cross[%lld] U", (long long)l);
      linear(a, r, B, rank, dd, 0, 1, ck_full, &mc);
      saved += (double)B * (double)rank * ab;
    } else {
      step_tag(a, "cross[%lld]", (long long)l);
      linear(a, r, B, dd, dd, 0, 1, ck_full, &mc);
    }
    /* R' = x0 * y + R, y the layer's output (ab): forward the mul
     * (x0, y -> xb) and the add; backward dy = g * x0, dx0 += g * y (a mul
     * and the accumulation into x0's gradient) and dR += the layer's
     * dgrad. Autocast adds the cast of R into the layer and of its dgrad
     * back. Each is one eager elementwise kernel over X elements
     * (torch.profiler: mul/add/copy kernels of ~X elements per layer in
     * data/measurements/h100-dcn-mlperf/dcn_profile.json, fitting half). */
    if (deager) {
      double c1 = cast ? step_stream(a, X * (xb + ab)) : 0;
      double xf = step_stream(a, X * (2 * xb + ab)) + step_stream(a, 3 * X * xb) + c1;
      double xg = step_stream(a, 3 * X * xb) + step_stream(a, X * (2 * xb + ab)) +
                  2 * step_stream(a, 3 * X * xb) + 2 * c1;
      step_add(a, COST_KC_ELEMENTWISE, COST_COMP_OTHER, PH_FB, xf + xg, 6 + 3 * cast, 6 + 3 * cast);
    } else { /* fused frameworks (HugeCTR's MultiCrossLayer): 3 passes */
      step_add(a, COST_KC_ELEMENTWISE, COST_COMP_OTHER, PH_FB, step_stream(a, 3 * X * ab) * 3, 3,
               3);
    }
    *params += mc.params;
    saved += 2 * X * xb + (cast ? X * ab : 0);
  }
  return saved;
}

/* count identical linear layers: one priced, its kernels, host ops,
 * parameters and saved bytes added count - 1 more times (a block of 4096
 * copies costs one layer's pricing, not 4096). */
static void linear_times(step_acc *a, const cost_recipe *r, int64_t B, int64_t in, int64_t out,
                         int ck_full, int64_t count, mlp_acc *m) {
  cost_step_result *res = a->r, before = *res;
  double gpu[PH__COUNT], host[PH__COUNT];
  mlp_acc one = {0};
  memcpy(gpu, a->gpu, sizeof gpu);
  memcpy(host, a->host, sizeof host);
  linear(a, r, B, in, out, 1, 1, ck_full, &one);
  double more = (double)(count - 1);
  for (int p = 0; p < PH__COUNT; p++) {
    a->gpu[p] += more * (a->gpu[p] - gpu[p]);
    a->host[p] += more * (a->host[p] - host[p]);
  }
  for (int k = 0; k < COST_KC__COUNT; k++) {
    res->class_ms[k] += more * (res->class_ms[k] - before.class_ms[k]);
    res->class_kernels[k] += (count - 1) * (res->class_kernels[k] - before.class_kernels[k]);
  }
  for (int c = 0; c < COST_COMP__COUNT; c++)
    res->comp_ms[c] += more * (res->comp_ms[c] - before.comp_ms[c]);
  res->kernels += (count - 1) * (res->kernels - before.kernels);
  m->saved += (double)count * one.saved;
  m->params += (double)count * one.params;
  m->fwd_s += (double)count * one.fwd_s;
  m->bwd_s += (double)count * one.bwd_s;
}

void cost_dense_block_square(const cost_dense_block *b, int64_t *w, int64_t *rows) {
  double active = fmin(b->params, b->flops_per_sample / 2.0);
  /* a multiple of 64: aligned operands, whole tiles (an odd width would be
   * priced on cuBLAS's unaligned kernels, docs/kernels.md) */
  double wd = fmax(64.0, round(sqrt(fmax(active, 1.0)) / 64.0) * 64.0);
  *w = (int64_t)wd;
  *rows = (int64_t)fmax(1.0, round(b->flops_per_sample / (2.0 * wd * wd)));
}

void cost_dense_block_size(const cost_dense_block *b, double *params, double *flops,
                           double *layers) {
  *params = b->n_gemms ? 0 : b->params;
  *flops = b->n_gemms ? 0 : b->flops_per_sample;
  *layers = b->n_gemms ? 0 : 1;
  for (size_t i = 0; i < b->n_gemms && i < COST_STEP_MAX_BLOCK_GEMMS; i++) {
    const cost_block_gemm *g = &b->gemms[i];
    double c = (double)g->count;
    *params += c * ((double)g->in * (double)g->out + (double)g->out);
    *flops += 2.0 * c * (double)g->rows * (double)g->in * (double)g->out;
    *layers += c;
  }
}

/* The dense block between the interaction and the top MLP: each GEMM a
 * linear layer (forward, wgrad, dgrad, bias and activation kernels, as the
 * MLPs') over rows x B rows. An opaque block (params and FLOPs only) is one
 * square layer with those figures: GEMM efficiency is highest on large
 * square shapes, so it is the fast end of what such a block can take (the
 * answer's dense_block.priced_as says so). Its parameters are counted by
 * cost_dense_block_size (the opaque form: its own, not the square layer's),
 * not from m->params. */
static void dense_block(step_acc *a, const cost_dlrm *d, const cost_recipe *r, int64_t B,
                        int ck_full, mlp_acc *m) {
  const cost_dense_block *b = &d->block;
  if (b->n_gemms == 0) {
    int64_t w, rows;
    cost_dense_block_square(b, &w, &rows);
    step_tag(a, "block (square %lld x %lld, %lld rows a sample)", (long long)w, (long long)w,
             (long long)rows);
    linear(a, r, B * rows, w, w, 1, 1, ck_full, m);
    return;
  }
  for (size_t i = 0; i < b->n_gemms && i < COST_STEP_MAX_BLOCK_GEMMS; i++) {
    step_tag(a, "block[%zu]", i);
    linear_times(a, r, B * b->gemms[i].rows, b->gemms[i].in, b->gemms[i].out, ck_full,
                 b->gemms[i].count, m);
  }
}

int cost_step_host_table_ms(const cost_hw *hw, const cost_dlrm *d, const cost_recipe *r,
                            int placement, int64_t rows, int64_t dim, int64_t bags, int64_t pooling,
                            double *extra_ms) {
  if (!hw || !d || !r || !extra_ms || rows <= 0 || dim <= 0 || bags <= 0 || pooling <= 0 ||
      (placement != COST_PLACE_HOST && placement != COST_PLACE_UVM))
    return COST_EINVAL;
  double prof[COST_SP__COUNT];
  cost_step_result res;
  step_acc a;
  emb_load h, g;
  step_profile_resolve(hw, prof);
  step_acc_init(&a, hw, prof, r->framework, &res);
  /* the step's host footprint: this shard's rows, gradient values, clone */
  a.host_ws = 3.0 * (double)bags * (double)pooling * (double)dim *
              cost_dtype_bytes((cost_dtype)r->embedding_precision);
  table_load(&a, d, r, rows, dim, bags, pooling, placement, &h);
  table_load(&a, d, r, rows, dim, bags, pooling, COST_PLACE_HBM, &g);
  if (a.err) return a.err;
  /* GPU time in a whole DLRM step: step_dlrm_gpu_scale, as step_add does */
  double gs = prof[COST_SP_DLRM_GPU_SCALE];
  double host = h.host_s + gs * (h.t_f + h.t_b + h.t_opt), hbm = gs * (g.t_f + g.t_b + g.t_opt);
  *extra_ms = fmax(0.0, host - hbm) * 1e3;
  return isfinite(*extra_ms) ? 0 : COST_EINVAL;
}

int cost_uvm_bag_p(const cost_hw *hw, const double *prof, const cost_uvm_sample *u, double *fwd_ms,
                   double *fwd_bwd_ms) {
  if (!hw || !prof || !u || u->rows <= 0 || u->dim <= 0 || u->batch <= 0 || u->pooling <= 0 ||
      u->rows > ((int64_t)1 << 40) || u->dim > (1 << 20) || u->batch > ((int64_t)1 << 32) ||
      u->pooling > (1 << 20) || u->dtype < 0 || u->dtype >= COST_DT__COUNT)
    return COST_EINVAL;
  cost_step_result res;
  step_acc a;
  emb_load o;
  double alone[COST_SP__COUNT]; /* the op alone: no whole-step link scale */
  memcpy(alone, prof, sizeof alone);
  alone[COST_SP_UVM_LINK_SCALE] = 1.0;
  step_acc_init(&a, hw, alone, COST_FW_PYTORCH_EAGER, &res);
  memset(&o, 0, sizeof o);
  double rb = (double)u->dim * cost_dtype_bytes((cost_dtype)u->dtype);
  uvm_load(&a, u->rows, u->dim, u->batch, u->pooling, rb, &o);
  if (a.err) return a.err;
  /* timed alone with CUDA events: the GPU also waits for the host to issue
   * the ops (3 forward, 11 in all, the sync inside) */
  double f = fmax(o.t_f, 3.0 * a.op_s);
  double fb = fmax(o.t_f + o.t_b, (double)o.ops_fb * a.op_s + o.host_s);
  if (fwd_ms) *fwd_ms = f * 1e3;
  if (fwd_bwd_ms) *fwd_bwd_ms = fb * 1e3;
  return 0;
}

int step_dlrm(step_acc *a, const cost_dlrm *d, const cost_recipe *r) {
  cost_step_result *res = a->r;
  int64_t G = r->gpus, B = r->batch_per_gpu;
  int dt = r->precision, eager = r->framework == COST_FW_PYTORCH_EAGER, deager = dense_eager(r);
  double ab = cost_dtype_bytes((cost_dtype)dt);
  double eb = cost_dtype_bytes((cost_dtype)r->embedding_precision), ob = exch_bytes(r);
  int cast = deager && dt != COST_DT_FP32 && dt != COST_DT_FP8;
  int hctr = r->framework == COST_FW_HUGECTR;
  emb_plan pl;
  mlp_acc mb = {0}, mt = {0};
  int rc;
  a->gpu_scale = a->prof[COST_SP_DLRM_GPU_SCALE]; /* whole-step kernels: cost_step_val_fit */
  if (d->n_tables == 0 || !d->tables || d->n_bottom < 1 || d->n_top < 1 ||
      d->n_bottom > COST_STEP_MAX_LAYERS || d->n_top > COST_STEP_MAX_LAYERS ||
      d->dense_features < 1)
    return COST_EINVAL;
  /* host footprint of a step: rows gathered, the sparse-gradient values and
   * their clone, per host-placed table (the LLC reuse of the SGD update) */
  a->host_ws = 0;
  for (size_t i = 0; i < d->n_tables; i++) {
    const cost_table *t = &d->tables[i];
    int pc = t->placement >= 0 ? t->placement : r->placement;
    if (pc != COST_PLACE_HOST) continue;
    a->host_ws += 3.0 * (double)B * (double)t->pooling * (double)step_pad(t->dim, r->pad_to) * eb *
                  (double)(t->count > 0 ? t->count : 1);
  }
  if ((rc = plan_tables(a, d, r, &pl))) return rc;
  if (a->err) return a->err;
  /* No synchronization inside an eager step with sparse SGD: it adds the
   * uncoalesced gradient with index_add_, and torch.profiler saw no
   * cudaStreamSynchronize/cudaMemcpy in HBM-only steps
   * (data/measurements/h200-probe/step_shared.json, "cuda_api"), so the
   * host runs ahead through the whole step. Adagrad, row-wise Adagrad and
   * Adam first coalesce each table's sparse gradient, and coalesce reads
   * the number of unique indices back to size its output: 130
   * cudaStreamSynchronize and 52 device-to-host copies per step over 26
   * tables, none with SGD (torch.profiler, the fitting half's
   * dcn-fp32-r128-b4096 and its sgd variant in data/measurements/
   * h100-dcn-mlperf/dcn_profile.json). The host then waits for the
   * forward and backward before the first table's update and issues the
   * updates at its own pace: the optimizer phase runs serially. */
  a->sync_opt = eager && d->sparse_optimizer != COST_OPT_SGD;

  /* bottom MLP */
  int ck_full = r->checkpointing == COST_CKPT_FULL,
      ck_sel = r->checkpointing == COST_CKPT_SELECTIVE;
  int64_t in = d->dense_features;
  double gpu_before_bottom = a->gpu[PH_FB];
  for (int i = 0; i < d->n_bottom; i++) {
    int64_t out = step_pad(d->bottom[i], r->pad_to);
    step_tag(a, "bottom[%d]", i);
    linear(a, r, B, in, out, 1, i > 0, ck_full, &mb);
    in = out;
  }
  int64_t xdim = in;
  double bottom_s = a->gpu[PH_FB] - gpu_before_bottom;
  double data_bytes = (double)B * ((double)d->dense_features * 4.0 + 4.0) + pl.even.idx_bytes +
                      pl.busiest.idx_bytes;
  double bottom_saved = mb.saved + (cast ? (double)B * (double)d->dense_features * ab : 0);
  if (cast) step_add(a, COST_KC_ELEMENTWISE, COST_COMP_OTHER, PH_FB, 2 * step_stream(a, 0), 2, 2);

  /* embeddings: lookups and their backward (GPU), host-placed work */
  emb_load E = pl.even;
  load_add(&E, &pl.busiest, 1.0);
  /* eager: ~3 of each table's ops are forward, the rest backward; fused:
   * one TBE kernel per pass */
  int64_t fwd_ops = eager ? (int64_t)E.n_local * 3 : 1;
  if (eager && fwd_ops > E.ops_fb) fwd_ops = E.ops_fb;
  step_add(a, COST_KC_EMB_FWD, COST_COMP_EMBEDDING, PH_FB, E.t_f + (eager ? 0 : a->launch_s),
           eager ? E.k_f : 1, fwd_ops);
  step_add(a, COST_KC_EMB_BWD, COST_COMP_EMBEDDING, PH_FB, E.t_b, eager ? E.k_b : 1,
           eager ? E.ops_fb - fwd_ops : 1);
  if (E.t_opt > 0 || E.ops_opt)
    step_add(a, COST_KC_SPARSE_OPT, COST_COMP_OPTIMIZER, PH_OPT, E.t_opt, E.k_opt, E.ops_opt);
  step_host_serial(a, E.host_s);
  if (!eager) step_add(a, COST_KC_EMB_BWD, COST_COMP_EMBEDDING, PH_FB, 3 * a->launch_s, 3, 3);
  /* fused_triton's backward: the bag ids, the global row ids (3 small
   * kernels), torch.sort's radix sort (~4 kernels) before the update */
  if (r->framework == COST_FW_FUSED_TRITON) {
    /* its forward and backward are one Triton launch each, priced at the
     * host's measured launch time where the recipe gives one */
    if (a->triton_s > 0) step_host(a, PH_FB, 2 * (a->triton_s - a->op_s));
    step_add(a, COST_KC_EMB_BWD, COST_COMP_EMBEDDING, PH_FB, 7 * a->launch_s, 7, 7);
    /* its forward wrapper (validate/gpu/fused_tbe.py build): the indices'
     * cat, one torch.full of bag lengths per table, their cat, the offsets'
     * zeros, cumsum and store, the output's cast and split */
    int64_t wrap = E.n_local + 6;
    step_add(a, COST_KC_EMB_FWD, COST_COMP_EMBEDDING, PH_FB, (double)wrap * a->launch_s, wrap,
             wrap);
    step_fused_glue(a, r, B, E.n_local, (double)pl.interaction_dim);
    step_fused_lead(a, r, d->n_bottom, E.n_local, mb.fwd_s + E.t_f + a->launch_s);
  }

  /* communication of the embeddings (on the critical path). HugeCTR runs
   * the exchange on its own stream beside the bottom MLP, forward and
   * backward (HugeCTR v3.1 release notes, "Compute-communication overlap -
   * Generalized embedding and bottom MLP overlap"; train.py:
   * train_intra_iteration_overlap=True), so only what outlasts the bottom
   * MLP is exposed there. */
  if (G > 1) {
    int64_t gn = r->gpus_per_node > 0 && r->gpus_per_node < G ? r->gpus_per_node : G;
    double hide = hctr ? bottom_s : 0, x;
    double t = step_coll(a, COST_COLL_ALLTOALL, pl.a2a_bytes, G, r->gpus_per_node);
    double tr = step_coll(a, COST_COLL_ALLTOALL, pl.rail_bytes, (G + gn - 1) / gn, 1);
    x = 2 * (t + tr);
    step_comm(a, COST_KC_ALLTOALL, x, x - hide, t + tr > 0 ? 2 : 0);
    hide = fmax(0.0, hide - x);
    t = step_coll(a, COST_COLL_REDUCESCATTER, pl.rs_bytes, G, r->gpus_per_node);
    double t2 = step_coll(a, COST_COLL_ALLGATHER, pl.rs_bytes, G, r->gpus_per_node);
    t += step_coll(a, COST_COLL_REDUCESCATTER, pl.rs_node_bytes, gn, gn);
    t2 += step_coll(a, COST_COLL_ALLGATHER, pl.rs_node_bytes, gn, gn);
    step_comm(a, COST_KC_ALLGATHER_RS, t + t2, t + t2 - hide, t > 0 ? 2 : 0);
    /* HugeCTR all-reduces the data-parallel tables' gradients in one call
     * with the dense ones (grouped_all_reduce=True: AllreduceStrategy
     * GroupDense), priced with them below */
    if (!hctr) {
      t = step_coll(a, COST_COLL_ALLREDUCE, pl.dp_grad_bytes, G, r->gpus_per_node);
      step_comm(a, COST_KC_ALLREDUCE, t, t, t > 0 ? 1 : 0);
    }
  }

  /* interaction */
  int64_t F = 1 + pl.n_tables, width, D = pl.dim0;
  double inter_saved = 0, inter_bwd_bytes = 0,
         emb_out = (double)B * (double)pl.interaction_dim * ob;
  if (d->interaction == COST_INTER_DOT) {
    if (D != xdim) return COST_ESTEP_SHAPE;
    double pairs = (double)F * (double)(F - 1) / 2.0;
    width = (int64_t)pairs + D;
    double T = (double)B * (double)F * (double)D;
    double tb = ob > ab ? ob : ab; /* stack promotes to the wider type */
    double fw = step_stream(a, 2 * T * tb) + (cast ? step_stream(a, T * (tb + ab)) : 0) +
                step_stream(a, 2 * (double)B * pairs * ab) +
                step_stream(a, 2 * (double)B * width * ab);
    step_tag(a, "interaction");
    double bmm = small_bmm(a, "bmm", F, F, D, B, dt, "nt");
    double bw_bmm = 2 * small_bmm(a, "bmm bwd", F, D, F, B, dt, "nn");
    /* backward of Z[:, li, lj]: zeros + index_put(accumulate=True), which
     * sorts the B*pairs linear indices in eager PyTorch */
    double sort = deager ? (double)B * pairs * a->prof[COST_SP_INDEX_SORT_NS] * 1e-9 : 0;
    double bw = step_stream(a, (double)B * F * F * ab) +
                step_stream(a, 3 * (double)B * pairs * ab) + sort + step_stream(a, 3 * T * ab) +
                (cast ? step_stream(a, T * (tb + ab)) : 0);
    int nk_f = 4 + cast, nk_b = (deager ? 8 : 4) + cast;
    step_add(a, COST_KC_INTERACTION, COST_COMP_GEMM, PH_FB, bmm * (ck_sel ? 2 : 1) + bw_bmm, 3, 3);
    step_add(a, COST_KC_INTERACTION, COST_COMP_OTHER, PH_FB, fw + bw, nk_f + nk_b, nk_f + nk_b);
    /* eager locals alive to the end of the forward: T (and its cast), Z */
    inter_saved = T * tb + (cast && !ck_sel ? T * ab : 0) + (ck_sel ? 0 : (double)B * F * F * ab) +
                  (double)B * width * ab;
    inter_bwd_bytes = T * tb;
    if (!deager) inter_saved = T * ab + (double)B * width * ab;
  } else {
    /* DCN-style cross layers over x0 = [x, embeddings] (Wang et al., "DCN
     * V2", 2021): x_{l+1} = x0 * (W x_l + b) + x_l */
    int64_t dd = xdim + pl.interaction_dim;
    width = dd;
    double X = (double)B * (double)dd;
    /* x0 = cat([x, embs]): cat promotes to the widest input type (PyTorch
     * autocast docs, "CUDA Ops that can autocast ... promote to the widest
     * input type": cat), so under autocast with fp32 embeddings x0 and
     * every R are fp32 and only the layers' GEMMs run in bf16 */
    double xb = deager && ob > ab ? ob : ab;
    step_add(a, COST_KC_ELEMENTWISE, COST_COMP_OTHER, PH_FB, step_stream(a, 2 * X * xb) * 2, 2, 2);
    if (d->interaction == COST_INTER_DCN)
      inter_saved += dcn_layers(a, d, r, B, dd, ab, xb, ck_full, &mb.params);
    inter_saved += X * xb;
    inter_bwd_bytes = X * xb;
  }
  int64_t top_in = width;
  if (d->pad_interaction_to > 0) {
    if (d->pad_interaction_to < width) return COST_ESTEP_SHAPE;
    top_in = d->pad_interaction_to;
    step_add(a, COST_KC_ELEMENTWISE, COST_COMP_OTHER, PH_FB,
             2 * step_stream(a, 2 * (double)B * top_in * ab), 2, 2);
    inter_saved += (double)B * top_in * ab;
  }

  /* dense block, top MLP, loss */
  mlp_acc mk = {0};
  double block_params = 0, block_flops = 0, block_layers = 0;
  if (d->block.out > 0) {
    cost_dense_block_size(&d->block, &block_params, &block_flops, &block_layers);
    dense_block(a, d, r, B, ck_full, &mk);
    top_in = d->block.out;
  }
  in = top_in;
  for (int i = 0; i < d->n_top; i++) {
    int last = i == d->n_top - 1;
    int64_t out = last ? d->top[i] : step_pad(d->top[i], r->pad_to);
    step_tag(a, "top[%d]", i);
    linear(a, r, B, in, out, !last, 1, ck_full, &mt);
    in = out;
  }
  step_add(a, COST_KC_ELEMENTWISE, COST_COMP_OTHER, PH_FB, 8 * step_stream(a, (double)B * 8), 8, 8);
  if (cast) {
    /* autocast re-dispatches every op of the forward region through its
     * cast policy (and the weight-cast cache): about one more op's host
     * time per forward op -- the bf16 vs fp32 plateau at small batch in
     * dlrm_step.json (7.1 vs 5.9 ms) is ~130 forward ops x 8 us. */
    double region_ops = 3.0 * E.n_local + 2.0 * (d->n_bottom + d->n_top + block_layers) + 8.0;
    step_host(a, PH_FB, region_ops * a->op_s);
  }

  /* dense optimizer (+ DDP/FSDP communication) */
  double P = mb.params + mt.params + block_params;
  double shard = r->dense_parallel == COST_DP_FSDP ? (double)G : 1.0;
  double ob_opt = d->dense_optimizer == COST_OPT_ADAM  ? 28.0
                  : d->dense_optimizer == COST_OPT_SGD ? 12.0
                                                       : 20.0;
  double st_opt = d->dense_optimizer == COST_OPT_ADAM  ? 8.0
                  : d->dense_optimizer == COST_OPT_SGD ? 0.0
                                                       : 4.0;
  step_add(a, COST_KC_DENSE_OPT, COST_COMP_OPTIMIZER, PH_OPT,
           2 * step_stream(a, P / shard * ob_opt / 2), 2, 2);
  if (G > 1) {
    double bwd_dense = res->class_ms[COST_KC_GEMM_BWD] * 1e-3;
    if (r->dense_parallel == COST_DP_FSDP) {
      double ag = step_coll(a, COST_COLL_ALLGATHER, P * ab, G, r->gpus_per_node);
      double rs = step_coll(a, COST_COLL_REDUCESCATTER, P * 4, G, r->gpus_per_node);
      step_comm(a, COST_KC_ALLGATHER_RS, 2 * ag + rs, fmax(2 * ag + rs - bwd_dense, ag), 3);
      if (hctr) { /* the data-parallel tables' gradients, not grouped with sharded ones */
        double t = step_coll(a, COST_COLL_ALLREDUCE, pl.dp_grad_bytes, G, r->gpus_per_node);
        step_comm(a, COST_KC_ALLREDUCE, t, t, t > 0 ? 1 : 0);
      }
    } else if (hctr) {
      /* one grouped all-reduce of every dense and data-parallel-table
       * gradient, in half under mixed precision (GroupedExchangeWgrad),
       * issued when the backward is done: exposed */
      double ar = step_coll(a, COST_COLL_ALLREDUCE, P * wgrad_bytes(r) + pl.dp_grad_bytes, G,
                            r->gpus_per_node);
      step_comm(a, COST_KC_ALLREDUCE, ar, ar, 1);
    } else {
      /* DDP buckets (25 MB) overlap the backward; the last bucket is exposed */
      double ar = step_coll(a, COST_COLL_ALLREDUCE, P * 4, G, r->gpus_per_node);
      double last = ar * fmin(1.0, 25e6 / fmax(P * 4, 1));
      step_comm(a, COST_KC_ALLREDUCE, ar, fmax(ar - bwd_dense, last), (int64_t)ceil(P * 4 / 25e6));
    }
  }

  /* memory at the peak */
  double ws = a->prof[COST_SP_WORKSPACE_MB] * 1048576.0;
  double w_dense = P / shard * 4.0 + (cast ? P * ab : 0);
  double g_dense = P / shard * 4.0 + (shard > 1 ? P * 4.0 / 1.0 * 0 : 0);
  double acts_common = data_bytes + bottom_saved + E.saved_bytes;
  double fwd_end = acts_common + emb_out * (eager ? 1 : 0) + inter_saved + mk.saved + mt.saved +
                   (double)B * 4 * 2;
  double mlp_ckpt =
      ck_full ? (mb.saved + mk.saved + mt.saved) - (double)B * ((double)xdim + top_in) * ab : 0;
  fwd_end -= mlp_ckpt > 0 ? mlp_ckpt : 0;
  double bwd_grads = (eager ? E.sparse_grad_bytes : 0) + inter_bwd_bytes + g_dense;
  double bwd = acts_common + bwd_grads + (eager ? 0 : E.lookups * 48.0);
  res->peak_phase = bwd > fwd_end;
  res->mem_bytes[COST_MEM_WEIGHTS] = w_dense;
  res->mem_bytes[COST_MEM_OPTIMIZER_STATE] = P / shard * st_opt;
  res->mem_bytes[COST_MEM_EMBEDDINGS] = E.table_bytes + E.state_bytes;
  res->mem_bytes[COST_MEM_WORKSPACE] = ws + (eager ? 0 : E.lookups * 48.0 * res->peak_phase);
  if (res->peak_phase) {
    res->mem_bytes[COST_MEM_GRADIENTS] = bwd_grads;
    res->mem_bytes[COST_MEM_ACTIVATIONS] = acts_common;
  } else {
    res->mem_bytes[COST_MEM_ACTIVATIONS] = fwd_end;
  }
  for (int u = 0; u < COST_MEM__COUNT; u++)
    if (!(res->mem_bytes[u] < BYTE_LIMIT)) return COST_ESTEP_OVERFLOW;

  /* model FLOPs: 3x the forward GEMMs (fwd + dgrad + wgrad) + interaction */
  res->model_flops =
      3.0 * 2.0 * (double)B * (mb.params + mt.params) + 3.0 * (double)B * block_flops;
  if (d->interaction == COST_INTER_DOT)
    res->model_flops += 3.0 * 2.0 * (double)B * (double)F * (double)F * (double)D;
  return 0;
}
