/* costmodel/kernel internals shared by kernel.c and kernel_space.c: the
 * per-architecture limits the tile-config model reads. Not for use outside
 * costmodel/. */
#ifndef CDPLAN_COSTMODEL_KERNEL_INT_H
#define CDPLAN_COSTMODEL_KERNEL_INT_H

#include "costmodel/kernel.h"

typedef struct {
  int amd;              /* CDNA: 64-thread wavefronts, LDS, AGPRs */
  int warp;             /* threads per warp / wavefront */
  int max_regs;         /* registers per thread the compiler may give */
  int max_warps_unit;   /* resident warps per SM/CU */
  double smem_block;    /* shared memory / LDS one block may use, bytes */
  double smem_reserved; /* per resident block (NVIDIA: 1 KiB) */
  int mma_m;            /* M of the full-rate matrix instruction per block */
} cost_karch;

/* ceil(x / y) for positive y: tiles along a dimension, K steps, waves. */
static inline int64_t cost_kcdiv(int64_t x, int64_t y) { return (x + y - 1) / y; }

/* Limits for hw's arch; COST_ENOHW for an arch without a kernel model or a
 * descriptor without compute units, clock, smem, registers or HBM. */
int cost_karch_get(const cost_hw *hw, cost_karch *a);
/* Shared-memory / LDS pipeline buffers a config allocates. */
int cost_kstage_buffers(const cost_karch *a, const cost_kcfg *c);
int cost_ksync_tile(const cost_karch *a, const cost_kcfg *c);
/* The leading (contiguous) dimension of A resp. B under p's layout: nn
 * reads A[M,K] along K and B[K,N] along N; 't' stores the operand
 * transposed (A along M, B along K). */
int64_t cost_klead_a(const cost_kproblem *p);
/* A is read along M (layout t?), which M = 1 is not (cost_klead_a). */
int cost_ka_mmajor(const cost_kproblem *p);
int64_t cost_klead_b(const cost_kproblem *p);

#endif
