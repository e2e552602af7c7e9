"""dlrm_step: one DLRM training step built from cdplan's own workload and recipe documents
(kind "dlrm"), and the plan's embedding_plan where there is one; timed, its peak memory taken.

Job (runner.py kind "dlrm_step"):
  {"kind": "dlrm_step",
   "params": {"cases": [{"label": "planned",
                         "workload": {...cdplan dlrm workload (docs/step-model.md)...},
                         "recipe": {...cdplan recipe: gpus, batch_per_gpu, precision,
                                    embedding_precision, framework, sharding, placement,
                                    checkpointing, dense_parallel, pad_to...},
                         "embedding_plan": {"tables": [{"name", "sharding_type",
                                            "compute_kernel", "ranks"}]}}],   (optional)
              "warmup": 3, "steps": 10, "seed": 0, "time_budget_s": 3600,
              "profile": false, "host_mini_batch": 0}}

The model, as docs/step-model.md ("DLRM step") prices it: bottom MLP on dense_features
(ReLU after every layer), one EmbeddingBag (sum) per table (counts expanded as the planner
names them, "t#0", "t#1", ...), the dot interaction (T = stack([x] + embeddings), T T^T, the
lower triangle, concatenated with x, padded to pad_interaction_to) or DCN cross layers over
x0 = [x, embeddings] (x_{l+1} = x0 * (W x_l + b) + x_l; with cross_rank r < d, W = U V^T as two
Linears d -> r -> d: Wang et al., "DCN V2", 2021, section 3.2), the top MLP, BCE on fp32
logits. pad_to rounds every MLP width but the logit and every table dim up to a multiple.
Precision: autocast to bf16/fp16 (fp32, tf32 with TF32 matmuls on). embedding_precision: the
tables' storage dtype (fp32, bf16, fp16). Optimizers as the workload says: dense adam (fused on
GPU), sgd, adagrad; sparse sgd, adagrad, adam (SparseAdam), rowwise_adagrad (one fp32 state
per row, FBGEMM's rule: s_r += mean(g_r^2), w_r -= lr g_r / (sqrt(s_r) + eps)).
Placement per table (embedding_plan's compute_kernel, else the table's, else the recipe's):
hbm ("fused"), host ("cpu": a CPU EmbeddingBag, its rows copied over), uvm ("fused_uvm":
pinned host memory read and updated in place by GPU kernels, uvm_bag.py, SGD only).
Checkpointing: "full" recomputes the MLPs (and cross layers) in the backward, "selective" the
interaction.

Sharding: a case with "processes": N = recipe gpus (or gpus > 1 on a CUDA host with that
many GPUs, when dist_step.unsupported finds nothing against it) runs the whole plan, one
process per rank through torch.distributed (dist_step.py). Otherwise one process: when the
recipe spans more GPUs than this process runs, the case runs the busiest rank's share and
says so in "share": that rank's tables (table-wise whole, row-wise rows/k with pooling/k
lookups per bag, column-wise dim/k, data-parallel whole at the local
batch) over the global batch, its local batch through the dense part; the tables held by other
ranks enter the interaction as received buffers and the rank's outputs for other ranks' samples
get a received gradient, so the embedding work is the rank's; the all-to-all and all-reduce
themselves are not run (the plan prices them; they are not in the measured time).

Frameworks: pytorch_eager runs here; torchrec_fbgemm needs fbgemm_gpu (else the case fails
"unavailable"); fused_triton needs fused_tbe.py beside this file, a module with
  build(torch, specs, dev, cpu_mode, optimizer, lr) -> object whose __call__(idx_list) returns
  the pooled outputs (fp32, one per spec) and whose backward applies the sparse optimizer,
specs being [{"rows", "dim", "bags", "pooling", "placement", "dtype"}]; until it exists such a
case fails "unavailable".

Without CUDA (CDPLAN_RUNNER_ALLOW_CPU) it runs on the CPU in fp32 tables (timings mean nothing;
the job logic and numerics are checked).
"""

import contextlib
import math
import statistics
import time

from job_env import bce_train_step, cuda_broken, fill_uniform, mlp, profile_steps, run_cases
from job_schema import (JobError, check_cases, check_members, get_enum, get_int, progress, sub,
                        v_bool, v_int, v_num)

WL_FIELDS = {"kind", "name", "dense_features", "tables", "bottom_mlp", "top_mlp", "interaction",
             "cross_layers", "cross_rank", "pad_interaction_to", "optimizers"}
TABLE_FIELDS = {"name", "rows", "dim", "pooling", "count", "sharding", "placement"}
# what a plan's recipe document carries (api/plan.c recipe_json) and the step request's own
RC_FIELDS = {"gpus", "gpus_per_node", "nodes", "batch_per_gpu", "global_batch", "precision",
             "embedding_precision", "framework", "sharding", "placement", "checkpointing",
             "dense_parallel", "pad_to", "tp", "pp"}
EP_FIELDS = {"name", "sharding_type", "compute_kernel", "ranks"}
SHARDINGS = ("table_wise", "row_wise", "column_wise", "data_parallel", "table_row_wise")
PLACEMENTS = ("hbm", "host", "uvm")
KERNEL_PLACEMENT = {"fused": "hbm", "cpu": "host", "fused_uvm": "uvm", "fused_uvm_caching": "uvm"}
FRAMEWORKS = ("pytorch_eager", "torchrec_fbgemm", "fused_triton")
MAX_TABLES = 4096


def _widths(d, k, field):
    v = d.get(k)
    if not isinstance(v, list) or not 1 <= len(v) <= 64:
        raise JobError("missing_field" if v is None else "bad_field",
                       "%s must be an array of 1 to 64 widths" % sub(field, k), sub(field, k))
    return [v_int(1, 1 << 20)(x, "%s[%d]" % (sub(field, k), i)) for i, x in enumerate(v)]


def _pad(n, m):
    return (n + m - 1) // m * m if m > 1 else n


def _check_workload(w, wf):
    if isinstance(w, dict) and "dense_block" in w:
        raise JobError("bad_field", "%s.dense_block: the runner cannot build a dense block (cdplan "
                       "prices it from its GEMMs or figures only)" % wf, wf + ".dense_block")
    check_members(w, WL_FIELDS, wf)
    if w.get("kind") != "dlrm":
        raise JobError("bad_field", "%s.kind must be dlrm" % wf, wf + ".kind")
    m = {"name": str(w.get("name", ""))[:128],
         "dense_features": get_int(w, "dense_features", wf, 1, 1 << 20),
         "bottom": _widths(w, "bottom_mlp", wf), "top": _widths(w, "top_mlp", wf),
         "interaction": get_enum(w, "interaction", wf, ("dot", "dcn", "concat")),
         "cross_layers": get_int(w, "cross_layers", wf, 0, 64, 0),
         "cross_rank": get_int(w, "cross_rank", wf, 1, 1 << 20, 0),
         "pad_interaction_to": get_int(w, "pad_interaction_to", wf, 0, 1 << 24, 0)}
    # as cdplan reads the workload (api/workload.c): dcn without cross_layers
    # has 3, and cross layers belong to dcn only
    if m["interaction"] == "dcn" and m["cross_layers"] == 0:
        m["cross_layers"] = 3
    if m["interaction"] != "dcn" and m["cross_layers"]:
        raise JobError("bad_field", "%s.cross_layers needs interaction dcn" % wf,
                       wf + ".cross_layers")
    opt = w.get("optimizers", {})
    of = wf + ".optimizers"
    check_members(opt, {"dense", "sparse"}, of)
    m["dense_opt"] = get_enum(opt, "dense", of, ("adam", "sgd", "adagrad"), "adam")
    m["sparse_opt"] = get_enum(opt, "sparse", of, ("sgd", "adagrad", "rowwise_adagrad", "adam"),
                               "sgd")
    if m["top"][-1] != 1:
        raise JobError("bad_field", "%s.top_mlp: the last layer must be 1 (a logit)" % wf,
                       wf + ".top_mlp")
    tabs = w.get("tables")
    tf = wf + ".tables"
    if not isinstance(tabs, list) or not 1 <= len(tabs) <= MAX_TABLES:
        raise JobError("missing_field" if tabs is None else "bad_field",
                       "%s must be an array of 1 to %d tables" % (tf, MAX_TABLES), tf)
    out = []
    for i, t in enumerate(tabs):
        f = "%s[%d]" % (tf, i)
        check_members(t, TABLE_FIELDS, f)
        base = {"rows": get_int(t, "rows", f, 1, 1 << 40), "dim": get_int(t, "dim", f, 1, 65536),
                "pooling": get_int(t, "pooling", f, 1, 100000, 1),
                "sharding": get_enum(t, "sharding", f, SHARDINGS, "") if "sharding" in t else None,
                "placement": get_enum(t, "placement", f, PLACEMENTS) if "placement" in t else None,
                "field": f}
        cnt = get_int(t, "count", f, 1, MAX_TABLES, 1)
        name = str(t.get("name", ""))[:40] or "table"
        for c in range(cnt):
            tab = dict(base)
            # the planner's names (api/plan.c expand_tables)
            tab["name"] = "%s#%d" % (name, c if cnt > 1 else i) if cnt > 1 or not t.get("name") \
                else name
            out.append(tab)
        if len(out) > MAX_TABLES:
            raise JobError("out_of_range", "%s: at most %d tables, counts included"
                           % (tf, MAX_TABLES), tf)
    m["tables"] = out
    return m


def _check_recipe(r, rf):
    check_members(r, RC_FIELDS, rf)
    for k in ("tp", "pp"):
        if get_int(r, k, rf, 1, 1, 1) != 1:
            raise JobError("out_of_range", "%s: a DLRM step has no tensor/pipeline parallelism"
                           % sub(rf, k), sub(rf, k))
    rc = {"batch_per_gpu": get_int(r, "batch_per_gpu", rf, 1, 1 << 24),
          "gpus": get_int(r, "gpus", rf, 1, 1 << 20, 1),
          "precision": get_enum(r, "precision", rf, ("fp32", "tf32", "bf16", "fp16", "fp8"),
                                "fp32"),
          "embedding_precision": get_enum(r, "embedding_precision", rf,
                                          ("fp32", "bf16", "fp16", "fp8", "int8"), "fp32"),
          "framework": get_enum(r, "framework", rf, FRAMEWORKS),
          "sharding": get_enum(r, "sharding", rf, SHARDINGS),
          "placement": get_enum(r, "placement", rf, PLACEMENTS),
          "checkpointing": get_enum(r, "checkpointing", rf, ("none", "selective", "full")),
          "dense_parallel": get_enum(r, "dense_parallel", rf, ("ddp", "fsdp")),
          "pad_to": get_int(r, "pad_to", rf, 0, 4096, 0)}
    rc["gpus_per_node"] = get_int(r, "gpus_per_node", rf, 1, 1024, min(rc["gpus"], 8))
    get_int(r, "nodes", rf, 1, 1 << 20, 1)
    gb = get_int(r, "global_batch", rf, 1, 1 << 40, rc["batch_per_gpu"] * rc["gpus"])
    if gb != rc["batch_per_gpu"] * rc["gpus"]:
        raise JobError("out_of_range", "%s.global_batch must be batch_per_gpu x gpus (%d): no "
                       "gradient accumulation here" % (rf, rc["batch_per_gpu"] * rc["gpus"]),
                       rf + ".global_batch")
    if rc["precision"] == "fp8":
        raise JobError("unsupported_dtype", "%s.precision fp8: eager PyTorch has no fp8 MLPs here"
                       % rf, rf + ".precision")
    if rc["embedding_precision"] in ("fp8", "int8"):
        raise JobError("unsupported_dtype", "%s.embedding_precision %s: quantized tables need "
                       "FBGEMM kernels" % (rf, rc["embedding_precision"]),
                       rf + ".embedding_precision")
    return rc


def _apply_plan(tabs, rc, ep, ef):
    """Each table's sharding, ranks and placement: the embedding_plan's entry, else the
    table's own fields, else the recipe's."""
    G = rc["gpus"]
    by_name = {}
    if ep is not None:
        check_members(ep, {"tables"}, ef)
        lst = ep.get("tables")
        if not isinstance(lst, list) or len(lst) > MAX_TABLES:
            raise JobError("bad_field", "%s.tables must be an array" % ef, ef + ".tables")
        names = {t["name"] for t in tabs}
        for i, e in enumerate(lst):
            f = "%s.tables[%d]" % (ef, i)
            check_members(e, EP_FIELDS, f)
            if e.get("name") not in names:
                raise JobError("bad_field", "%s.name names no table of the workload" % f,
                               f + ".name")
            ranks = e.get("ranks", [])
            if not isinstance(ranks, list) or len(ranks) > G:
                raise JobError("bad_field", "%s.ranks must be an array of at most gpus (%d) ranks"
                               % (f, G), f + ".ranks")
            ranks = [v_int(0, G - 1)(q, "%s.ranks[%d]" % (f, j)) for j, q in enumerate(ranks)]
            by_name[e["name"]] = {
                "sharding": get_enum(e, "sharding_type", f, SHARDINGS),
                "placement": KERNEL_PLACEMENT[get_enum(e, "compute_kernel", f,
                                                       tuple(KERNEL_PLACEMENT), "fused")],
                "kernel": e.get("compute_kernel", "fused"), "ranks": ranks}
    lpt = [0.0] * G  # table-wise tables without ranks: LPT on lookups x dim (Graham 1969)
    for t in sorted(tabs, key=lambda t: -t["pooling"] * t["dim"]):
        p = by_name.get(t["name"])
        if p:
            t.update(p)
        else:
            t["sharding"] = t["sharding"] or (rc["sharding"] if G > 1 else "table_wise")
            t["placement"] = t["placement"] or rc["placement"]
            t["kernel"] = None
            t["ranks"] = []
        if not t["ranks"]:
            if t["sharding"] == "table_wise":
                q = min(range(G), key=lambda q: lpt[q])
                t["ranks"] = [q]
            elif t["sharding"] == "table_row_wise":
                t["ranks"] = list(range(min(G, rc["gpus_per_node"])))
            else:
                t["ranks"] = list(range(G))
        if t["sharding"] == "table_wise":
            lpt[t["ranks"][0]] += t["pooling"] * t["dim"]
        t.pop("field", None)


def check_case(c, field):
    check_members(c, {"label", "workload", "recipe", "embedding_plan", "processes"}, field)
    wf, rf = field + ".workload", field + ".recipe"
    if not isinstance(c.get("workload"), dict):
        raise JobError("missing_field" if "workload" not in c else "bad_field",
                       "%s must be an object" % wf, wf)
    if not isinstance(c.get("recipe"), dict):
        raise JobError("missing_field" if "recipe" not in c else "bad_field",
                       "%s must be an object" % rf, rf)
    m = _check_workload(c["workload"], wf)
    rc = _check_recipe(c["recipe"], rf)
    pad = rc["pad_to"]
    for t in m["tables"]:
        t["dim"] = _pad(t["dim"], pad)
    m["bottom"] = [_pad(x, pad) for x in m["bottom"]]
    m["top"] = [_pad(x, pad) for x in m["top"][:-1]] + [1]
    _apply_plan(m["tables"], rc, c.get("embedding_plan"), field + ".embedding_plan")
    if m["interaction"] == "dot":
        dims = {t["dim"] for t in m["tables"]}
        if dims != {m["bottom"][-1]}:
            raise JobError("bad_field", "%s: the dot interaction needs every table dim equal to "
                           "the last bottom_mlp width (%d)" % (wf, m["bottom"][-1]),
                           wf + ".bottom_mlp")
        n = len(m["tables"]) + 1
        width = n * (n - 1) // 2 + m["bottom"][-1]
    else:
        width = m["bottom"][-1] + sum(t["dim"] for t in m["tables"])
    if m["pad_interaction_to"] and m["pad_interaction_to"] < width:
        raise JobError("out_of_range", "%s.pad_interaction_to must be at least the interaction "
                       "width %d" % (wf, width), wf + ".pad_interaction_to")
    m["width"] = width
    label = c.get("label", "")
    if not isinstance(label, str) or len(label) > 64:
        raise JobError("bad_field", "%s.label must be a string of at most 64 characters" % field,
                       field + ".label")
    procs = get_int(c, "processes", field, 0, 1024, 0)
    if procs and procs != rc["gpus"]:
        raise JobError("out_of_range", "%s.processes must be the recipe's gpus (%d): one "
                       "process per rank" % (field, rc["gpus"]), field + ".processes")
    return {"label": label, "workload": m, "recipe": rc, "processes": procs}


def check_params(v, field):
    allowed = {"cases", "warmup", "steps", "seed", "time_budget_s", "lr_sparse", "lr_dense",
               "profile", "host_mini_batch"}
    return {"cases": check_cases(v, field, allowed, 64, check_case),
            "warmup": v_int(0, 1000)(v.get("warmup", 3), field + ".warmup"),
            "steps": v_int(1, 100000)(v.get("steps", 10), field + ".steps"),
            "seed": v_int(0, 2 ** 31)(v.get("seed", 0), field + ".seed"),
            "time_budget_s": v_num(1, 86400)(v.get("time_budget_s", 3600),
                                             field + ".time_budget_s"),
            "lr_sparse": v_num(0, 100)(v.get("lr_sparse", 0.01), field + ".lr_sparse"),
            "lr_dense": v_num(0, 100)(v.get("lr_dense", 0.001), field + ".lr_dense"),
            # after the timed steps, a few more under torch.profiler (job_env.profile_steps)
            "profile": v_bool(v.get("profile", False), field + ".profile"),
            # after the timed steps, the same model at this batch (0: not run), where the host
            # sets the pace: the case's own host time (_host_mini)
            "host_mini_batch": v_int(0, 65536)(v.get("host_mini_batch", 0),
                                               field + ".host_mini_batch")}


# ---------------------------------------------------------------------------------------------
# the busiest rank's share
# ---------------------------------------------------------------------------------------------


def rank_share(m, rc):
    """The shards each rank holds: (table index, rows, dim, bags, pooling, sharding) with bags
    the global batch (local for data-parallel tables). Returns (busiest rank, its shards,
    per-rank load). The load is the rows' bytes the rank's lookups touch (lookups x dim), the
    quantity the plan balances."""
    G, B = rc["gpus"], rc["batch_per_gpu"]
    Bg = B * G
    shards = [[] for _ in range(G)]
    load = [0.0] * G
    for i, t in enumerate(m["tables"]):
        k = len(t["ranks"])
        for q in t["ranks"]:
            s = t["sharding"]
            if s == "data_parallel":
                sh = (i, t["rows"], t["dim"], B, t["pooling"], s)
            elif s == "column_wise":
                sh = (i, t["rows"], -(-t["dim"] // k), Bg, t["pooling"], s)
            elif s in ("row_wise", "table_row_wise"):
                sh = (i, -(-t["rows"] // k), t["dim"], Bg, max(1, round(t["pooling"] / k)), s)
            else:
                sh = (i, t["rows"], t["dim"], Bg, t["pooling"], s)
            shards[q].append(sh)
            load[q] += sh[2] * sh[3] * sh[4]
    busiest = max(range(G), key=lambda q: (load[q], -q))
    return busiest, shards[busiest], load


# ---------------------------------------------------------------------------------------------
# running a case
# ---------------------------------------------------------------------------------------------


class RowwiseAdagrad:
    """FBGEMM's rowwise Adagrad on sparse gradients: one fp32 state per row."""

    def __init__(self, t, params, lr, eps=1e-8):
        self.t, self.params, self.lr, self.eps = t, list(params), lr, eps
        self.state = [t.zeros(p.shape[0], device=p.device, dtype=t.float32) for p in self.params]

    def zero_grad(self, set_to_none=True):
        for p in self.params:
            p.grad = None

    def step(self):
        t = self.t
        with t.no_grad():
            for p, s in zip(self.params, self.state):
                if p.grad is None:
                    continue
                g = p.grad.coalesce()
                idx, val = g.indices()[0], g.values().float()
                s.index_add_(0, idx, val.pow(2).mean(1))
                upd = val / (s[idx].sqrt() + self.eps).unsqueeze(1)
                p.index_add_(0, idx, (-self.lr * upd).to(p.dtype))


def _dense_opt(t, name, params, lr, gpu):
    if name == "adam":
        return t.optim.Adam(params, lr=lr, **({"fused": True} if gpu else {}))
    if name == "adagrad":
        return t.optim.Adagrad(params, lr=lr)
    return t.optim.SGD(params, lr=lr)


def _sparse_opt(t, name, params, lr):
    if not params:
        return None
    if name == "sgd":
        return t.optim.SGD(params, lr=lr)
    if name == "adagrad":
        return t.optim.Adagrad(params, lr=lr)
    if name == "adam":
        return t.optim.SparseAdam(params, lr=lr)
    return RowwiseAdagrad(t, params, lr)


def _framework_check(fw):
    if fw == "torchrec_fbgemm":
        try:
            import fbgemm_gpu  # noqa: F401,PLC0415
        except ImportError:
            raise RuntimeError("unavailable: recipe.framework torchrec_fbgemm needs fbgemm_gpu, "
                               "which this host lacks; run the recipe as pytorch_eager to "
                               "validate it here")
        raise RuntimeError("unavailable: the runner has no TorchRec path yet (framework "
                           "torchrec_fbgemm)")
    if fw == "fused_triton":
        try:
            import fused_tbe  # noqa: PLC0415
        except ImportError:
            raise RuntimeError("unavailable: recipe.framework fused_triton needs fused_tbe.py "
                               "beside runner.py, which this runner package does not carry")
        return fused_tbe
    return None


def interaction(t, m, x, embs, tril, cross, top_in, run=None):
    """The interaction of the bottom MLP's output x (batch x width) with the
    embeddings embs (each batch x width): "dot", the pairwise products below
    the diagonal (tril: the index pair) beside x; else DCN cross layers,
    R = x0 * layer(R) + R over x0 = [x, embs...] ("concat": no cross
    layers, x0 itself). Zero-padded to top_in
    columns. run(layer, R) applies a cross layer (activation checkpointing;
    a plain call by default). dist_step.py shares it."""
    if m["interaction"] == "dot":
        T = t.stack([x] + embs, dim=1)
        Z = t.bmm(T, T.transpose(1, 2))
        R = t.cat([x, Z[:, tril[0], tril[1]]], dim=1)
    else:
        x0 = t.cat([x] + embs, dim=1)
        R = x0
        for layer in cross:
            R = x0 * (run(layer, R) if run else layer(R)) + R
    if top_in != m["width"]:
        R = t.nn.functional.pad(R, (0, top_in - m["width"]))
    return R


def _one_case(env, c, params):
    t = env.torch
    nn, F = t.nn, t.nn.functional
    dev, cpu = env.dev, t.device("cpu")
    m, rc = c["workload"], c["recipe"]
    procs = c.get("processes", 0)
    if procs == 0 and rc["gpus"] > 1 and dev.type == "cuda" and \
            t.cuda.device_count() >= rc["gpus"]:
        import dist_step  # noqa: PLC0415
        if dist_step.unsupported(m, rc) is None:
            procs = rc["gpus"]  # the plan fits on this host and that path runs it: whole
    if procs >= 1:  # asked for: the multi-process path (1: its one-process reference)
        import dist_step  # noqa: PLC0415
        return dist_step.run_case(env, c, params, procs)
    gpu = dev.type == "cuda"
    fused_tbe = _framework_check(rc["framework"])
    t.manual_seed(params["seed"])
    t.backends.cuda.matmul.allow_tf32 = rc["precision"] == "tf32"
    G, B = rc["gpus"], rc["batch_per_gpu"]
    rank, mine, load = rank_share(m, rc)
    tabs = m["tables"]
    edt = {"fp32": t.float32, "bf16": t.bfloat16, "fp16": t.float16}[rc["embedding_precision"]]
    if env.cpu_mode:
        edt = t.float32
    lr_s = params["lr_sparse"]
    # the rank's shards: (spec, module or None, placement)
    built, bags, uvm = [], [], 0
    t0 = time.perf_counter()
    specs = []
    for (ti, rows, dim, nbags, pool, shd) in mine:
        pl = tabs[ti]["placement"]
        specs.append({"table": ti, "rows": rows, "dim": dim, "bags": nbags, "pooling": pool,
                      "sharding": shd, "placement": pl, "dtype": rc["embedding_precision"]})
    tbe = None
    if fused_tbe is not None:
        tbe = fused_tbe.build(t, specs, dev, env.cpu_mode, m["sparse_opt"], lr_s)
    else:
        for s in specs:
            bound = 1.0 / math.sqrt(s["rows"])
            if s["placement"] == "uvm":
                if m["sparse_opt"] != "sgd":
                    raise RuntimeError("unavailable: uvm tables update with fused SGD only here "
                                       "(workload.optimizers.sparse is %s)" % m["sparse_opt"])
                import uvm_bag  # noqa: PLC0415
                mod = uvm_bag.UvmBag(t, s["rows"], s["dim"], dev, env.cpu_mode, lr_s, dtype=edt)
                w = mod.weight
                uvm += 1
            else:
                w = t.empty((s["rows"], s["dim"]), device=cpu if s["placement"] == "host" else dev,
                            dtype=edt)
                mod = nn.EmbeddingBag(s["rows"], s["dim"], mode="sum", sparse=True, _weight=w)
                bags.append(mod)
            fill_uniform(t, w, bound, dev, env.cpu_mode)
            built.append(mod)
    progress("rank %d of %d: %d table shards (%d rows; %d host, %d uvm) built in %.1f s"
             % (rank, G, len(specs), sum(s["rows"] for s in specs),
                sum(s["placement"] == "host" for s in specs), uvm, time.perf_counter() - t0))

    D0 = m["bottom"][-1]
    bottom = mlp(nn, [m["dense_features"]] + m["bottom"], True, dev)
    cross = nn.ModuleList()
    if m["interaction"] == "dcn":
        d = m["width"]
        r = m["cross_rank"] if 0 < m["cross_rank"] < d else 0
        for _ in range(m["cross_layers"]):
            if r:
                cross.append(nn.Sequential(nn.Linear(d, r, bias=False, device=dev),
                                           nn.Linear(r, d, device=dev)))
            else:
                cross.append(nn.Linear(d, d, device=dev))
    top_in = m["pad_interaction_to"] or m["width"]
    top = mlp(nn, [top_in] + m["top"], False, dev)
    n = len(tabs) + 1
    li, lj = t.tril_indices(n, n, offset=-1, device=dev)
    # features this rank computes whole for its own samples: table-wise and data-parallel
    # shards (every shard when the plan is one GPU); row- and column-wise shards are partial
    # sums or slices that go out whole
    own = {s["table"]: k for k, s in enumerate(specs)
           if G == 1 or s["sharding"] in ("table_wise", "data_parallel")}
    # received buffers: the features other ranks compute for this rank's samples, and the
    # gradients other ranks send back for the outputs this rank computed for them
    recv = {ti: t.randn((B, tabs[ti]["dim"]), device=dev) * 0.01
            for ti in range(len(tabs)) if ti not in own}
    grads_in = []
    for k, s in enumerate(specs):
        sent = s["bags"] - B if own.get(s["table"]) == k else s["bags"]
        grads_in.append(t.randn((sent, s["dim"]), device=dev) * 1e-3 if sent > 0 else None)
    ckpt = rc["checkpointing"]
    from torch.utils.checkpoint import checkpoint  # noqa: PLC0415

    def run(mod, *a):
        return checkpoint(mod, *a, use_reentrant=False) if ckpt == "full" else mod(*a)

    def interact(x, embs):
        return interaction(t, m, x, embs, (li, lj), cross, top_in, run)

    def forward(dense, idx):
        x = run(bottom, dense)
        if tbe is not None:
            outs = tbe(idx)
        else:
            outs = [mod(i) for mod, i in zip(built, idx)]
            outs = [o.to(dev, non_blocking=True) if o.device != dev else o for o in outs]
        extra = 0
        embs = []
        for ti in range(len(tabs)):
            if ti in own:
                embs.append(outs[own[ti]][:B])
            else:
                embs.append(recv[ti])
        for o, g in zip(outs, grads_in):
            if g is not None:  # the rows sent to other ranks: the tail, or all of them
                extra = extra + (o[o.shape[0] - g.shape[0]:].float() * g).sum()
        if ckpt == "selective" and m["interaction"] == "dot":
            R = checkpoint(interact, x, embs, use_reentrant=False)
        else:
            R = interact(x, embs)
        return run(top, R), extra

    dense_params = list(bottom.parameters()) + list(cross.parameters()) + list(top.parameters())
    opt_d = _dense_opt(t, m["dense_opt"], dense_params, params["lr_dense"], gpu)
    opt_s = _sparse_opt(t, m["sparse_opt"], [p for mod in bags for p in mod.parameters()], lr_s)
    steps, warm = params["steps"], params["warmup"]
    nb = min(4, steps + warm)
    batches = _batches(env, specs, m, nb, B)
    lp = {"bf16": t.bfloat16, "fp16": t.float16}.get(rc["precision"])
    if lp is None or (env.cpu_mode and lp == t.float16):
        autocast = contextlib.nullcontext
    else:
        autocast = lambda: t.autocast("cuda" if gpu else "cpu", dtype=lp)  # noqa: E731

    def step(i):
        return bce_train_step(F, forward, batches[i % nb], (opt_d, opt_s), autocast)

    for i in range(warm):
        step(i)
    env.sync()
    if gpu:
        t.cuda.reset_peak_memory_stats()
    times = []
    t_all = time.perf_counter()
    for i in range(steps):
        t1 = time.perf_counter()
        loss = step(warm + i)
        env.sync()
        times.append((time.perf_counter() - t1) * 1000.0)
    step_ms = (time.perf_counter() - t_all) * 1000.0 / steps
    lval = float(loss.detach())
    t.backends.cuda.matmul.allow_tf32 = False
    if not math.isfinite(lval):
        raise RuntimeError("loss is not finite (%r)" % lval)
    peak = int(t.cuda.max_memory_allocated()) if gpu else None
    prof = {}
    if params["profile"] and gpu:
        try:
            prof["profile"] = profile_steps(env, t, step, warm + steps)
        except Exception as e:  # noqa: BLE001 -- the timed steps stand without it
            prof["profile_error"] = "%s: %s" % (type(e).__name__, str(e)[:300])
            if cuda_broken(e):
                raise
    if params["host_mini_batch"]:
        prof["host_mini"] = _host_mini(env, step, batches, specs, m, params, G)
    share = {"gpus": G, "processes": 1, "rank": rank, "whole_plan": G == 1,
             "rank_load": load[rank], "mean_load": sum(load) / G,
             "tables": len(specs), "of_tables": len(tabs)}
    if G > 1:
        share["note"] = ("the plan spans %d GPUs; this run is rank %d's share (the busiest by "
                         "lookups x dim): its table shards over the global batch and its local "
                         "batch through the dense part; the all-to-all and all-reduce are not "
                         "run (multi-process torch.distributed is not in this runner)" % (G, rank))
    return {"step_ms": step_ms, "step_ms_median": statistics.median(times),
            "step_ms_min": min(times), "samples_per_s": B * G / (step_ms * 1e-3),
            "peak_memory_bytes": peak, "peak_mem_bytes": peak, "steps": steps, "warmup": warm,
            "loss": lval, "share": share, "interaction_width": m["width"], "top_in": top_in,
            "placements": {p: sum(s["placement"] == p for s in specs) for p in PLACEMENTS},
            **prof}


def _batches(env, specs, m, n, batch, bags=None):
    """n random batches of `batch` samples: (dense features, one index tensor per shard of
    specs, labels); a shard's bags are its own (specs' "bags") unless bags is given. Host-placed
    shards' indices stay on the CPU, pinned where the GPU reads them."""
    t = env.torch
    dev, cpu = env.dev, t.device("cpu")
    gpu = dev.type == "cuda"
    out = []
    for _ in range(n):
        dense = t.randn((batch, m["dense_features"]), device=dev)
        idx = []
        for s in specs:
            where = cpu if s["placement"] == "host" else dev
            i = t.randint(0, s["rows"], (bags or s["bags"], s["pooling"]), device=where,
                          dtype=t.int64)
            idx.append(i.pin_memory() if where == cpu and gpu else i)
        y = t.randint(0, 2, (batch,), device=dev).float()
        out.append((dense, idx, y))
    return out


def _host_mini(env, step, batches, specs, m, params, G):
    """The case's model stepped at a small batch b (params host_mini_batch), its own tables,
    layers and optimizers: every kernel is a few microseconds, so the step's time is what the
    host takes to issue it (dispatch, autograd, the optimizer's syncs) -- the case's own host
    cost on this machine, which a model of the step at its real batch can take as its host
    figure (docs/step-model.md "Host speed per machine"). The same warm-up and step count as
    the timed steps; one plan GPU only (a rank's share has received buffers sized to the
    batch). Replaces the case's batches in place (the timed steps are over)."""
    b = params["host_mini_batch"]
    if G != 1:
        return {"batch": b, "skipped": "the plan spans %d GPUs" % G}
    batches[:] = _batches(env, specs, m, len(batches), b, bags=b)
    for i in range(params["warmup"]):
        step(i)
    env.sync()
    times = []
    for i in range(params["steps"]):
        t1 = time.perf_counter()
        step(i)
        env.sync()
        times.append((time.perf_counter() - t1) * 1000.0)
    return {"batch": b, "step_ms": sum(times) / len(times),
            "step_ms_median": statistics.median(times), "step_ms_min": min(times),
            "steps": len(times)}


def device_info(env):
    d = env.device_info()
    d["compute_units"] = d.get("sms", 0)
    d["memory_bytes"] = d.get("mem_bytes", 0)
    return d


def run(job, env, state):
    params = job["params"]
    res = {"kind": "dlrm_step", "rows": [], "failed": [], "device": device_info(env),
           "method": "mean of steps timed steps after warmup (wall clock around a device "
                     "synchronize); peak = torch.cuda.max_memory_allocated over the timed steps"}
    state["result"] = res

    def done(ci, c, row):
        return "dlrm_step %d/%d %s: %.3f ms, peak %.2f GB" % (
            ci + 1, len(params["cases"]), c["label"], row["step_ms"],
            (row["peak_memory_bytes"] or 0) / 1e9)

    def row_of(c):
        return {"label": c["label"], "workload": c["workload"]["name"], "recipe": c["recipe"]}
    fused = any(c["recipe"]["framework"] == "fused_triton" for c in params["cases"])
    probe = {"start": _probe(env, fused, False)}
    res["host_probe"] = probe
    run_cases(env, params, res, row_of, lambda c: _one_case(env, c, params), done,
              "dlrm_step", 400)
    probe["end"] = _probe(env, fused, True)
    _probe_summary(probe)
    return res


def _probe(env, fused, count):
    """host_probe.measure, or the error that stopped it (the cases stand without it)."""
    try:
        import host_probe  # noqa: PLC0415
        return host_probe.measure(env, triton=fused, count=count)
    except Exception as e:  # noqa: BLE001
        if cuda_broken(e):
            raise
        return {"error": "%s: %s" % (type(e).__name__, str(e)[:300])}


def _probe_summary(probe):
    """The host's figures (cdplan recipe.host_op_us, .triton_launch_us): the mean of the
    probes before and after the cases, the start's re-derived with the end's profiled kernel
    counts where the profiler gave them."""
    import host_probe  # noqa: PLC0415
    s, e = probe.get("start", {}), probe.get("end", {})
    if e.get("kernels_source") == "profiler" and s.get("kernels_source") == "static" and \
            "base_iter_us" in s:
        s.update(host_probe.derive(s, e["kernels_base"], e["kernels_long"]))
        s["kernels_source"] = "profiler (end)"
    for k in ("eager_op_us", "iter_fixed_us", "step_kernel_us", "triton_launch_us"):
        v = [p[k] for p in (s, e) if isinstance(p.get(k), float)]
        if v:
            probe[k] = sum(v) / len(v)
