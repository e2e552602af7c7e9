"""step: a DLRM-style training step given as sizes (the runner's first whole-step kind;
dlrm_step.py takes cdplan's own documents): bottom MLP, embedding bags (in HBM, in host
memory looked up by the CPU, or in pinned host memory read by the GPU: uvm_bag.py), the dot
interaction, top MLP; embeddings by SGD on sparse gradients, the dense part by fused Adam.
One case or a list of cases overriding the base fields; tables are kept between cases."""
import math
import statistics
import time

from job_env import bce_train_step, cuda_broken, fill_uniform, mlp, profile_steps, set_tf32
from job_schema import (OPTIONAL, REQUIRED, JobError, progress, v_bool, v_enum, v_int, v_list,
                        v_nullable, v_num, v_obj)

# Criteo-like table sizes of ../shared/data/h200/dlrm_step.json
DEFAULT_TABLE_ROWS = [10000000, 39060, 17295, 7424, 20265, 3, 7122, 1543, 63, 10000000, 3067956,
                      405282, 10, 2209, 11938, 155, 4, 976, 14, 10000000, 10000000, 10000000,
                      590152, 12973, 108, 36]

STEP_CASE = {
    "batch": (v_int(1, 1 << 22), REQUIRED),
    "precision": (v_enum("bf16", "fp32", "fp16"), REQUIRED),
    "dim": (v_int(1, 4096), REQUIRED),
    "pooling": (v_int(1, 1024), 1),
    "bottom": (v_list(v_int(1, 65536), 1, 16), REQUIRED),
    "top": (v_list(v_int(1, 65536), 1, 16), REQUIRED),
    "table_rows": (v_list(v_int(1, 1 << 31), 1, 1024), DEFAULT_TABLE_ROWS),
    "pad_interaction_to": (v_nullable(v_int(1, 1 << 20)), None),
    "placement": (v_enum("hbm", "host"), "hbm"),
    # Indices of tables kept in host memory while the rest stay in HBM (a
    # planner's mixed placement); "placement": "host" moves them all.
    "host_tables": (v_list(v_int(0, 1023), 0, 1024, unique=True), []),
    # Indices of tables in pinned host memory that the GPU reads and updates in place over
    # the host link (TorchRec's fused UVM placement, uvm_bag.py): no CPU work per step.
    "uvm_tables": (v_list(v_int(0, 1023), 0, 1024, unique=True), []),
    "tf32": (v_bool, False),
    "steps": (v_int(1, 100000), 10),
    "warmup": (v_int(0, 100000), 3),
    "lr_sparse": (v_num(0, 100), 0.01),
    "lr_dense": (v_num(0, 100), 0.001),
    "seed": (v_int(0, 2 ** 31), 0),
    # After the timed steps, profile a few more with torch.profiler: GPU busy time per
    # step (union of kernel intervals) against the wall time, and the kernels by GPU time.
    "profile": (v_bool, False),
}


def _cases(v, field):
    if not isinstance(v, dict):
        raise JobError("bad_field", "%s must be an object" % field, field)
    base = dict(v)
    cases = base.pop("cases", None)
    if cases is None:
        return {"cases": [v_obj(STEP_CASE)(base, field)]}
    # cases: a list of objects; each overrides the base fields.
    if not isinstance(cases, list) or not 1 <= len(cases) <= 256:
        raise JobError("bad_field", "%s.cases must be an array of 1 to 256 objects" % field,
                       field + ".cases")
    spec_opt = {k: (chk, OPTIONAL) for k, (chk, _d) in STEP_CASE.items()}
    v_obj(spec_opt)(base, field)  # base fields are all optional when cases are given
    out = []
    for i, c in enumerate(cases):
        f = "%s.cases[%d]" % (field, i)
        if not isinstance(c, dict):
            raise JobError("bad_field", "%s must be an object" % f, f)
        for k in c:
            if k not in STEP_CASE:
                raise JobError("unknown_field", "unknown field %s.%s" % (f, k), "%s.%s" % (f, k))
        merged = dict(base)
        merged.update(c)
        out.append(v_obj(STEP_CASE)(merged, f))
    return {"cases": out}


def check_params(v, field):
    params = _cases(v, field)
    for i, c in enumerate(params["cases"]):
        f = "params.cases[%d]" % i if len(params["cases"]) > 1 else "params"
        if c["bottom"][-1] != c["dim"]:
            raise JobError("bad_field", "the last bottom layer must equal dim (%d)" % c["dim"],
                           f + ".bottom")
        if c["top"][-1] != 1:
            raise JobError("bad_field", "the last top layer must be 1 (a logit)", f + ".top")
        n = len(c["table_rows"]) + 1
        width = n * (n - 1) // 2 + c["dim"]
        both = set(c["host_tables"]) & set(c["uvm_tables"])
        if both:
            raise JobError("bad_field", "table %d is in both host_tables and uvm_tables"
                           % min(both), f + ".uvm_tables")
        for key in ("host_tables", "uvm_tables"):
            if any(i >= len(c["table_rows"]) for i in c[key]):
                raise JobError("out_of_range", "%s names a table past table_rows" % key,
                               f + "." + key)
        p = c["pad_interaction_to"]
        if p is not None and p < width:
            raise JobError("out_of_range", "pad_interaction_to must be at least the "
                           "interaction width %d" % width, f + ".pad_interaction_to")
    return params


class _Tables:
    """Embedding tables kept between cases: each table is reused while its rows, dim,
    placement (HBM, host, pinned host memory read by the GPU) and learning rate stay the
    same, so cases that move a few tables between placements rebuild only those."""
    key = None      # (rows, dim, placements, lr) of the list below
    tables = None   # list of EmbeddingBag / uvm_bag.UvmBag
    cache = {}      # table index -> ((rows, dim, placement, lr), table)

    @classmethod
    def drop(cls):
        cls.key = cls.tables = None
        cls.cache = {}


def run(job, env, state):
    t = env.torch
    nn = t.nn
    res = {"kind": "step", "rows": [], "failed": [],
           "optimizers": "embeddings: SGD on sparse grads; dense: fused Adam",
           "device": env.device_info()}
    state["result"] = res
    cases = job["params"]["cases"]
    if all(c["table_rows"] == cases[0]["table_rows"] for c in cases):
        res["table_rows"] = cases[0]["table_rows"]
    for ci, c in enumerate(cases):
        row = {k: c[k] for k in ("batch", "precision", "dim", "pooling", "bottom", "top")}
        row.update(pad_interaction_to=c["pad_interaction_to"], placement=c["placement"],
                   host_tables=c["host_tables"])
        if c["uvm_tables"]:
            row["uvm_tables"] = c["uvm_tables"]
        if "table_rows" not in res:
            row["table_rows"] = c["table_rows"]
        try:
            row.update(_one_step_case(env, t, nn, c))
            res["rows"].append(row)
            progress("step %d/%d batch=%d %s dim=%d pad=%s %s: %.3f ms, %.0f samples/s, "
                     "peak %.2f GB" % (ci + 1, len(cases), c["batch"], c["precision"], c["dim"],
                                       c["pad_interaction_to"], c["placement"], row["step_ms"],
                                       row["samples_per_s"], (row["peak_mem_bytes"] or 0) / 1e9))
        except Exception as e:  # noqa: BLE001
            row["reason"] = "%s: %s" % (type(e).__name__, str(e)[:300])
            res["failed"].append(row)
            progress("step case %d failed: %s" % (ci + 1, row["reason"]))
            _Tables.drop()
            if cuda_broken(e):
                raise
        env.free()
    _Tables.drop()
    return res


def _one_step_case(env, t, nn, c):
    F = t.nn.functional
    dev = env.dev
    all_host = c["placement"] == "host"
    # where each table lives: 0 HBM, 1 host memory (CPU EmbeddingBag), 2 pinned host
    # memory read by the GPU (uvm_bag.UvmBag)
    place = [2 if i in c["uvm_tables"] else 1 if all_host or i in c["host_tables"] else 0
             for i in range(len(c["table_rows"]))]
    on_host = [pl == 1 for pl in place]
    host = any(on_host)
    cpu = t.device("cpu")
    t.manual_seed(c["seed"])
    set_tf32(env, c["tf32"])
    B, D, P = c["batch"], c["dim"], c["pooling"]
    rows = c["table_rows"]

    key = (tuple(rows), D, tuple(place), c["lr_sparse"])
    if _Tables.key != key:
        _Tables.key = _Tables.tables = None
        cache = _Tables.cache
        for ti in list(cache):  # drop what changes before allocating anew
            if ti >= len(rows) or cache[ti][0] != (rows[ti], D, place[ti], c["lr_sparse"]):
                del cache[ti]
        env.free()
        t0 = time.perf_counter()
        built = 0
        for ti, r in enumerate(rows):
            if ti not in cache:
                if place[ti] == 2:
                    import uvm_bag  # noqa: PLC0415
                    tab = uvm_bag.UvmBag(t, r, D, dev, env.cpu_mode, c["lr_sparse"])
                    w = tab.weight
                else:
                    w = t.empty((r, D), device=cpu if on_host[ti] else dev, dtype=t.float32)
                    tab = nn.EmbeddingBag(r, D, mode="sum", sparse=True, _weight=w)
                fill_uniform(t, w, 1.0 / math.sqrt(r), dev, env.cpu_mode)
                cache[ti] = ((r, D, place[ti], c["lr_sparse"]), tab)
                built += 1
        _Tables.tables = [cache[ti][1] for ti in range(len(rows))]
        _Tables.key = key
        progress("built %d of %d tables (%d rows, dim %d; %d on host, %d in pinned host memory)"
                 " in %.1f s" % (built, len(rows), sum(rows), D, sum(on_host),
                                 sum(pl == 2 for pl in place), time.perf_counter() - t0))
    tables = _Tables.tables
    bags = nn.ModuleList([tab for tab, pl in zip(tables, place) if pl != 2])

    n = len(rows) + 1
    width = n * (n - 1) // 2 + D
    top_in = c["pad_interaction_to"] or width
    bottom = mlp(nn, [13] + c["bottom"], True, dev)
    top = mlp(nn, [top_in] + c["top"], False, dev)
    li, lj = t.tril_indices(n, n, offset=-1, device=dev)

    def forward(dense, idx):
        x = bottom(dense)
        embs = [tab(i) for tab, i in zip(tables, idx)]
        if host:
            embs = [e.to(dev, non_blocking=True) if h else e for e, h in zip(embs, on_host)]
        T = t.stack([x] + embs, dim=1)
        Z = t.bmm(T, T.transpose(1, 2))
        R = t.cat([x, Z[:, li, lj]], dim=1)
        if top_in != width:
            R = F.pad(R, (0, top_in - width))
        return top(R)

    dense_params = list(bottom.parameters()) + list(top.parameters())
    fused = {} if env.cpu_mode else {"fused": True}
    opt_dense = t.optim.Adam(dense_params, lr=c["lr_dense"], **fused)
    # SGD of the host-mapped tables is fused into their backward (uvm_bag.py)
    opt_sparse = t.optim.SGD(bags.parameters(), lr=c["lr_sparse"]) if len(bags) else None

    nb = min(4, c["steps"] + c["warmup"])
    batches = []
    for _ in range(nb):
        dense = t.randn((B, 13), device=dev)
        idx = [t.randint(0, r, (B, P), device=cpu if h else dev, dtype=t.int64)
               for r, h in zip(rows, on_host)]
        if host and not env.cpu_mode:
            idx = [i.pin_memory() if h else i for i, h in zip(idx, on_host)]
        y = t.randint(0, 2, (B,), device=dev).float()
        batches.append((dense, idx, y))

    if c["precision"] == "fp32" or env.cpu_mode and c["precision"] == "fp16":
        import contextlib  # noqa: PLC0415
        autocast = contextlib.nullcontext
    else:
        adt = t.bfloat16 if c["precision"] == "bf16" else t.float16
        dev_type = "cpu" if env.cpu_mode else "cuda"
        autocast = lambda: t.autocast(dev_type, dtype=adt)  # noqa: E731

    def step(i):
        return bce_train_step(F, forward, batches[i % nb], (opt_dense, opt_sparse), autocast)

    if not env.cpu_mode:
        t.cuda.reset_peak_memory_stats()
    for i in range(c["warmup"]):
        step(i)
    env.sync()
    times = []
    t_all = time.perf_counter()
    for i in range(c["steps"]):
        t0 = time.perf_counter()
        loss = step(c["warmup"] + i)
        env.sync()
        times.append((time.perf_counter() - t0) * 1000.0)
    total_ms = (time.perf_counter() - t_all) * 1000.0
    step_ms = total_ms / c["steps"]
    lval = float(loss.detach())
    peak = None if env.cpu_mode else int(t.cuda.max_memory_allocated())
    out = {"step_ms": step_ms, "step_ms_median": statistics.median(times),
           "step_ms_min": min(times), "samples_per_s": B / (step_ms * 1e-3),
           "peak_mem_bytes": peak, "interaction_width": width, "top_in": top_in,
           "steps": c["steps"], "warmup": c["warmup"], "loss": lval}
    if not math.isfinite(lval):
        raise RuntimeError("loss is not finite (%r)" % lval)
    if c["profile"] and not env.cpu_mode:
        try:
            out["profile"] = profile_steps(env, t, step, c["warmup"] + c["steps"])
        except Exception as e:  # noqa: BLE001 -- the timed steps stand without it
            out["profile_error"] = "%s: %s" % (type(e).__name__, str(e)[:300])
            if cuda_broken(e):
                raise
    set_tf32(env, False)
    return out


