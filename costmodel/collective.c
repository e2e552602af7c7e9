/* collective.c: times of NCCL/RCCL collectives over a two-level topology:
 * g ranks per scale-up domain (a node: NVSwitch or an xGMI mesh), N
 * domains joined by per-GPU NICs (rail-optimised: GPU i of every node on
 * the same rail).
 *
 * Cost of one collective = bandwidth term + latency term.
 * Bandwidth, as NCCL's "bus bandwidth" normalises it (nccl-tests
 * doc/PERFORMANCE.md: busbw = algbw * 2(p-1)/p for all-reduce, (p-1)/p
 * for all-gather, reduce-scatter and all-to-all). Per GPU:
 *   inside one domain   B_up = scaleup_bw * e_up (switch), or
 *                       (g-1) * link_bw * e_up (mesh: g GPUs of a fully
 *                       connected mesh use g-1 point-to-point links; AMD
 *                       Instinct MI300X data sheet: 7 xGMI links per GPU);
 *   across domains      B_nic = scaleout_bw * e_net, one NIC per GPU.
 * Across domains the collective runs hierarchically, the phases pipelined
 * (NCCL's and RCCL's multi-node rings and NVLS trees overlap the node and
 * network parts), so the slower phase sets the time:
 *   all-reduce  max(intra: 2(g-1)/g n / B_up, inter: 2(N-1)/N (n/g) / B_nic)
 *               -- reduce-scatter in the node, all-reduce of each GPU's
 *               n/g over its own NIC, all-gather in the node;
 *               in-switch reduction (NVLS) makes the node part n / (B e_nvls):
 *               the switch reduces, each GPU moves n once;
 *   all-gather, reduce-scatter  max((g-1)/g n / B_up, (N-1)/N (n/g) / B_nic)
 *   all-to-all  the (p-g)/p of each GPU's data that leaves the node goes
 *               through its own NIC while (g-1)/p stays on the scale-up
 *               links: max((p-g)/p n / B_nic, (g-1)/p n / B_up).
 * Checked against published nccl-tests/rccl-tests tables
 * (data/measurements/published/collectives.json, bench/published_accuracy):
 * e.g. 8 nodes of 8 MI325X reach 350 GB/s bus bandwidth against 319 in one
 * node, which the node phase's 2(g-1)/g (not 2(p-1)/p) share explains, and
 * 2 nodes of 8 H100 over 8 x 200 Gb/s NICs 339 GB/s, the network phase.
 * Latency (Thakur, Rabenseifner, Gropp, IJHPCA 2005): a ring takes p-1
 * steps (2(p-1) for all-reduce), a tree log2 p (2 log2 p); across nodes
 * the steps inside a domain cost alpha_node and those between domains
 * alpha_cluster; the cheaper of ring and tree is taken, as NCCL's tuner
 * does for small messages.
 * The answer's terms say which links and algorithm were used (nodes,
 * gpus_per_node, the per-GPU bandwidths, the algorithm code), so a
 * multi-node request is never silently priced at single-node speed.
 */
#include <math.h>

#include "costmodel/costmodel_int.h"

enum { ALG_RING = 0, ALG_TREE, ALG_NVLS, ALG_HIER, ALG_PAIRWISE };

static const char *const alg_text[] = {
    [ALG_RING] = "ring over the scale-up links",
    [ALG_TREE] = "tree (latency-bound size)",
    [ALG_NVLS] = "in-switch reduction (NVLS)",
    [ALG_HIER] = "hierarchical: scale-up links inside nodes, one NIC per GPU across",
    [ALG_PAIRWISE] = "pairwise exchange",
};

/* Ranks per domain and domains for op on hw. */
static void shape(const cost_hw *hw, const cost_collective_op *op, double *g, double *N) {
  double P = (double)op->ranks, d = hw->scaleup_domain > 0 ? hw->scaleup_domain : 8;
  double gpn = op->gpus_per_node > 0          ? (double)op->gpus_per_node
               : op->scope == COST_SCOPE_NODE ? P
                                              : d;
  *g = fmin(gpn, P);
  *N = ceil(P / *g);
}

/* Per-GPU bandwidth inside a domain of g GPUs (bytes/s, achieved). */
static double up_bw(const cost_hw *hw, const double *p, double g) {
  if (!(hw->scaleup_bw > 0)) return 0;
  if (!hw->scaleup_mesh) return hw->scaleup_bw * p[P_COLL_BUS_EFF];
  double d = hw->scaleup_domain > 1 ? hw->scaleup_domain : 8;
  double link = hw->scaleup_link_bw > 0 ? hw->scaleup_link_bw : hw->scaleup_bw / (d - 1);
  return fmin(g - 1, d - 1) * link * p[P_COLL_BUS_EFF];
}

int cost_collective_p(const cost_hw *hw, const double *p, const cost_collective_op *op,
                      cost_result *out) {
  cost_result_clear(out);
  if (!hw || !op) return COST_EINVAL;
  if (op->kind < 0 || op->kind >= COST_COLL__COUNT || op->scope < 0 ||
      op->scope >= COST_SCOPE__COUNT || op->ranks < 1 || op->ranks > (1 << 24) ||
      op->gpus_per_node < 0 || op->gpus_per_node > (1 << 24) || !(op->bytes >= 0) ||
      !isfinite(op->bytes))
    return COST_EINVAL;
  if (op->ranks == 1 || op->bytes == 0) {
    cost_result_finish(out, 0, COST_BOUND_NETWORK, 0, 0);
    cost_term_add(out, "ranks", (double)op->ranks);
    return 0;
  }
  double P = (double)op->ranks, n = op->bytes, g, N;
  shape(hw, op, &g, &N);
  double Bup = g > 1 ? up_bw(hw, p, g) : INFINITY;
  double Bnic = N > 1 ? hw->scaleout_bw * p[P_COLL_NET_EFF] : INFINITY;
  if (!(Bup > 0) || !(Bnic > 0)) return COST_ENOHW;
  double an = p[P_COLL_ALPHA_NODE_US] * 1e-6, ac = p[P_COLL_ALPHA_CLUSTER_US] * 1e-6;
  /* Steps: ring and tree, inside the domains and between them. */
  double ring_steps = (g - 1) * an + (N - 1) * ac;
  double tree_steps = (g > 1 ? ceil(log2(g)) * an : 0) + (N > 1 ? ceil(log2(N)) * ac : 0);
  double f = (P - 1) / P, fg = (g - 1) / g, fN = (N - 1) / N, t_up, t_net, bw_t, moved;
  double lat_mult = 1;
  int alg = N > 1 ? ALG_HIER : ALG_RING;
  switch (op->kind) {
  case COST_COLL_ALLREDUCE:
    t_up = 2 * fg * n / Bup;
    if (hw->in_switch_reduction && !hw->scaleup_mesh && g > 2) {
      double t_nvls = n / (hw->scaleup_bw * p[P_COLL_NVLS_EFF]);
      if (t_nvls < t_up) {
        t_up = t_nvls;
        if (N == 1) alg = ALG_NVLS;
      }
    }
    t_net = 2 * fN * n / g / Bnic;
    moved = 2 * f * n;
    lat_mult = 2;
    break;
  case COST_COLL_ALLGATHER:
  case COST_COLL_REDUCESCATTER:
    t_up = fg * n / Bup;
    t_net = fN * n / g / Bnic;
    moved = f * n;
    break;
  default: /* alltoall: no tree; pairwise inside, per-NIC share across */
    t_up = (g - 1) / P * n / Bup;
    t_net = (P - g) / P * n / Bnic;
    moved = f * n;
    tree_steps = INFINITY;
    if (N == 1) alg = ALG_PAIRWISE;
    break;
  }
  bw_t = fmax(g > 1 ? t_up : 0, N > 1 ? t_net : 0);
  double lat_ring = lat_mult * ring_steps, lat_tree = lat_mult * tree_steps;
  double t = bw_t + fmin(lat_ring, lat_tree);
  /* A tree wins on latency only; say so when it decides the time. */
  if (lat_tree < lat_ring && lat_ring - lat_tree > 0.1 * bw_t) alg = ALG_TREE;
  cost_result_finish(out, t, COST_BOUND_NETWORK, 0, moved);
  out->detail = alg_text[alg];
  cost_term_add(out, "bandwidth_ms", bw_t * 1e3);
  cost_term_add(out, "latency_ms", fmin(lat_ring, lat_tree) * 1e3);
  cost_term_add(out, "nodes", N);
  cost_term_add(out, "gpus_per_node", g);
  if (g > 1) cost_term_add(out, "scaleup_ms", t_up * 1e3);
  if (N > 1) cost_term_add(out, "network_ms", t_net * 1e3);
  if (g > 1) cost_term_add(out, "scaleup_bw_bytes_per_s", Bup);
  if (N > 1) cost_term_add(out, "nic_bw_bytes_per_s", Bnic);
  cost_term_add(out, "bus_bw_bytes_per_s", moved / t); /* nccl-tests' busbw */
  cost_term_add(out, "ranks", P);
  cost_term_add(out, "algorithm", (double)alg);
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
