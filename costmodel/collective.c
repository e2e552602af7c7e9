/* collective.c: alpha-beta times of NCCL-style collectives.
 *
 * Algorithms and their costs (Thakur, Rabenseifner, Gropp, "Optimization
 * of Collective Communication Operations in MPICH", IJHPCA 2005; Patarasuk
 * & Yuan, "Bandwidth optimal all-reduce algorithms", JPDC 2009):
 *   allreduce  ring: 2(p-1) a + 2(p-1)/p n/B   tree/rec.doubling: 2 lg p a + 2 n/B
 *   allgather, reducescatter  ring: (p-1) a + (p-1)/p n/B
 *                             rec. doubling/halving: lg p a + (p-1)/p n/B
 *   alltoall  pairwise: (p-1) a + (p-1)/p n/B   Bruck: lg p a + lg p n/(2B)
 * The cheaper algorithm for the size is taken (NCCL's tuner does the same
 * between ring and tree). B = link bandwidth per GPU per direction x the
 * bus efficiency: NCCL reports "bus bandwidth" normalized exactly by these
 * (p-1)/p factors (nccl-tests doc/PERFORMANCE.md), and measured bus
 * bandwidth is ~80% of the link peak. Inside the scale-up domain the link
 * is NVLink/xGMI (scaleup_bw); across nodes the per-GPU NIC (scaleout_bw).
 */
#include <math.h>

#include "costmodel/costmodel_int.h"

int cost_collective_p(const cost_hw *hw, const double *p, const cost_collective_op *op,
                      cost_result *out) {
  cost_result_clear(out);
  if (!hw || !op) return COST_EINVAL;
  if (op->kind < 0 || op->kind >= COST_COLL__COUNT || op->scope < 0 ||
      op->scope >= COST_SCOPE__COUNT || op->ranks < 1 || op->ranks > (1 << 24) ||
      !(op->bytes >= 0) || !isfinite(op->bytes))
    return COST_EINVAL;
  if (op->ranks == 1 || op->bytes == 0) {
    cost_result_finish(out, 0, COST_BOUND_NETWORK, 0, 0);
    cost_term_add(out, "ranks", (double)op->ranks);
    return 0;
  }
  int cluster = op->scope == COST_SCOPE_CLUSTER;
  double link = cluster ? hw->scaleout_bw : hw->scaleup_bw;
  if (!(link > 0)) return COST_ENOHW;
  double B = link * p[P_COLL_BUS_EFF];
  double a = (cluster ? p[P_COLL_ALPHA_CLUSTER_US] : p[P_COLL_ALPHA_NODE_US]) * 1e-6;
  double P = (double)op->ranks, n = op->bytes, lg = ceil(log2(P)), f = (P - 1) / P;
  double t_ring, t_tree, moved;
  switch (op->kind) {
  case COST_COLL_ALLREDUCE:
    t_ring = 2 * (P - 1) * a + 2 * f * n / B;
    t_tree = 2 * lg * a + 2 * n / B;
    moved = 2 * f * n;
    break;
  case COST_COLL_ALLGATHER:
  case COST_COLL_REDUCESCATTER:
    t_ring = (P - 1) * a + f * n / B;
    t_tree = lg * a + f * n / B + (fmod(P, 2) != 0 ? a : 0); /* non power of two: one extra step */
    moved = f * n;
    break;
  default: /* alltoall */
    t_ring = (P - 1) * a + f * n / B;
    t_tree = lg * a + lg * n / (2 * B);
    moved = f * n;
    break;
  }
  double t = fmin(t_ring, t_tree);
  cost_result_finish(out, t, COST_BOUND_NETWORK, 0, moved);
  cost_term_add(out, "alpha_ms", a * 1e3);
  cost_term_add(out, "ring_ms", t_ring * 1e3);
  cost_term_add(out, "tree_ms", t_tree * 1e3);
  cost_term_add(out, "bus_bw_bytes_per_s", B);
  cost_term_add(out, "ranks", P);
  cost_term_add(out, "algorithm_tree", t == t_tree && t_tree < t_ring ? 1 : 0);
  return 0;
}

int cost_collective(const cost_hw *hw, const cost_collective_op *op, cost_result *out) {
  double p[P__COUNT];
  if (!hw) {
    cost_result_clear(out);
    return COST_EINVAL;
  }
  cost_params_resolve(hw, p);
  return cost_collective_p(hw, p, op, out);
}
