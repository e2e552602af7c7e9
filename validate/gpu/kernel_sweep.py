"""kernel_sweep: cdplan's Triton matmul (triton_matmul.py; split_k > 1:
triton_matmul_sk.py) timed over a grid of tile configs per shape and dtype, each result
checked against a float32 reference, beside cuBLAS on the same operands. The configs are
compiled first by a pool of processes into Triton's on-disk cache."""
import json
import os
import sys
import time

from gemm_sweep import SHAPE, check_shapes, fp8_layout_ok, fp8_ok, gemm_fn, gemm_operands
from job_env import TooSlow, cuda_broken, set_tf32
from job_schema import (EXIT_UNAVAILABLE, REQUIRED, TIMING, JobError, check_timing, progress,
                        v_bool, v_enum, v_int, v_list, v_nullable, v_num, v_obj, v_pow2)

HERE = os.path.dirname(os.path.abspath(__file__))
KERNEL_DTYPES = ("bf16", "fp16", "fp8", "tf32")

KCONFIG = v_obj({
    "bm": (v_pow2(16, 512), REQUIRED), "bn": (v_pow2(16, 512), REQUIRED),
    "bk": (v_pow2(16, 512), REQUIRED), "warps": (v_pow2(1, 32), REQUIRED),
    "stages": (v_int(1, 8), REQUIRED), "group_m": (v_int(1, 256), 8),
    # > 1: triton_matmul_sk.py (fp32 partials over split_k K ranges + a reduce kernel)
    "split_k": (v_int(1, 64), 1)})

_schema = v_obj(dict(TIMING, **{
    "shapes": (v_list(SHAPE, 1, 1000), REQUIRED),
    "dtypes": (v_list(v_enum(*KERNEL_DTYPES, code="unsupported_dtype"), 1, 4, unique=True),
               ["bf16"]),
    "configs": (v_nullable(v_list(KCONFIG, 1, 2000, unique=True)), None),
    "warmup": (v_int(0, 1000), 3),
    "iters": (v_nullable(v_int(1, 100000)), 20),
    "check": (v_bool, True),
    "precompile_workers": (v_nullable(v_int(0, 256)), None),
    "precompile_timeout_s": (v_num(1, 86400), 300.0),
    "shape_budget_s": (v_num(0.1, 86400), 60.0),
    "max_call_ms": (v_num(0.001, 600000), 100.0),
}))


def check_params(v, field):
    return check_shapes(check_timing(_schema(v, field)))


def default_kernel_configs():
    """The grid of ../shared/data/h200/triton_configs.json (bm, bn in {64,128,256}, bk in
    {32,64,128}, stages {3,4}, 4 warps up to 128x128 and 8 above, GROUP_M 8), extended
    with 2 and 5 stages, the other warp count for the middle tiles, 32-wide tiles
    and GROUP_M 1/4/16 for two tiles."""
    cfgs = []

    def add(bm, bn, bk, warps, stages, group_m=8):
        c = {"bm": bm, "bn": bn, "bk": bk, "warps": warps, "stages": stages, "group_m": group_m}
        if c not in cfgs:
            cfgs.append(c)

    def w(bm, bn):
        return 4 if bm * bn <= 128 * 128 else 8
    for bm in (64, 128, 256):
        for bn in (64, 128, 256):
            for bk in (32, 64, 128):
                for st in (3, 4):
                    add(bm, bn, bk, w(bm, bn), st)
    for bm in (64, 128, 256):
        for bn in (64, 128, 256):
            if bm * bn <= 128 * 256:
                for st in (2, 5):
                    add(bm, bn, 64, w(bm, bn), st)
    for bk in (32, 64):
        for st in (3, 4):
            add(128, 128, bk, 8, st)
    add(128, 256, 64, 4, 3)
    add(256, 128, 64, 4, 3)
    for bm, bn in ((32, 64), (64, 32), (32, 128), (128, 32)):
        for st in (3, 4):
            add(bm, bn, 64, 4, st)
    for g in (1, 4, 16):
        add(128, 128, 64, 4, 3, g)
    for g in (1, 16):
        add(128, 256, 64, 8, 3, g)
    return cfgs


_KTOL = {"bf16": 2e-2, "fp16": 1e-2, "tf32": 5e-3, "fp8": 1e-1}


def _spec_key(m, n, k, layout="nn", split=False):
    return tuple((v % 16 == 0, v == 1) for v in (m, n, k)) + (layout, split)


def _precompile_worker(task):
    """Runs in a spawned process: compile one (dtype, shape class, config) into
    Triton's on-disk cache. Returns (ok, message)."""
    dt_name, m, n, k, cfg, layout = task
    try:
        sys.path.insert(0, HERE)
        import triton_matmul  # noqa: PLC0415
        triton_matmul.precompile_dtype(dt_name, m, n, k, cfg, layout)
        return True, ""
    except Exception as e:  # noqa: BLE001
        return False, "%s: %s" % (type(e).__name__, str(e)[:200])


def _precompile(tasks, workers, timeout_s):
    if not tasks or workers <= 0:
        return
    import concurrent.futures as cf  # noqa: PLC0415
    import multiprocessing as mp  # noqa: PLC0415
    t0 = time.perf_counter()
    progress("precompiling %d kernels with %d processes" % (len(tasks), workers))
    ok = done = 0
    ex = None
    try:
        ex = cf.ProcessPoolExecutor(max_workers=workers, mp_context=mp.get_context("spawn"))
        futs = [ex.submit(_precompile_worker, task) for task in tasks]
        finished, _pending = cf.wait(futs, timeout=timeout_s)
        for f in finished:
            done += 1
            try:
                ok += 1 if f.result()[0] else 0
            except Exception:  # noqa: BLE001 - a worker died; the main loop compiles
                pass
    except Exception as e:  # noqa: BLE001 - precompiling is only an optimisation
        progress("precompile stopped: %s: %s" % (type(e).__name__, e))
    finally:
        if ex is not None:
            ex.shutdown(wait=False, cancel_futures=True)
    progress("precompiled %d/%d (%d finished) in %.1f s" %
             (ok, len(tasks), done, time.perf_counter() - t0))


def run(job, env, state):
    p = job["params"]
    t = env.torch
    try:
        import triton  # noqa: PLC0415
        sys.path.insert(0, HERE)
        import triton_matmul  # noqa: PLC0415
        import triton_matmul_sk  # noqa: PLC0415
    except ImportError as e:
        raise JobError("unavailable", "Triton is not installed: %s" % e, rc=EXIT_UNAVAILABLE)
    if env.cpu_mode and os.environ.get("TRITON_INTERPRET") != "1":
        raise JobError("unavailable", "kernel_sweep needs a GPU (or TRITON_INTERPRET=1)",
                       rc=EXIT_UNAVAILABLE)
    cfgs = p["configs"] if p["configs"] is not None else default_kernel_configs()
    env.set_flush(p["flush_mib"])
    res = {"kind": "kernel_sweep",
           "kernel": "tiled matmul, GROUP_M swizzle, fp32 acc, masked loads; A,B row-major; "
                     "bf16/fp16 in and out (fp8 e4m3 in, bf16 out; tf32: fp32 in and out)",
           "device": env.device_info(), "triton": getattr(triton, "__version__", None),
           "rows": []}
    state["result"] = res

    workers = p["precompile_workers"]
    if workers is None:
        workers = max(0, min(16, (os.cpu_count() or 1) - 1))
    if env.cpu_mode:
        workers = 0
    tasks, seen = [], set()
    for dt in p["dtypes"]:
        for s in p["shapes"]:
            if dt == "fp8" and not fp8_ok(s):
                continue
            lay = s.get("layout", "nn")
            for c in cfgs:
                key = (dt, _spec_key(s["m"], s["n"], s["k"], lay, c.get("split_k", 1) > 1),
                       json.dumps(c, sort_keys=True))
                if key not in seen:
                    seen.add(key)
                    tasks.append((dt, s["m"], s["n"], s["k"], c, lay))
    # big tiles compile slowest: start them first
    tasks.sort(key=lambda x: -(x[4]["bm"] * x[4]["bn"] * x[4]["stages"]))
    _precompile(tasks, workers, p["precompile_timeout_s"])

    for dt in p["dtypes"]:
        for si, s in enumerate(p["shapes"]):
            m, n, k = s["m"], s["n"], s["k"]
            lay = s.get("layout")
            row = {"m": m, "n": n, "k": k, "dtype": dt, "cublas_ms": None, "configs": [],
                   "failed": []}
            if lay:
                row["layout"] = lay
            if dt == "fp8" and not fp8_ok(s):
                row["failed"].append({"reason": "fp8 needs M, N, K multiples of 16"})
                res["rows"].append(row)
                continue
            t_shape = time.perf_counter()
            set_tf32(env, dt == "tf32")
            a, b = gemm_operands(env, m, n, k, dt, lay or "nn")
            out_dt = t.bfloat16 if dt == "fp8" else env.dtype(dt)
            c = t.empty((m, n), device=env.dev, dtype=out_dt)
            max_s = max(cf.get("split_k", 1) for cf in cfgs)
            w = t.empty((max_s * m * n,), device=env.dev, dtype=t.float32) if max_s > 1 else None
            ref = None
            try:
                if dt == "fp8" and not fp8_layout_ok(lay):
                    raise JobError("unsupported", "cuBLAS fp8 (torch._scaled_mm) takes layout nt")
                if dt == "fp8":
                    bt = b.t().contiguous().t()  # column-major copy for cuBLAS
                    fn = gemm_fn(env, a, bt, "fp8")
                else:
                    fn = gemm_fn(env, a, b, dt)
                row["cublas_ms"] = env.bench(fn, p)[0]
                if p["check"]:
                    ref = t.matmul(a.float(), b.float()) if dt != "tf32" else fn().float()
                    ref_norm = float(t.linalg.norm(ref))
            except Exception as e:  # noqa: BLE001
                row["cublas_error"] = "%s: %s" % (type(e).__name__, str(e)[:300])
                if cuda_broken(e):
                    raise
            res["rows"].append(row)
            for ci, cfg in enumerate(cfgs):
                rec = dict(bm=cfg["bm"], bn=cfg["bn"], bk=cfg["bk"], warps=cfg["warps"],
                           stages=cfg["stages"], group_m=cfg["group_m"])
                if cfg.get("split_k", 1) > 1:
                    rec["split_k"] = cfg["split_k"]
                if time.perf_counter() - t_shape > p["shape_budget_s"]:
                    rec["reason"] = "skipped: shape_budget_s exceeded"
                    row["failed"].append(rec)
                    continue

                def run(cfg=cfg):
                    if cfg.get("split_k", 1) > 1:
                        triton_matmul_sk.launch(a, b, c, w, cfg)
                    else:
                        triton_matmul.launch(a, b, c, cfg)
                try:
                    if p["check"] and ref is not None:
                        c.fill_(float("nan"))
                        run()
                        env.sync()
                        err = float(t.linalg.norm(c.float() - ref)) / max(ref_norm, 1e-30)
                        if not err <= _KTOL[dt]:
                            rec["reason"] = "wrong result: relative error %.3g" % err
                            row["failed"].append(rec)
                            continue
                        rec_err = err
                    else:
                        rec_err = None
                    ms, mn, it = env.bench(run, p, max_call_ms=p["max_call_ms"])
                    rec.update(ms=ms, min_ms=mn, iters=it)
                    if getattr(env, "last_backlog_us", 0) > p.get("backlog_us", 0):
                        rec["backlog_us"] = env.last_backlog_us
                    if rec_err is not None:
                        rec["rel_err"] = rec_err
                    row["configs"].append(rec)
                except TooSlow as e:
                    rec["reason"] = "one call took %.1f ms > max_call_ms" % e.ms
                    row["failed"].append(rec)
                except Exception as e:  # noqa: BLE001
                    rec["reason"] = "%s: %s" % (type(e).__name__, str(e).strip()[:300])
                    row["failed"].append(rec)
                    if cuda_broken(e):
                        raise
            best = min((x["ms"] for x in row["configs"]), default=None)
            progress("kernel %s %d/%d %dx%dx%d: %d ran, %d failed, best %s ms, cublas %s ms, "
                     "%.1f s" % (dt, si + 1, len(p["shapes"]), m, n, k, len(row["configs"]),
                                 len(row["failed"]), "%.4f" % best if best else "-",
                                 "%.4f" % row["cublas_ms"] if row["cublas_ms"] else "-",
                                 time.perf_counter() - t_shape))
            a = b = c = w = ref = None
            env.free()
    set_tf32(env, False)
    return res


