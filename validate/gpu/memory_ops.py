"""memory_ops: the memory-bound ops the step model prices, timed alone: embedding bags
(forward; forward + backward with sparse gradients) over grids of rows, dim, dtype, batch
and pooling; the same with the table in pinned host memory read over the host link
(uvm_bag.py) and that link's copy bandwidth; elementwise ops (add, gelu, layernorm and
softmax over rows of 1024)."""
from job_env import cuda_broken, fill_uniform
from job_schema import (OPTIONAL, REQUIRED, TIMING, JobError, check_timing, progress, v_enum,
                        v_int, v_list, v_num, v_obj)

MEM_DTYPES = ("fp32", "fp16", "bf16")
ELEMENTWISE_OPS = ("add", "gelu", "layernorm_1024", "softmax_1024")

EMB_GRID = v_obj({
    "rows": (v_list(v_int(1, 1 << 34), 1, 64), REQUIRED),
    "dim": (v_list(v_int(1, 8192), 1, 64), REQUIRED),
    "dtype": (v_list(v_enum(*MEM_DTYPES, code="unsupported_dtype"), 1, 3), ["fp32"]),
    "batch": (v_list(v_int(1, 1 << 24), 1, 64), REQUIRED),
    "pooling": (v_list(v_int(1, 4096), 1, 64), REQUIRED),
})
ELT_GRID = v_obj({
    "ops": (v_list(v_enum(*ELEMENTWISE_OPS), 1, 4), list(ELEMENTWISE_OPS)),
    "numel": (v_list(v_int(1024, 1 << 33), 1, 64), REQUIRED),
    "dtype": (v_list(v_enum(*MEM_DTYPES, code="unsupported_dtype"), 1, 3), ["fp32"]),
})


def _grid_or_list(grid):
    def check(v, field):
        if isinstance(v, list):
            if not 1 <= len(v) <= 64:
                raise JobError("out_of_range", "%s must have 1 to 64 grids" % field, field)
            return [grid(x, "%s[%d]" % (field, i)) for i, x in enumerate(v)]
        return [grid(v, field)]
    return check


_schema = v_obj(dict(TIMING, **{
    "embedding_bag": (_grid_or_list(EMB_GRID), OPTIONAL),
    "elementwise": (_grid_or_list(ELT_GRID), OPTIONAL),
    # the same grid with the table in pinned host memory read over the host link
    # (uvm_bag.py); adds the link's copy bandwidth (host_copy rows)
    "uvm_embedding_bag": (_grid_or_list(EMB_GRID), OPTIONAL),
    "warmup": (v_int(0, 1000), 5),
    "max_iters": (v_int(1, 100000), 100),
    "time_budget_ms": (v_num(0.1, 60000), 20.0),
    "seed": (v_int(0, 2 ** 31), 0),
}))


def check_params(v, field):
    params = _schema(v, field)
    if not any(k in params for k in ("embedding_bag", "elementwise", "uvm_embedding_bag")):
        raise JobError("missing_field", "params needs embedding_bag, elementwise or "
                       "uvm_embedding_bag", "params.embedding_bag")
    return check_timing(params)


_ELT = {"fp32": 4, "fp16": 2, "bf16": 2}


def _grid(g, keys):
    out = [{}]
    for k in keys:
        out = [dict(o, **{k: v}) for o in out for v in g[k]]
    return out


def run(job, env, state):
    p = job["params"]
    t = env.torch
    F = t.nn.functional
    env.set_flush(p["flush_mib"])
    t.manual_seed(p["seed"])
    res = {"kind": "memory_ops", "device": env.device_info(), "rows": [], "failed": []}
    state["result"] = res

    cases = []
    for g in p.get("embedding_bag", []):
        cases += _grid(g, ("rows", "dim", "dtype", "batch", "pooling"))
    # one table per (rows, dim, dtype): group the cases so a table is built once
    seen, order = {}, []
    for c in cases:
        key = (c["rows"], c["dim"], c["dtype"])
        if key not in seen:
            seen[key] = []
            order.append(key)
        if c not in seen[key]:
            seen[key].append(c)
    for key in order:
        rows, dim, dtn = key
        if rows * dim * _ELT[dtn] > (64 << 30):
            for c in seen[key]:
                res["failed"].append(dict(op="embedding_bag_sum", **c,
                                          reason="table larger than 64 GiB"))
            continue
        try:
            weight = t.empty((rows, dim), device=env.dev, dtype=env.dtype(dtn))
            weight.uniform_(-1.0, 1.0)
            weight.requires_grad_(True)
        except Exception as e:  # noqa: BLE001
            for c in seen[key]:
                res["failed"].append(dict(op="embedding_bag_sum", **c,
                                          reason="%s: %s" % (type(e).__name__, str(e)[:200])))
            env.free()
            continue
        for c in seen[key]:
            B, P = c["batch"], c["pooling"]
            row = {"op": "embedding_bag_sum", "rows": rows, "dim": dim, "dtype": dtn,
                   "batch": B, "pooling": P}
            try:
                idx = t.randint(0, rows, (B, P), device=env.dev, dtype=t.int64)
                gout = t.randn((B, dim), device=env.dev, dtype=weight.dtype)

                def fwd():
                    with t.no_grad():
                        F.embedding_bag(idx, weight, mode="sum")

                def fwd_bwd():
                    weight.grad = None
                    out = F.embedding_bag(idx, weight, mode="sum", sparse=True)
                    out.backward(gout)
                ms, mn, it = env.bench(fwd, p)
                row.update(fwd_ms=ms, fwd_min_ms=mn)
                row["fwd_GBps"] = B * P * dim * _ELT[dtn] / (ms * 1e-3) / 1e9
                try:
                    ms2, mn2, it2 = env.bench(fwd_bwd, p)
                    row.update(fwd_bwd_sparse_ms=ms2, fwd_bwd_sparse_min_ms=mn2)
                except Exception as e:  # noqa: BLE001
                    row["fwd_bwd_sparse_ms"] = None
                    row["fwd_bwd_error"] = "%s: %s" % (type(e).__name__, str(e)[:200])
                    if cuda_broken(e):
                        raise
                row["iters"] = it
                weight.grad = None
                res["rows"].append(row)
                progress("embedding_bag rows=%d dim=%d %s batch=%d pooling=%d fwd %.4f ms "
                         "fwd+bwd %s ms" % (rows, dim, dtn, B, P, row["fwd_ms"],
                                            "%.4f" % row["fwd_bwd_sparse_ms"]
                                            if row.get("fwd_bwd_sparse_ms") else "-"))
            except Exception as e:  # noqa: BLE001
                row["reason"] = "%s: %s" % (type(e).__name__, str(e)[:200])
                res["failed"].append(row)
                if cuda_broken(e):
                    raise
            idx = gout = None
        weight = None
        env.free()

    if p.get("uvm_embedding_bag"):
        _uvm_memory_ops(env, p, res)

    for g in p.get("elementwise", []):
        for c in _grid(g, ("ops", "numel", "dtype")):
            op, numel, dtn = c["ops"], c["numel"], c["dtype"]
            if op.endswith("_1024") and numel % 1024:
                res["failed"].append({"op": op, "numel": numel, "dtype": dtn,
                                      "reason": "numel must be a multiple of 1024"})
                continue
            row = {"op": op, "numel": numel, "dtype": dtn}
            try:
                dt = env.dtype(dtn)
                x = t.randn(numel, device=env.dev, dtype=dt)
                if op == "add":
                    y = t.randn(numel, device=env.dev, dtype=dt)
                    fn, nbytes = (lambda: t.add(x, y)), 3 * numel * _ELT[dtn]
                elif op == "gelu":
                    fn, nbytes = (lambda: F.gelu(x)), 2 * numel * _ELT[dtn]
                elif op == "layernorm_1024":
                    x2 = x.view(-1, 1024)
                    w = t.randn(1024, device=env.dev, dtype=dt)
                    bb = t.randn(1024, device=env.dev, dtype=dt)
                    fn, nbytes = (lambda: F.layer_norm(x2, (1024,), w, bb)), 2 * numel * _ELT[dtn]
                else:
                    x2 = x.view(-1, 1024)
                    fn, nbytes = (lambda: t.softmax(x2, dim=-1)), 2 * numel * _ELT[dtn]
                ms, mn, it = env.bench(fn, p)
                row.update(ms=ms, min_ms=mn, iters=it, bytes=nbytes,
                           GBps=nbytes / (ms * 1e-3) / 1e9)
                res["rows"].append(row)
                progress("%s numel=%d %s %.4f ms %.0f GB/s" % (op, numel, dtn, ms, row["GBps"]))
            except Exception as e:  # noqa: BLE001
                row["reason"] = "%s: %s" % (type(e).__name__, str(e)[:200])
                res["failed"].append(row)
                if cuda_broken(e):
                    raise
            x = y = x2 = None  # noqa: F841
            env.free()
    return res


def _uvm_memory_ops(env, p, res):
    """Host-mapped embedding bags (uvm_bag.py): forward, and forward + backward with the
    fused SGD update, per grid point; then the host link's copy bandwidth, 1 GiB pinned
    each way (host_copy rows), the figure the per-row costs are set against."""
    import uvm_bag  # noqa: PLC0415
    t = env.torch
    cases = []
    for g in p["uvm_embedding_bag"]:
        cases += _grid(g, ("rows", "dim", "dtype", "batch", "pooling"))
    bag = key = None
    for c in cases:
        rows, dim, dtn, B, P = c["rows"], c["dim"], c["dtype"], c["batch"], c["pooling"]
        row = {"op": "uvm_embedding_bag_sum", "rows": rows, "dim": dim, "dtype": dtn,
               "batch": B, "pooling": P}
        try:
            if dtn not in ("fp32", "fp16", "bf16"):
                raise JobError("unsupported_dtype", "uvm tables are fp32, fp16 or bf16")
            if rows * dim * _ELT[dtn] > (64 << 30):
                raise JobError("out_of_range", "table larger than 64 GiB")
            if key != (rows, dim, dtn):
                bag = None
                env.free()
                bag = uvm_bag.UvmBag(t, rows, dim, env.dev, env.cpu_mode, 1e-3, env.dtype(dtn))
                fill_uniform(t, bag.weight, 1.0, env.dev, env.cpu_mode)
                key = (rows, dim, dtn)
            idx = t.randint(0, rows, (B, P), device=env.dev, dtype=t.int64)
            gout = t.randn((B, dim), device=env.dev, dtype=t.float32)

            def fwd():
                with t.no_grad():
                    bag.forward_rows(idx)

            def fwd_bwd():
                out = bag(idx)
                out.backward(gout)
            ms, mn, it = env.bench(fwd, p)
            row.update(fwd_ms=ms, fwd_min_ms=mn, iters=it)
            row["fwd_GBps"] = B * P * dim * _ELT[dtn] / (ms * 1e-3) / 1e9
            ms2, mn2, _ = env.bench(fwd_bwd, p)
            row.update(fwd_bwd_ms=ms2, fwd_bwd_min_ms=mn2)
            res["rows"].append(row)
            progress("uvm embedding_bag rows=%d dim=%d %s batch=%d pooling=%d fwd %.4f ms "
                     "(%.1f GB/s) fwd+bwd+sgd %.4f ms" % (rows, dim, dtn, B, P, ms,
                                                         row["fwd_GBps"], ms2))
        except Exception as e:  # noqa: BLE001
            row["reason"] = "%s: %s" % (type(e).__name__, str(e)[:200])
            res["failed"].append(row)
            if cuda_broken(e):
                raise
    bag = None
    env.free()
    if env.cpu_mode:
        return
    n = 1 << 30
    h = t.empty(n, dtype=t.uint8, pin_memory=True)
    d = t.empty(n, dtype=t.uint8, device=env.dev)
    for name, fn in (("h2d", lambda: d.copy_(h, non_blocking=True)),
                     ("d2h", lambda: h.copy_(d, non_blocking=True))):
        ms, mn, it = env.bench(fn, dict(p, flush_mib=0), iters=10)
        res["rows"].append({"op": "host_copy", "direction": name, "bytes": n, "ms": ms,
                            "min_ms": mn, "GBps": n / (ms * 1e-3) / 1e9})
        progress("host copy %s 1 GiB pinned: %.3f ms, %.1f GB/s" % (name, ms, n / ms / 1e6))
    h = d = None  # noqa: F841


