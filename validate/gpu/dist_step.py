"""dist_step: a dlrm_step case run as the plan runs it, one process per rank through
torch.distributed (NCCL on GPUs, gloo on the CPU), launched with torch.multiprocessing spawn
(no torchrun) and a file rendezvous in a temporary folder.

Each rank holds what the case's embedding_plan gives it (dlrm_step._apply_plan):
  table_wise      the whole table on its one rank; it looks up the global batch
  column_wise     dim/k columns on each of its k ranks (the last takes the remainder)
  row_wise        ceil(rows/G) rows on each of the G ranks; partial sums of the global batch
  data_parallel   the whole table on every rank, looked up for the rank's own batch
Forward: the pooled outputs of table- and column-wise shards go to the rank owning each
sample by one all-to-all (backward: the same all-to-all reversed); row-wise partial sums by a
reduce-scatter (backward: all-gather); after the backward the dense parameters and the
data-parallel tables' gradients are all-reduced (summed: every rank's loss is its samples' share
of the global mean, so the sum is the global gradient).
gloo (torch 1.13) has neither all_to_all nor reduce_scatter: there the all-to-all is
isend/irecv to every peer and the reduce-scatter is that all-to-all followed by a local sum;
the bytes counted are the same.

Bytes counted per rank and kind, one training step: the collective's input on the rank (its
own chunk included; the all-gather its whole output buffer), compared in the row with what
priced_bytes says the plan prices for that rank (costmodel/step_dlrm.c plan_tables).

Limits of this path (the row's not_modelled): tables run in device memory (host and uvm
placements are run in HBM) in fp32, their pooled rows and gradients exchanged in the recipe's
embedding_precision; the sparse optimizer is sgd or adagrad; no checkpointing; table_row_wise
only over all ranks; bf16/fp16 autocast on GPUs only; pytorch_eager only. The data-parallel
tables' gradients are all-reduced dense in the embedding_precision (gloo: fp16 for bf16).
"""

import contextlib
import json
import math
import os
import tempfile
import time

import dlrm_step as ds
from job_env import mlp

FULL_INIT = 1 << 24  # elements: tables up to this are made whole on every rank, then sliced
NOT_MODELLED = ["host and uvm placements (run in device memory)", "checkpointing",
                "embedding_precision: fp32 tables, exchanged in the recipe's type",
                "bf16/fp16 autocast on the CPU (fp32 math there)"]


def layout(m, rc):
    """Per rank, its shards: dicts (table, kind, rows lo/hi, cols lo/hi)."""
    G = rc["gpus"]
    shards = [[] for _ in range(G)]
    for i, t in enumerate(m["tables"]):
        s, ranks = t["sharding"], t["ranks"]
        if s == "table_row_wise":
            s = "row_wise"
        if s == "row_wise" and sorted(ranks) != list(range(G)):
            raise RuntimeError("unavailable: row-wise table %s over a subset of the ranks"
                               % t["name"])
        k = len(ranks)
        for j, q in enumerate(ranks):
            sh = {"table": i, "kind": s, "r0": 0, "r1": t["rows"], "c0": 0, "c1": t["dim"]}
            if s == "column_wise":
                w = -(-t["dim"] // k)
                sh["c0"], sh["c1"] = min(j * w, t["dim"]), min((j + 1) * w, t["dim"])
            elif s == "row_wise":
                c = -(-t["rows"] // G)
                sh["r0"], sh["r1"] = min(q * c, t["rows"]), min((q + 1) * c, t["rows"])
            shards[q].append(sh)
    return shards


def priced_bytes(m, rc, dense_params):
    """Per rank, the bytes the plan prices, with costmodel/step_dlrm.c plan_tables' per-table
    terms (ob = exch_bytes: max(embedding bytes, 2); eb: embedding bytes): all_to_all_bwd is
    its a2a_bytes (B x dim x ob summed over the table- and column-wise tables: the gradient of
    every pooled row a rank received); all_to_all, the forward, is the rank's own part of the
    same exchange (G x B x its shard's columns), whose mean over the ranks is a2a_bytes;
    reduce_scatter and all_gather are rs_bytes (G x B x dim x ob per row-wise table, the
    buffer size step_coll takes for both); all_reduce_dp_tables is dp_grad_bytes (rows x dim x
    eb per data-parallel table, HBM); all_reduce_dense the DDP branch's P x 4."""
    G, B = rc["gpus"], rc["batch_per_gpu"]
    eb = {"fp32": 4, "bf16": 2, "fp16": 2}[rc["embedding_precision"]]
    ob = max(eb, 2)
    a2a_all = sum(t["dim"] for t in m["tables"]
                  if t["sharding"] in ("table_wise", "column_wise")) * B * ob
    out = []
    for sh in layout(m, rc):
        b = {"all_to_all": 0, "all_to_all_bwd": a2a_all, "reduce_scatter": 0, "all_gather": 0,
             "all_reduce_dp_tables": 0, "all_reduce_dense": dense_params * 4}
        for s in sh:
            t = m["tables"][s["table"]]
            if s["kind"] in ("table_wise", "column_wise"):
                b["all_to_all"] += G * B * (s["c1"] - s["c0"]) * ob
            elif s["kind"] == "row_wise":
                b["reduce_scatter"] += G * B * t["dim"] * ob
                b["all_gather"] += G * B * t["dim"] * ob
            else:
                b["all_reduce_dp_tables"] += t["rows"] * t["dim"] * eb
        out.append(b)
    return out


def _exchange(torch, dist, send, recv_shapes, backend, rank):
    """All-to-all of a list of tensors (send[p] to rank p); returns the list received."""
    recv = [torch.empty(s, device=send[0].device, dtype=send[0].dtype) for s in recv_shapes]
    send = [x.contiguous() for x in send]
    if backend == "nccl":
        dist.all_to_all(recv, send)
        return recv
    if send[0].dtype == torch.bfloat16:  # gloo (1.13) moves no bf16: the same bits as fp16
        raw = [r.view(torch.float16) for r in recv]
        send = [x.view(torch.float16) for x in send]
        recv_keep, recv = recv, raw
    else:
        recv_keep = recv
    reqs = []
    for p in range(len(send)):
        if p == rank:
            recv[p].copy_(send[p])
            continue
        reqs.append(dist.isend(send[p], p))
        reqs.append(dist.irecv(recv[p], p))
    for r in reqs:
        r.wait()
    return recv_keep


def _worker(rank, G, case, params, tmp, use_cuda):
    import torch  # noqa: PLC0415
    import torch.distributed as dist  # noqa: PLC0415
    nn, F = torch.nn, torch.nn.functional
    backend = "nccl" if use_cuda else "gloo"
    dev = torch.device("cuda", rank) if use_cuda else torch.device("cpu")
    if use_cuda:
        torch.cuda.set_device(dev)
    else:
        torch.set_num_threads(1)
    dist.init_process_group(backend, init_method="file://" + os.path.join(tmp, "rdv"),
                            rank=rank, world_size=G)
    m, rc = case["workload"], case["recipe"]
    B = rc["batch_per_gpu"]
    Bg = B * G
    tabs = m["tables"]
    shards = layout(m, rc)
    mine = shards[rank]
    count = {"all_to_all": 0, "all_to_all_bwd": 0, "reduce_scatter": 0, "all_gather": 0,
             "all_reduce_dp_tables": 0, "all_reduce_dense": 0}
    # the same weights and batches on every rank and in the one-process run: each table from
    # its own seeded generator, made whole and sliced while it is small (FULL_INIT elements:
    # the numerics check); a bigger table's shard is drawn on its own (same distribution,
    # other values: such a case's numerics are not comparable, the row says so)
    gen = torch.Generator().manual_seed(params["seed"])
    exact = all(t["rows"] * t["dim"] <= FULL_INIT for t in tabs)

    def shard_weight(s):
        t = tabs[s["table"]]
        g = torch.Generator().manual_seed(params["seed"] * 1000003 + s["table"])
        bound = 1.0 / math.sqrt(t["rows"])
        if t["rows"] * t["dim"] <= FULL_INIT:
            w = (torch.rand((t["rows"], t["dim"]), generator=g) * 2 - 1) * bound
            return w[s["r0"]:s["r1"], s["c0"]:s["c1"]].clone().to(dev)
        w = torch.empty((s["r1"] - s["r0"], s["c1"] - s["c0"]), device=dev)
        return w.uniform_(-bound, bound)

    torch.manual_seed(params["seed"])
    bottom = mlp(nn, [m["dense_features"]] + m["bottom"], True, torch.device("cpu"))
    cross = nn.ModuleList()
    if m["interaction"] == "dcn":
        d = m["width"]
        r = m["cross_rank"] if 0 < m["cross_rank"] < d else 0
        for _ in range(m["cross_layers"]):
            cross.append(nn.Sequential(nn.Linear(d, r, bias=False), nn.Linear(r, d))
                         if r else nn.Linear(d, d))
    top_in = m["pad_interaction_to"] or m["width"]
    top = mlp(nn, [top_in] + m["top"], False, torch.device("cpu"))
    bottom, cross, top = bottom.to(dev), cross.to(dev), top.to(dev)
    nbat = params["warmup"] + params["steps"] + 1
    batches = []
    for _ in range(min(nbat, 4)):
        dense = torch.randn((Bg, m["dense_features"]), generator=gen)
        idx = [torch.randint(0, t["rows"], (Bg, t["pooling"]), generator=gen) for t in tabs]
        y = torch.randint(0, 2, (Bg,), generator=gen).float()
        batches.append((dense.to(dev), [i.to(dev) for i in idx], y.to(dev)))  # off the clock
    mods = []
    for s in mine:
        w = shard_weight(s)
        mods.append(nn.EmbeddingBag(w.shape[0], w.shape[1], mode="sum",
                                    sparse=s["kind"] != "data_parallel", _weight=w))
    dense_params = [p for mod in (bottom, cross, top) for p in mod.parameters()]
    n_dense = sum(p.numel() for p in dense_params)
    lr_d, lr_s = params["lr_dense"], params["lr_sparse"]
    opt_d = ds._dense_opt(torch, m["dense_opt"], dense_params, lr_d, use_cuda)
    emb_params = [p for mod in mods for p in mod.parameters()]
    sp = {"sgd": torch.optim.SGD, "adagrad": torch.optim.Adagrad}[m["sparse_opt"]]
    opt_s = sp(emb_params, lr=lr_s) if emb_params else None
    lo, hi = rank * B, (rank + 1) * B
    # what each peer sends this rank by all-to-all: its table/column-wise shards, in order
    a2a_from = [[s for s in shards[q] if s["kind"] in ("table_wise", "column_wise")]
                for q in range(G)]
    rw = [i for i, t in enumerate(tabs) if any(s["table"] == i and s["kind"] == "row_wise"
                                               for s in mine)]
    widths = [sum(s["c1"] - s["c0"] for s in a2a_from[q]) for q in range(G)]
    my_a2a = [k for k, s in enumerate(mine) if s["kind"] in ("table_wise", "column_wise")]
    my_rw = {s["table"]: k for k, s in enumerate(mine) if s["kind"] == "row_wise"}
    my_dp = {s["table"]: k for k, s in enumerate(mine) if s["kind"] == "data_parallel"}
    # the exchanges in the plan's exchange type (step_dlrm.c exch_bytes: the tables' type,
    # at least 2 bytes); the tables themselves are fp32 here
    xdt = {"fp32": torch.float32, "bf16": torch.bfloat16,
           "fp16": torch.float16}[rc["embedding_precision"]]
    esz = torch.empty((), dtype=xdt).element_size()
    resz = 4  # the all-reduces: fp32 gradients
    torch.backends.cuda.matmul.allow_tf32 = rc["precision"] == "tf32"

    my_w = sum(mine[k]["c1"] - mine[k]["c0"] for k in my_a2a)

    # the exchanges, forward here and backward in step() in a fixed order on every rank
    # (autograd's own order could differ between ranks and deadlock the collectives)
    def a2a_fwd(x):  # x: Bg x my_w, rows p*B.. go to rank p -> B x sum(widths)
        x = x.to(xdt)
        count["all_to_all"] += x.numel() * esz
        return torch.cat(_exchange(torch, dist, list(x.split(B, 0)),
                                   [(B, widths[q]) for q in range(G)], backend, rank), 1).float()

    def a2a_bwd(g):  # B x sum(widths) -> Bg x my_w
        g = g.to(xdt)
        count["all_to_all_bwd"] += g.numel() * esz
        return torch.cat(_exchange(torch, dist, list(g.split(widths, 1)), [(B, my_w)] * G,
                                   backend, rank), 0).float()

    def rs_fwd(x):  # Bg x rw_dim partial sums -> B x rw_dim summed
        x = x.to(xdt)
        count["reduce_scatter"] += x.numel() * esz
        if backend == "nccl":
            out = torch.empty((B, x.shape[1]), device=x.device, dtype=x.dtype)
            dist.reduce_scatter(out, list(x.contiguous().split(B, 0)))
            return out.float()
        got = _exchange(torch, dist, list(x.split(B, 0)), [(B, x.shape[1])] * G, backend, rank)
        return torch.stack(got).float().sum(0)

    def rs_bwd(g):  # all-gather: every sample's gradient to every row shard
        g = g.to(xdt)
        count["all_gather"] += Bg * g.shape[1] * esz
        if backend == "nccl":
            parts = [torch.empty_like(g) for _ in range(G)]
            dist.all_gather(parts, g.contiguous())
        else:  # gloo's all_gather may lack the 2-byte types: the same bytes by send/recv
            parts = _exchange(torch, dist, [g] * G, [tuple(g.shape)] * G, backend, rank)
        return torch.cat(parts, 0).float()

    n = len(tabs) + 1
    li, lj = torch.tril_indices(n, n, offset=-1, device=dev)

    def forward(dense, idx):
        x = bottom(dense[lo:hi].to(dev))
        feats = [None] * len(tabs)
        ex = {}
        if any(widths):
            outs = [mods[k](idx[mine[k]["table"]].to(dev)) for k in my_a2a]
            send = torch.cat(outs, 1) if outs else torch.zeros((Bg, 0), device=dev)
            got = a2a_fwd(send.detach()).requires_grad_()
            ex["a2a"] = (send, got)
            off, pieces = 0, {}
            for q in range(G):
                for s in a2a_from[q]:
                    w = s["c1"] - s["c0"]
                    pieces.setdefault(s["table"], []).append((s["c0"], got[:, off:off + w]))
                    off += w
            for i, ps in pieces.items():
                ps.sort(key=lambda p: p[0])
                feats[i] = torch.cat([p[1] for p in ps], 1) if len(ps) > 1 else ps[0][1]
        if rw:
            parts = []
            for i in rw:
                s = mine[my_rw[i]]
                if s["r1"] == s["r0"]:  # rows < ranks: this rank's shard is empty
                    parts.append(torch.zeros((Bg, tabs[i]["dim"]), device=dev))
                    continue
                g = idx[i].to(dev)
                ok = ((g >= s["r0"]) & (g < s["r1"])).float()
                loc = (g - s["r0"]).clamp(0, max(0, s["r1"] - s["r0"] - 1))
                parts.append(F.embedding_bag(loc, mods[my_rw[i]].weight, mode="sum",
                                             per_sample_weights=ok, sparse=True))
            send = torch.cat(parts, 1)
            got = rs_fwd(send.detach()).requires_grad_()
            ex["rs"] = (send, got)
            off = 0
            for i in rw:
                feats[i] = got[:, off:off + tabs[i]["dim"]]
                off += tabs[i]["dim"]
        for i, k in my_dp.items():
            feats[i] = mods[k](idx[i][lo:hi].to(dev))
        R = ds.interaction(torch, m, x, feats, (li, lj), cross, top_in)
        return top(R), feats, ex

    lp = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(rc["precision"])
    autocast = (lambda: torch.autocast("cuda", dtype=lp)) if use_cuda and lp else \
        contextlib.nullcontext

    def step(bi, train=True):
        dense, idx, y = batches[bi % len(batches)]
        opt_d.zero_grad(set_to_none=True)
        if opt_s:
            opt_s.zero_grad(set_to_none=True)
        with autocast():
            out, feats, ex = forward(dense, idx)
        # this rank's samples' share of the global mean
        loss = F.binary_cross_entropy_with_logits(out.float().squeeze(1), y[lo:hi].to(dev),
                                                  reduction="sum") / Bg
        if not train:
            return loss.detach(), feats
        loss.backward()
        outs, grads = [], []
        for key, bwd in (("a2a", a2a_bwd), ("rs", rs_bwd)):
            if key in ex:
                send, got = ex[key]
                g = bwd(got.grad if got.grad is not None else torch.zeros_like(got))
                if send.requires_grad:
                    outs.append(send)
                    grads.append(g)
        if outs:
            torch.autograd.backward(outs, grads)
        # the dense gradients in one flat buffer (DDP buckets them; the bytes are the same)
        flat = torch.cat([(p.grad if p.grad is not None else torch.zeros_like(p)).reshape(-1)
                          for p in dense_params])
        count["all_reduce_dense"] += flat.numel() * resz
        dist.all_reduce(flat)
        off = 0
        for p in dense_params:
            p.grad = flat[off:off + p.numel()].view_as(p)
            off += p.numel()
        for i, k in my_dp.items():
            p = mods[k].weight
            g = p.grad if p.grad is not None else torch.zeros_like(p)
            # in the tables' type as the plan prices it (gloo sums no bf16: fp16 there)
            gx = g.to(xdt if backend == "nccl" or xdt != torch.bfloat16 else torch.float16)
            count["all_reduce_dp_tables"] += gx.numel() * esz
            dist.all_reduce(gx)
            p.grad = gx.float()
        opt_d.step()
        if opt_s:
            opt_s.step()
        return loss.detach(), feats

    def glob(x):
        x = x.detach().clone()
        dist.all_reduce(x)
        return x

    # numerics: the loss and per-table sums of the pooled embeddings before any update, and
    # the loss after one step on batch 0
    loss0, feats = step(0, train=False)
    digest = [glob(f.sum(0).float()).cpu().tolist() for f in feats]
    loss0 = float(glob(loss0))
    step(0)
    loss1 = float(glob(step(0, train=False)[0]))
    for i in range(params["warmup"]):
        step(1 + i)
    for k in count:
        count[k] = 0
    if use_cuda:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    dist.barrier()
    t0 = time.perf_counter()
    for i in range(params["steps"]):
        step(1 + params["warmup"] + i)
    if use_cuda:
        torch.cuda.synchronize()
    ms = (time.perf_counter() - t0) * 1000.0 / params["steps"]
    counted = {k: v // params["steps"] for k, v in count.items()}
    peak = int(torch.cuda.max_memory_allocated()) if use_cuda else None
    try:
        import resource  # noqa: PLC0415
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    except ImportError:
        rss = None
    res = {"rank": rank, "step_ms": ms, "peak_memory_bytes": peak, "peak_rss_bytes": rss,
           "bytes": counted, "shards": len(mine), "exact_init": exact, "dense_params": n_dense,
           "loss0": loss0, "loss1": loss1, "emb_digest": digest}
    with open(os.path.join(tmp, "rank%d.json" % rank), "w") as f:
        json.dump(res, f)
    dist.barrier()
    dist.destroy_process_group()


def unsupported(m, rc):
    """Why this path cannot run the case, or None."""
    if rc["framework"] != "pytorch_eager":
        return "the multi-process path runs pytorch_eager only"
    if m["sparse_opt"] not in ("sgd", "adagrad"):
        return ("the multi-process path updates tables with sgd or adagrad "
                "(workload.optimizers.sparse is %s)" % m["sparse_opt"])
    for t in m["tables"]:
        if t["sharding"] in ("row_wise", "table_row_wise") and \
                sorted(t["ranks"]) != list(range(rc["gpus"])):
            return "row-wise table %s over a subset of the ranks" % t["name"]
    return None


def run_case(env, case, params, processes):
    """Runs the case's plan over `processes` ranks (= recipe gpus); the row's fields."""
    t = env.torch
    m, rc = case["workload"], case["recipe"]
    G = rc["gpus"]
    if processes != G:
        raise RuntimeError("processes (%d) must equal the recipe's gpus (%d): one process per "
                           "rank" % (processes, G))
    why = unsupported(m, rc)
    if why:
        raise RuntimeError("unavailable: " + why)
    use_cuda = env.dev.type == "cuda"
    if use_cuda and t.cuda.device_count() < G:
        raise RuntimeError("unavailable: %d processes need %d GPUs, the host has %d"
                           % (G, G, t.cuda.device_count()))
    import torch.multiprocessing as tmp_mp  # noqa: PLC0415
    with tempfile.TemporaryDirectory(prefix="cdplan-dist-") as tmp:
        tmp_mp.spawn(_worker, args=(G, case, params, tmp, use_cuda), nprocs=G, join=True)
        ranks = []
        for q in range(G):
            with open(os.path.join(tmp, "rank%d.json" % q)) as f:
                ranks.append(json.load(f))
    priced = priced_bytes(m, rc, ranks[0]["dense_params"])
    B = rc["batch_per_gpu"]
    step_ms = max(r["step_ms"] for r in ranks)
    pk = [r["peak_memory_bytes"] for r in ranks]
    return {"step_ms": step_ms, "samples_per_s": B * G / (step_ms * 1e-3),
            "processes": G, "backend": "nccl" if use_cuda else "gloo",
            "peak_memory_bytes": max(pk) if use_cuda else None,
            "peak_mem_bytes": max(pk) if use_cuda else None,
            "per_rank": [{"rank": r["rank"], "step_ms": r["step_ms"],
                          "peak_memory_bytes": r["peak_memory_bytes"],
                          "peak_rss_bytes": r["peak_rss_bytes"], "shards": r["shards"],
                          "collective_bytes": r["bytes"], "priced_bytes": priced[r["rank"]]}
                         for r in ranks],
            "loss": ranks[0]["loss1"], "loss0": ranks[0]["loss0"], "loss1": ranks[0]["loss1"],
            "emb_digest": ranks[0]["emb_digest"], "numerics_comparable": ranks[0]["exact_init"],
            "not_modelled": NOT_MODELLED, "steps": params["steps"],
            "warmup": params["warmup"], "interaction_width": m["width"], "top_in":
            m["pad_interaction_to"] or m["width"],
            "share": {"gpus": G, "processes": G, "whole_plan": True,
                      "note": "the whole plan, one process per rank (torch.distributed %s); "
                              "collective bytes per rank and kind counted, forward and backward"
                              % ("nccl" if use_cuda else "gloo (all-to-all and reduce-scatter "
                                 "by isend/irecv)")}}
