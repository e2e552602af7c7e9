#!/usr/bin/env python3
"""cdplan validation runner: executes one job on the GPU host it runs on.

    python3 runner.py JOB.json > result.json      (JOB.json may be "-" for stdin)
    python3 runner.py --check JOB.json            (validate only, print the normalized job)

JOB.json is {"kind": ..., "params": {...}, "id": optional}. Kinds: gemm_sweep,
kernel_sweep, memory_ops, step, transformer_step, dlrm_step (cdplan's own DLRM
workload and recipe documents: dlrm_step.py) (PyTorch, CUDA or ROCm builds;
Triton for kernel_sweep) and cpu_selftest (standard library only). The result is one JSON
object on stdout; progress lines ("progress: ...") go to stderr; on failure the
last stderr line is {"error": {"code", "message", "field"?}} and the exit code is
  2  the job or the command line is invalid (codes bad_json, bad_field,
     missing_field, unknown_field, out_of_range, unsupported_dtype, bad_args)
  3  the host cannot run the kind (code unavailable: no torch, no GPU, no triton)
  1  the run failed (code internal)
  5  stopped by SIGTERM/SIGINT: the results gathered so far are written to stdout
     with "partial": true (only for the GPU kinds).
No shell is ever used; nothing from the job reaches a command line.
See README.md beside this file for the parameters and output formats.
"""
import json
import math
import os
import signal
import statistics
import sys
import time

RUNNER_VERSION = "1.0"
MAX_JOB_BYTES = 1 << 20
HERE = os.path.dirname(os.path.abspath(__file__))

EXIT_FAILED, EXIT_INVALID, EXIT_UNAVAILABLE, EXIT_STOPPED = 1, 2, 3, 5


class JobError(Exception):
    """An error reported as {"error": {...}} with an exit code."""

    def __init__(self, code, message, field=None, rc=EXIT_INVALID):
        super().__init__(message)
        self.code, self.message, self.field, self.rc = code, message, field, rc

    def to_json(self):
        e = {"code": self.code, "message": self.message}
        if self.field is not None:
            e["field"] = self.field
        return {"error": e}


def progress(msg):
    sys.stderr.write("progress: " + msg + "\n")
    sys.stderr.flush()


# ----------------------------------------------------------------------------
# strict validation
# ----------------------------------------------------------------------------

def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def v_int(lo, hi):
    def check(v, field):
        if not _is_int(v):
            raise JobError("bad_field", "%s must be an integer" % field, field)
        if not lo <= v <= hi:
            raise JobError("out_of_range", "%s must be in [%d, %d]" % (field, lo, hi), field)
        return v
    return check


def v_num(lo, hi):
    def check(v, field):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise JobError("bad_field", "%s must be a number" % field, field)
        if not lo <= v <= hi:
            raise JobError("out_of_range", "%s must be in [%g, %g]" % (field, lo, hi), field)
        return v
    return check


def v_bool(v, field):
    if not isinstance(v, bool):
        raise JobError("bad_field", "%s must be true or false" % field, field)
    return v


def v_enum(*choices, code="bad_field"):
    def check(v, field):
        if not isinstance(v, str) or v not in choices:
            raise JobError(code, "%s must be one of %s" % (field, ", ".join(choices)), field)
        return v
    return check


def v_list(item, lo=1, hi=10000, unique=False):
    def check(v, field):
        if not isinstance(v, list):
            raise JobError("bad_field", "%s must be an array" % field, field)
        if not lo <= len(v) <= hi:
            raise JobError("out_of_range", "%s must have %d to %d items" % (field, lo, hi), field)
        out = [item(x, "%s[%d]" % (field, i)) for i, x in enumerate(v)]
        if unique and len(set(json.dumps(x, sort_keys=True) for x in out)) != len(out):
            raise JobError("bad_field", "%s has duplicate items" % field, field)
        return out
    return check


def v_obj(spec):
    """spec: name -> (checker, default); default REQUIRED marks a required field."""
    def check(v, field):
        if not isinstance(v, dict):
            raise JobError("bad_field", "%s must be an object" % field, field)
        out = {}
        for k in v:
            if k not in spec:
                f = "%s.%s" % (field, k) if field else k
                raise JobError("unknown_field", "unknown field %s" % f, f)
        for k, (chk, default) in spec.items():
            f = "%s.%s" % (field, k) if field else k
            if k in v:
                out[k] = chk(v[k], f)
            elif default is REQUIRED:
                raise JobError("missing_field", "%s is required" % f, f)
            elif default is not OPTIONAL:
                out[k] = default
        return out
    return check


def v_nullable(chk):
    def check(v, field):
        return None if v is None else chk(v, field)
    return check


REQUIRED = object()
OPTIONAL = object()

DIM = v_int(1, 1 << 20)
# layout: A then B, "n" row-major as the GEMM reads it, "t" stored transposed (forward
# nt, dgrad nn, wgrad tn for nn.Linear); C is row-major. Absent: nn.
LAYOUTS = ("nn", "nt", "tn", "tt")
SHAPE = v_obj({"m": (DIM, REQUIRED), "n": (DIM, REQUIRED), "k": (DIM, REQUIRED),
               "layout": (v_enum(*LAYOUTS), OPTIONAL)})
GEMM_DTYPES = ("bf16", "fp16", "tf32", "fp32", "fp8")
KERNEL_DTYPES = ("bf16", "fp16", "fp8", "tf32")
MEM_DTYPES = ("fp32", "fp16", "bf16")
ELEMENTWISE_OPS = ("add", "gelu", "layernorm_1024", "softmax_1024")


def v_pow2(lo, hi):
    base = v_int(lo, hi)

    def check(v, field):
        base(v, field)
        if v & (v - 1):
            raise JobError("bad_field", "%s must be a power of two" % field, field)
        return v
    return check


KCONFIG = v_obj({
    "bm": (v_pow2(16, 512), REQUIRED), "bn": (v_pow2(16, 512), REQUIRED),
    "bk": (v_pow2(16, 512), REQUIRED), "warps": (v_pow2(1, 32), REQUIRED),
    "stages": (v_int(1, 8), REQUIRED), "group_m": (v_int(1, 256), 8),
    # > 1: triton_matmul_sk.py (fp32 partials over split_k K ranges + a reduce kernel)
    "split_k": (v_int(1, 64), 1)})

TIMING = {
    "warmup": (v_int(0, 1000), None),
    "iters": (v_nullable(v_int(1, 100000)), None),
    "time_budget_ms": (v_num(0.1, 60000), 30.0),
    "min_iters": (v_int(1, 100000), 10),
    "max_iters": (v_int(1, 100000), 200),
    "flush_mib": (v_int(0, 8192), 256),
    # > 0: a GPU spin of this many microseconds (torch.cuda._sleep) is queued before each
    # timed call, so the events time the GPU work alone, not the host's launch path
    # (Triton's Python launcher outran the L2 flush on kernels of a few microseconds).
    "backlog_us": (v_num(0, 100000), 0),
}

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


def _step_params(v, field):
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


SCHEMAS = {
    "cpu_selftest": v_obj({
        "n": (v_int(0, 10 ** 8), REQUIRED),
        "sleep_ms": (v_int(0, 86400000), 0),
        "fail": (v_bool, False),
    }),
    "gemm_sweep": v_obj(dict(TIMING, **{
        "shapes": (v_list(SHAPE, 1, 5000), REQUIRED),
        "dtypes": (v_list(v_enum(*GEMM_DTYPES, code="unsupported_dtype"), 1, 5, unique=True),
                   list(GEMM_DTYPES)),
        "warmup": (v_int(0, 1000), 5),
        "max_call_ms": (v_num(0.001, 600000), 250.0),
    })),
    "kernel_sweep": v_obj(dict(TIMING, **{
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
    })),
    "memory_ops": v_obj(dict(TIMING, **{
        "embedding_bag": (_grid_or_list(EMB_GRID), OPTIONAL),
        "elementwise": (_grid_or_list(ELT_GRID), OPTIONAL),
        # the same grid with the table in pinned host memory read over the host link
        # (uvm_bag.py); adds the link's copy bandwidth (host_copy rows)
        "uvm_embedding_bag": (_grid_or_list(EMB_GRID), OPTIONAL),
        "warmup": (v_int(0, 1000), 5),
        "max_iters": (v_int(1, 100000), 100),
        "time_budget_ms": (v_num(0.1, 60000), 20.0),
        "seed": (v_int(0, 2 ** 31), 0),
    })),
    "step": _step_params,
    "transformer_step": lambda v, field: _transformer_step().check_params(v, field),
    "dlrm_step": lambda v, field: _dlrm_step().check_params(v, field),
}


def _transformer_step():
    import transformer_step  # noqa: PLC0415
    transformer_step.bind(sys.modules[__name__])
    return transformer_step


def _dlrm_step():
    import dlrm_step  # noqa: PLC0415
    dlrm_step.bind(sys.modules[__name__])
    return dlrm_step


def validate_job(job):
    if not isinstance(job, dict):
        raise JobError("bad_field", "the job must be a JSON object", "")
    for k in job:
        if k not in ("kind", "params", "id"):
            raise JobError("unknown_field", "unknown field %s" % k, k)
    if "kind" not in job:
        raise JobError("missing_field", "kind is required", "kind")
    kind = job["kind"]
    if not isinstance(kind, str) or kind not in SCHEMAS:
        raise JobError("bad_field", "kind must be one of %s" % ", ".join(sorted(SCHEMAS)), "kind")
    jid = job.get("id")
    if jid is not None:
        if isinstance(jid, bool) or not isinstance(jid, (str, int)):
            raise JobError("bad_field", "id must be a string or an integer", "id")
        if isinstance(jid, str) and len(jid) > 256:
            raise JobError("out_of_range", "id must be at most 256 characters", "id")
    params = job.get("params", {})
    if not isinstance(params, dict):
        raise JobError("bad_field", "params must be an object", "params")
    params = SCHEMAS[kind](params, "params")
    if kind == "memory_ops" and not any(k in params for k in ("embedding_bag", "elementwise",
                                                               "uvm_embedding_bag")):
        raise JobError("missing_field", "params needs embedding_bag, elementwise or "
                       "uvm_embedding_bag", "params.embedding_bag")
    if kind == "step":
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
    if kind in ("gemm_sweep", "kernel_sweep", "memory_ops"):
        if params["min_iters"] > params["max_iters"]:
            raise JobError("out_of_range", "min_iters must not exceed max_iters", "params.min_iters")
    if kind in ("gemm_sweep", "kernel_sweep"):
        for i, s in enumerate(params["shapes"]):
            if 4 * (s["m"] * s["k"] + s["k"] * s["n"] + 2 * s["m"] * s["n"]) > (64 << 30):
                raise JobError("out_of_range", "shape too large (over 64 GiB of operands)",
                               "params.shapes[%d]" % i)
    out = {"kind": kind, "params": params}
    if jid is not None:
        out["id"] = jid
    return out


def load_job(path):
    try:
        if path == "-":
            raw = sys.stdin.buffer.read(MAX_JOB_BYTES + 1)
        else:
            with open(path, "rb") as f:
                raw = f.read(MAX_JOB_BYTES + 1)
    except OSError as e:
        raise JobError("bad_args", "cannot read %s: %s" % (path, e.strerror or e))
    if len(raw) > MAX_JOB_BYTES:
        raise JobError("out_of_range", "the job file is larger than 1 MiB")

    def no_const(c):
        raise ValueError("invalid number %s" % c)
    try:
        job = json.loads(raw.decode("utf-8"), parse_constant=no_const)
    except (ValueError, UnicodeDecodeError) as e:
        raise JobError("bad_json", "the job is not valid JSON: %s" % e)
    return job


# ----------------------------------------------------------------------------
# partial results on SIGTERM
# ----------------------------------------------------------------------------

_STATE = {"result": None, "emitted": False}


def _clean(x):
    """Replace non-finite floats by None so the output is strict JSON."""
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    return x


def emit(result):
    if _STATE["emitted"]:
        return
    _STATE["emitted"] = True
    sys.stdout.write(json.dumps(_clean(result), indent=1, allow_nan=False) + "\n")
    sys.stdout.flush()


def _on_signal(signum, _frame):
    res = _STATE["result"]
    if res is not None and not _STATE["emitted"]:
        res = dict(res)
        res["partial"] = True
        res["stopped_by"] = signal.Signals(signum).name
        try:
            emit(res)
        except Exception:  # noqa: BLE001 - best effort while stopping
            pass
    err = JobError("internal", "stopped by %s" % signal.Signals(signum).name, rc=EXIT_STOPPED)
    sys.stderr.write(json.dumps(err.to_json()) + "\n")
    sys.stderr.flush()
    os._exit(EXIT_STOPPED)


# ----------------------------------------------------------------------------
# cpu_selftest (standard library only)
# ----------------------------------------------------------------------------

def run_cpu_selftest(job):
    p = job["params"]
    t0 = time.perf_counter()
    n = p["n"]
    s = n * (n - 1) // 2
    sq = 0
    h = 1469598103934665603  # FNV-1a over the decimal digits of 0..n-1, bounded work
    for i in range(n):
        sq += i * i
        if i < 100000:
            for ch in str(i).encode():
                h = ((h ^ ch) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    if sq != (n - 1) * n * (2 * n - 1) // 6:
        raise JobError("internal", "self-test arithmetic mismatch", rc=EXIT_FAILED)
    if p["sleep_ms"]:
        progress("sleeping %d ms" % p["sleep_ms"])
        time.sleep(p["sleep_ms"] / 1000.0)
    if p["fail"]:
        raise JobError("internal", "failing as asked (params.fail)", rc=EXIT_FAILED)
    out = {"kind": "cpu_selftest", "ok": True,
           "result": {"n": n, "sum": s, "sum_squares": sq, "fnv1a_64": "%016x" % h},
           "elapsed_ms": (time.perf_counter() - t0) * 1000.0,
           "runner": RUNNER_VERSION, "python": sys.version.split()[0]}
    if "id" in job:
        out["id"] = job["id"]
    return out


# ----------------------------------------------------------------------------
# GPU helpers (torch imported lazily)
# ----------------------------------------------------------------------------

class Env:
    """torch, the device and the timing method."""

    def __init__(self):
        try:
            import torch  # noqa: PLC0415
        except ImportError as e:
            raise JobError("unavailable", "PyTorch is not installed: %s" % e, rc=EXIT_UNAVAILABLE)
        self.torch = torch
        self.cpu_mode = False
        if not torch.cuda.is_available():
            if os.environ.get("CDPLAN_RUNNER_ALLOW_CPU") == "1":
                self.cpu_mode = True  # for testing the job logic only; timings mean nothing
            else:
                raise JobError("unavailable", "no GPU: torch.cuda.is_available() is false",
                               rc=EXIT_UNAVAILABLE)
        self.dev = torch.device("cpu") if self.cpu_mode else torch.device("cuda")
        self._flush = None

    def device_info(self):
        t = self.torch
        if self.cpu_mode:
            return {"name": "cpu (test mode)", "sms": 0, "mem_bytes": 0, "l2_bytes": 0,
                    "torch": t.__version__, "cuda": None}
        p = t.cuda.get_device_properties(0)
        l2 = getattr(p, "L2_cache_size", None)
        if l2 is None:
            l2 = getattr(p, "l2_cache_size", 0)
        cuda = t.version.cuda if t.version.cuda else ("hip " + str(getattr(t.version, "hip", "")))
        return {"name": p.name, "sms": p.multi_processor_count, "mem_bytes": p.total_memory,
                "l2_bytes": int(l2), "torch": t.__version__, "cuda": cuda}

    def dtype(self, name):
        t = self.torch
        if name == "fp8":
            hip = getattr(t.version, "hip", None)
            if hip and not self.cpu_mode and "gfx94" in getattr(
                    t.cuda.get_device_properties(0), "gcnArchName", ""):
                return t.float8_e4m3fnuz
            return t.float8_e4m3fn
        return {"bf16": t.bfloat16, "fp16": t.float16, "tf32": t.float32,
                "fp32": t.float32}[name]

    def sync(self):
        if not self.cpu_mode:
            self.torch.cuda.synchronize()

    def set_flush(self, mib):
        if mib <= 0:
            self._flush = None
        elif self._flush is None or self._flush.numel() != (mib << 20):
            self._flush = None
            n = mib << 20 if not self.cpu_mode else min(mib, 8) << 20
            self._flush = self.torch.empty(n, dtype=self.torch.uint8, device=self.dev)

    def flush(self):
        if self._flush is not None:
            self._flush.zero_()

    def time_once(self, fn):
        """ms of one call (no flush), events on the GPU."""
        if self.cpu_mode:
            t0 = time.perf_counter()
            fn()
            return (time.perf_counter() - t0) * 1000.0
        s = self.torch.cuda.Event(enable_timing=True)
        e = self.torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        return s.elapsed_time(e)

    def bench(self, fn, p, max_call_ms=None, iters=None):
        """The method of ../shared/data/h200/README.md: one untimed call, a short
        warm-up, the L2 flushed before every timed iteration, each iteration timed
        alone with events. Returns (median ms, min ms, iters)."""
        fn()
        self.sync()
        est = self.time_once(fn)
        if max_call_ms is not None and est > max_call_ms:
            raise TooSlow(est)
        for _ in range(p["warmup"]):
            fn()
        if iters is None:
            iters = p.get("iters")
        if iters is None:
            iters = int(p["time_budget_ms"] / max(est, 1e-3))
            iters = max(p["min_iters"], min(p["max_iters"], iters))
        times = []
        if self.cpu_mode:
            for _ in range(iters):
                self.flush()
                t0 = time.perf_counter()
                fn()
                times.append((time.perf_counter() - t0) * 1000.0)
        else:
            ev = self.torch.cuda.Event
            starts = [ev(enable_timing=True) for _ in range(iters)]
            ends = [ev(enable_timing=True) for _ in range(iters)]
            spin = int(p.get("backlog_us", 0) * 2000)  # cycles, ~1 us each at 2 GHz
            for i in range(iters):
                self.flush()
                if spin > 0:
                    self.torch.cuda._sleep(spin)
                starts[i].record()
                fn()
                ends[i].record()
            self.torch.cuda.synchronize()
            times = [s.elapsed_time(e) for s, e in zip(starts, ends)]
        return statistics.median(times), min(times), iters

    def free(self):
        import gc  # noqa: PLC0415
        gc.collect()
        if not self.cpu_mode:
            self.torch.cuda.empty_cache()


class TooSlow(Exception):
    def __init__(self, ms):
        super().__init__("one call took %.1f ms" % ms)
        self.ms = ms


def _randn(env, shape, dtype_name, gen=None):
    t = env.torch
    if dtype_name == "fp8":
        return t.randn(shape, device=env.dev, dtype=t.float32).to(env.dtype("fp8"))
    return t.randn(shape, device=env.dev, dtype=env.dtype(dtype_name))


def _set_tf32(env, on):
    t = env.torch
    t.backends.cuda.matmul.allow_tf32 = bool(on)
    t.backends.cudnn.allow_tf32 = bool(on)


def _gemm_fn(env, a, b, dtype_name):
    t = env.torch
    if dtype_name == "fp8":
        one = t.ones((), device=env.dev, dtype=t.float32)
        return lambda: t._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=t.bfloat16)
    return lambda: t.matmul(a, b)


def _gemm_operands(env, m, n, k, dtype_name, layout=None):
    """A[M,K], B[K,N] in layout ("t": a transposed view of a row-major copy); without a
    layout: both row-major, and fp8's B column-major (as _scaled_mm needs)."""
    if layout is None:
        layout = "nt" if dtype_name == "fp8" else "nn"
    a = _randn(env, (m, k), dtype_name) if layout[0] == "n" else _randn(env, (k, m), dtype_name).t()
    b = _randn(env, (k, n), dtype_name) if layout[1] == "n" else _randn(env, (n, k), dtype_name).t()
    return a, b


def _fp8_layout_ok(layout):
    return layout in (None, "nt")  # torch._scaled_mm: A row-major, B column-major


def _tflops(m, n, k, ms):
    return 2.0 * m * n * k / (ms * 1e-3) / 1e12 if ms > 0 else None


def _fp8_ok(s):
    return s["m"] % 16 == 0 and s["n"] % 16 == 0 and s["k"] % 16 == 0


# ----------------------------------------------------------------------------
# gemm_sweep
# ----------------------------------------------------------------------------

def run_gemm_sweep(job, env):
    p = job["params"]
    env.set_flush(p["flush_mib"])
    res = {"kind": "gemm_sweep",
           "layout": "A row-major MxK, B row-major KxN (fp8: B column-major), out row-major; "
                     "L2 flushed",
           "device": env.device_info(), "rows": [], "skipped": []}
    _STATE["result"] = res
    total = len(p["shapes"]) * len(p["dtypes"])
    done = 0
    for s in p["shapes"]:
        m, n, k = s["m"], s["n"], s["k"]
        for dt in p["dtypes"]:
            done += 1
            lay = s.get("layout")
            if dt == "fp8" and (not _fp8_ok(s) or not _fp8_layout_ok(lay)):
                res["skipped"].append({"m": m, "n": n, "k": k, "dtype": dt,
                                       "reason": "fp8 needs M, N, K multiples of 16 and "
                                                 "layout nt"})
                continue
            try:
                _set_tf32(env, dt == "tf32")
                a, b = _gemm_operands(env, m, n, k, dt, lay)
                ms, mn, it = env.bench(_gemm_fn(env, a, b, dt), p, max_call_ms=p["max_call_ms"])
                row = {"m": m, "n": n, "k": k, "dtype": dt, "ms": ms, "min_ms": mn, "iters": it,
                       "tflops": _tflops(m, n, k, ms)}
                if lay:
                    row["layout"] = lay
                res["rows"].append(row)
                progress("gemm %d/%d %dx%dx%d %s %.4f ms %.1f TFLOP/s" %
                         (done, total, m, n, k, dt, ms, row["tflops"] or 0))
            except TooSlow as e:
                res["skipped"].append({"m": m, "n": n, "k": k, "dtype": dt,
                                       "reason": "one call took %.1f ms > max_call_ms" % e.ms})
            except Exception as e:  # noqa: BLE001 - record and go on
                res["skipped"].append({"m": m, "n": n, "k": k, "dtype": dt,
                                       "reason": "%s: %s" % (type(e).__name__, str(e)[:300])})
                progress("gemm %dx%dx%d %s failed: %s" % (m, n, k, dt, e))
                if _cuda_broken(e):
                    raise
            finally:
                a = b = None  # noqa: F841
        env.free()
    _set_tf32(env, False)
    return res


def _cuda_broken(e):
    s = str(e)
    return "illegal memory access" in s or "unspecified launch failure" in s or \
        "device-side assert" in s


# ----------------------------------------------------------------------------
# kernel_sweep
# ----------------------------------------------------------------------------

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


def run_kernel_sweep(job, env):
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
    _STATE["result"] = res

    workers = p["precompile_workers"]
    if workers is None:
        workers = max(0, min(16, (os.cpu_count() or 1) - 1))
    if env.cpu_mode:
        workers = 0
    tasks, seen = [], set()
    for dt in p["dtypes"]:
        for s in p["shapes"]:
            if dt == "fp8" and not _fp8_ok(s):
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
            if dt == "fp8" and not _fp8_ok(s):
                row["failed"].append({"reason": "fp8 needs M, N, K multiples of 16"})
                res["rows"].append(row)
                continue
            t_shape = time.perf_counter()
            _set_tf32(env, dt == "tf32")
            a, b = _gemm_operands(env, m, n, k, dt, lay or "nn")
            out_dt = t.bfloat16 if dt == "fp8" else env.dtype(dt)
            c = t.empty((m, n), device=env.dev, dtype=out_dt)
            max_s = max(cf.get("split_k", 1) for cf in cfgs)
            w = t.empty((max_s * m * n,), device=env.dev, dtype=t.float32) if max_s > 1 else None
            ref = None
            try:
                if dt == "fp8" and not _fp8_layout_ok(lay):
                    raise JobError("unsupported", "cuBLAS fp8 (torch._scaled_mm) takes layout nt")
                if dt == "fp8":
                    bt = b.t().contiguous().t()  # column-major copy for cuBLAS
                    fn = _gemm_fn(env, a, bt, "fp8")
                else:
                    fn = _gemm_fn(env, a, b, dt)
                row["cublas_ms"] = env.bench(fn, p)[0]
                if p["check"]:
                    ref = t.matmul(a.float(), b.float()) if dt != "tf32" else fn().float()
                    ref_norm = float(t.linalg.norm(ref))
            except Exception as e:  # noqa: BLE001
                row["cublas_error"] = "%s: %s" % (type(e).__name__, str(e)[:300])
                if _cuda_broken(e):
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
                    if rec_err is not None:
                        rec["rel_err"] = rec_err
                    row["configs"].append(rec)
                except TooSlow as e:
                    rec["reason"] = "one call took %.1f ms > max_call_ms" % e.ms
                    row["failed"].append(rec)
                except Exception as e:  # noqa: BLE001
                    rec["reason"] = "%s: %s" % (type(e).__name__, str(e).strip()[:300])
                    row["failed"].append(rec)
                    if _cuda_broken(e):
                        raise
            best = min((x["ms"] for x in row["configs"]), default=None)
            progress("kernel %s %d/%d %dx%dx%d: %d ran, %d failed, best %s ms, cublas %s ms, "
                     "%.1f s" % (dt, si + 1, len(p["shapes"]), m, n, k, len(row["configs"]),
                                 len(row["failed"]), "%.4f" % best if best else "-",
                                 "%.4f" % row["cublas_ms"] if row["cublas_ms"] else "-",
                                 time.perf_counter() - t_shape))
            a = b = c = w = ref = None
            env.free()
    _set_tf32(env, False)
    return res


# ----------------------------------------------------------------------------
# memory_ops
# ----------------------------------------------------------------------------

_ELT = {"fp32": 4, "fp16": 2, "bf16": 2}


def _grid(g, keys):
    out = [{}]
    for k in keys:
        out = [dict(o, **{k: v}) for o in out for v in g[k]]
    return out


def run_memory_ops(job, env):
    p = job["params"]
    t = env.torch
    F = t.nn.functional
    env.set_flush(p["flush_mib"])
    t.manual_seed(p["seed"])
    res = {"kind": "memory_ops", "device": env.device_info(), "rows": [], "failed": []}
    _STATE["result"] = res

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
                    if _cuda_broken(e):
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
                if _cuda_broken(e):
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
                if _cuda_broken(e):
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
                _fill_uniform(t, bag.weight, 1.0, env.dev, env.cpu_mode)
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
            if _cuda_broken(e):
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


# ----------------------------------------------------------------------------
# step: DLRM-style training step
# ----------------------------------------------------------------------------

def _mlp(nn, sizes, relu_last, device):
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1], device=device))
        if i < len(sizes) - 2 or relu_last:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


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


def _fill_uniform(t, w, bound, dev, cpu_mode):
    """w.uniform_(-bound, bound). A host table is filled from GPU-generated chunks
    (CPU uniform_ runs on one thread: minutes for tens of GB)."""
    if w.device.type != "cpu" or cpu_mode:
        w.uniform_(-bound, bound)
        return
    step = max(1, (64 << 20) // max(1, w.shape[1]))  # 256 MiB of fp32 per chunk
    buf = t.empty((min(step, w.shape[0]), w.shape[1]), device=dev, dtype=w.dtype)
    for a in range(0, w.shape[0], step):
        b = min(w.shape[0], a + step)
        chunk = buf[:b - a]
        chunk.uniform_(-bound, bound)
        w[a:b].copy_(chunk)
    del buf


def run_step(job, env):
    t = env.torch
    nn = t.nn
    res = {"kind": "step", "rows": [], "failed": [],
           "optimizers": "embeddings: SGD on sparse grads; dense: fused Adam",
           "device": env.device_info()}
    _STATE["result"] = res
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
            if _cuda_broken(e):
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
    _set_tf32(env, c["tf32"])
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
                _fill_uniform(t, w, 1.0 / math.sqrt(r), dev, env.cpu_mode)
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
    bottom = _mlp(nn, [13] + c["bottom"], True, dev)
    top = _mlp(nn, [top_in] + c["top"], False, dev)
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
        dense, idx, y = batches[i % nb]
        opt_dense.zero_grad(set_to_none=True)
        if opt_sparse:
            opt_sparse.zero_grad(set_to_none=True)
        with autocast():
            out = forward(dense, idx)
        loss = F.binary_cross_entropy_with_logits(out.float().squeeze(1), y)
        loss.backward()
        opt_dense.step()
        if opt_sparse:
            opt_sparse.step()
        return loss

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
            out["profile"] = _profile_steps(env, t, step, c["warmup"] + c["steps"])
        except Exception as e:  # noqa: BLE001 -- the timed steps stand without it
            out["profile_error"] = "%s: %s" % (type(e).__name__, str(e)[:300])
            if _cuda_broken(e):
                raise
    _set_tf32(env, False)
    return out


def _profile_steps(env, t, step, first, n=3):
    """Runs n steps under torch.profiler; returns per-step wall ms, GPU busy ms (the union
    of the kernels' intervals: when the GPU idles waiting for the host, busy < wall), the
    kernel count and the 40 kernels with the most GPU time."""
    from torch.profiler import ProfilerActivity, profile  # noqa: PLC0415
    env.sync()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        t0 = time.perf_counter()
        for i in range(n):
            step(first + i)
        env.sync()
        wall = (time.perf_counter() - t0) * 1000.0
    spans, by_name, api = [], {}, {}
    for e in prof.events():
        if getattr(e, "device_type", None) != t.autograd.DeviceType.CUDA:
            if e.name.startswith("cuda") and ("Synchronize" in e.name or "Memcpy" in e.name):
                api[e.name] = api.get(e.name, 0) + 1  # where the host waits for the GPU
            continue
        # user annotations (Optimizer.step#SGD.step, ...) span idle gaps: not kernels
        if getattr(e, "is_user_annotation", False) or e.name.startswith(("Optimizer.", "ProfilerStep")):
            continue
        a, b = e.time_range.start, e.time_range.end
        if b <= a:
            continue
        spans.append((a, b))
        k = by_name.setdefault(e.name[:160], [0, 0.0])
        k[0] += 1
        k[1] += (b - a) / 1000.0
    spans.sort()
    busy, cur_a, cur_b = 0.0, None, None
    for a, b in spans:
        if cur_b is None or a > cur_b:
            if cur_b is not None:
                busy += cur_b - cur_a
            cur_a, cur_b = a, b
        else:
            cur_b = max(cur_b, b)
    if cur_b is not None:
        busy += cur_b - cur_a
    top = sorted(by_name.items(), key=lambda kv: -kv[1][1])[:40]
    cpu = sorted(prof.key_averages(), key=lambda a: -a.self_cpu_time_total)[:25]
    return {"steps": n, "wall_ms": wall / n, "gpu_busy_ms": busy / 1000.0 / n,
            "kernels": len(spans) / n, "gpu_kernel_ms": sum(v[1] for v in by_name.values()) / n,
            "top": [{"name": k, "count": v[0] / n, "ms": v[1] / n} for k, v in top],
            "cuda_api": {k: v / n for k, v in sorted(api.items())},
            "cpu_top": [{"name": a.key[:160], "count": a.count / n,
                         "self_ms": a.self_cpu_time_total / 1000.0 / n} for a in cpu]}


# ----------------------------------------------------------------------------
# main
# ----------------------------------------------------------------------------

RUNNERS = {"gemm_sweep": run_gemm_sweep, "kernel_sweep": run_kernel_sweep,
           "memory_ops": run_memory_ops, "step": run_step,
           "transformer_step": lambda job, env: _transformer_step().run(job, env, _STATE),
           "dlrm_step": lambda job, env: _dlrm_step().run(job, env, _STATE)}

USAGE = "usage: runner.py [--check] JOB.json|-  (result JSON on stdout)"


def main(argv):
    args = argv[1:]
    check_only = False
    if args and args[0] in ("-h", "--help"):
        sys.stdout.write(USAGE + "\n" + __doc__)
        return 0
    if args and args[0] == "--version":
        sys.stdout.write(RUNNER_VERSION + "\n")
        return 0
    if args and args[0] == "--check":
        check_only = True
        args = args[1:]
    try:
        if len(args) != 1 or (args[0].startswith("-") and args[0] != "-"):
            raise JobError("bad_args", USAGE)
        job = validate_job(load_job(args[0]))
        if check_only:
            emit({"ok": True, "job": job})
            return 0
        if job["kind"] == "cpu_selftest":
            emit(run_cpu_selftest(job))
            return 0
        signal.signal(signal.SIGTERM, _on_signal)
        signal.signal(signal.SIGINT, _on_signal)
        env = Env()
        t0 = time.time()
        res = RUNNERS[job["kind"]](job, env)
        res["runner"] = RUNNER_VERSION
        res["started_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t0))
        res["elapsed_s"] = time.time() - t0
        if env.cpu_mode:
            res["cpu_test_mode"] = True
        if "id" in job:
            res["id"] = job["id"]
        emit(res)
        return 0
    except JobError as e:
        sys.stderr.write(json.dumps(e.to_json()) + "\n")
        return e.rc
    except Exception as e:  # noqa: BLE001
        import traceback  # noqa: PLC0415
        traceback.print_exc(file=sys.stderr)
        err = JobError("internal", "%s: %s" % (type(e).__name__, str(e)[:500]), rc=EXIT_FAILED)
        sys.stderr.write(json.dumps(err.to_json()) + "\n")
        return EXIT_FAILED


if __name__ == "__main__":
    sys.exit(main(sys.argv))
