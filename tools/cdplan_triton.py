"""cdplan_triton: zero-warmup hooks for @triton.autotune, backed by cdplan's
kernel selector (`cdplan kernels select`, docs/kernels.md).

    import cdplan_triton
    configs = [triton.Config({'BLOCK_SIZE_M': 128, 'BLOCK_SIZE_N': 256, 'BLOCK_SIZE_K': 64,
                              'GROUP_SIZE_M': 8}, num_warps=8, num_stages=3), ...]
    sel = cdplan_triton.Selector('h200', configs=configs)
    @triton.autotune(configs=configs, key=['M', 'N', 'K'],
                     prune_configs_by=sel.prune_configs_by(top_k=2))
    @triton.jit
    def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, ...): ...

Triton then benchmarks only cdplan's best `top_k` configs for each new shape
(top_k=1: no benchmarking at all). The hooks follow Triton's Autotuner:
`early_config_prune(configs, named_args, **kwargs)` returns the configs
cdplan ranks best first (infeasible ones dropped), at most top_k;
`perf_model(**kwargs)` returns cdplan's predicted milliseconds for one
config (inf when infeasible), for `prune_configs_by={'perf_model': ...}`.

The shape is read from the kernel's arguments named by `shape` (default
M, N, K); the dtype from the `dtype` argument, else from the first tensor
argument's dtype (bfloat16 bf16, float16 fp16, float8* fp8, float32 tf32,
int8 int8). Config meta-parameters: BLOCK_SIZE_M/N/K or BLOCK_M/N/K, and
GROUP_SIZE_M or GROUP_M (default 8); num_warps, num_stages.

Transport: with $CDPLAN_SERVER (or server=) an HTTP POST to
/v1/kernels/select with $CDPLAN_TOKEN as the Bearer token; otherwise the
`cdplan` binary ($CDPLAN_BIN, else `cdplan` on PATH) with --db $CDPLAN_DB (or
db=), so calibrations stored there are used. Answers are cached per shape.
Standard library only; Triton is not imported.
"""
import json
import math
import os
import subprocess
import urllib.error
import urllib.request

_DTYPES = (("bfloat16", "bf16"), ("float16", "fp16"), ("float8", "fp8"), ("float32", "tf32"),
           ("int8", "int8"))
_NAMES = {"block_m": ("BLOCK_SIZE_M", "BLOCK_M"), "block_n": ("BLOCK_SIZE_N", "BLOCK_N"),
          "block_k": ("BLOCK_SIZE_K", "BLOCK_K"), "group_m": ("GROUP_SIZE_M", "GROUP_M")}
_KEY = ("block_m", "block_n", "block_k", "num_warps", "num_stages", "group_m")


class CdplanError(RuntimeError):
    """cdplan refused the request or could not be reached; the message is its error."""


def candidate(meta, num_warps=None, num_stages=None):
    """The cdplan candidate for one config's meta-parameters (a dict)."""
    out = {}
    for field, names in _NAMES.items():
        val = next((meta[n] for n in names if n in meta), None)
        if val is None and field == "group_m":
            val = 8
        if val is None:
            raise ValueError(f"config has no {names[0]} (or {names[1]}): {meta}")
        out[field] = int(val)
    out["num_warps"] = int(num_warps if num_warps is not None else meta.get("num_warps", 4))
    out["num_stages"] = int(num_stages if num_stages is not None else meta.get("num_stages", 3))
    return out


def config_candidate(cfg):
    """The candidate of a triton.Config (anything with .kwargs, .num_warps, .num_stages)."""
    return candidate(cfg.kwargs, cfg.num_warps, cfg.num_stages)


def _key(c):
    return tuple(c[f] for f in _KEY)


def dtype_name(value):
    """cdplan's dtype for a torch/triton dtype or its name (float32 counts as tf32, tl.dot's default)."""
    s = str(value).replace("torch.", "")
    if s in ("bf16", "fp16", "fp8", "tf32", "fp32", "int8"):
        return s
    for prefix, name in _DTYPES:
        if s.startswith(prefix):
            return name
    raise ValueError(f"dtype {value!r} has no cdplan kernel model (bf16, fp16, fp8, tf32, int8)")


class Selector:
    """cdplan's ranking of a list of Triton configs for one accelerator."""

    def __init__(self, hardware, configs=None, shape=("M", "N", "K"), dtype=None, server=None,
                 binary=None, db=None, timeout=60):
        self.hardware = hardware
        self.shape = tuple(shape)
        self.dtype = dtype
        self.server = server if server is not None else os.environ.get("CDPLAN_SERVER") or None
        self.binary = binary or os.environ.get("CDPLAN_BIN") or "cdplan"
        self.db = db or os.environ.get("CDPLAN_DB") or None
        self.timeout = timeout
        self.candidates = [config_candidate(c) for c in configs] if configs else None
        self._cache = {}

    # -- the selector ---------------------------------------------------------------
    def _request(self, body):
        data = json.dumps(body)
        if self.server:
            req = urllib.request.Request(self.server.rstrip("/") + "/v1/kernels/select",
                                         data=data.encode(), method="POST",
                                         headers={"Content-Type": "application/json"})
            token = os.environ.get("CDPLAN_TOKEN")
            if token:
                req.add_header("Authorization", "Bearer " + token)
            try:
                with urllib.request.urlopen(req, timeout=self.timeout) as r:
                    return json.loads(r.read())
            except urllib.error.HTTPError as e:
                raise CdplanError(f"cdplan server: HTTP {e.code}: {e.read().decode(errors='replace')}")
            except urllib.error.URLError as e:
                raise CdplanError(f"cdplan server {self.server}: {e.reason}")
        cmd = [self.binary, "kernels", "select", "-"]
        if self.db:
            cmd += ["--db", self.db]
        try:
            r = subprocess.run(cmd, input=data, capture_output=True, text=True, timeout=self.timeout)
        except OSError as e:
            raise CdplanError(f"cannot run {self.binary}: {e}")
        if r.returncode:
            raise CdplanError(f"cdplan kernels select exit {r.returncode}: {r.stderr.strip()}")
        return json.loads(r.stdout)

    def rank(self, m, n, k, dtype="bf16", candidates=None):
        """cdplan's ranked entries (dicts with the candidate fields and "ms"), fastest first."""
        cands = candidates if candidates is not None else self.candidates
        uniq = list({_key(c): c for c in cands}.values()) if cands else None
        key = (int(m), int(n), int(k), dtype, tuple(_key(c) for c in uniq) if uniq else None)
        if key not in self._cache:
            body = {"hardware": self.hardware,
                    "problems": [{"m": int(m), "n": int(n), "k": int(k), "dtype": dtype}]}
            if uniq:
                body["candidates"] = uniq
            self._cache[key] = self._request(body)["results"][0]["ranked"]
        return self._cache[key]

    # -- the problem from the kernel's arguments -------------------------------------
    def _problem(self, args):
        try:
            m, n, k = (int(args[name]) for name in self.shape)
        except KeyError as e:
            raise ValueError(f"kernel argument {e.args[0]} (the shape) not given; "
                             f"Selector(shape=...) names M, N, K") from None
        dtype = self.dtype or args.get("dtype")
        if dtype is None:
            dtype = next((v.dtype for v in args.values() if hasattr(v, "dtype")), "bf16")
        return m, n, k, dtype_name(dtype)

    # -- Triton's hooks --------------------------------------------------------------
    def early_config_prune(self, configs, named_args, **kwargs):
        """The configs cdplan ranks best, in its order, infeasible ones dropped (all of them
        before top_k: Triton's Autotuner then keeps the first top_k via perf_model)."""
        m, n, k, dtype = self._problem({**named_args, **kwargs})
        cands = [config_candidate(c) for c in configs]
        order = {}
        for i, entry in enumerate(self.rank(m, n, k, dtype, cands)):
            order.setdefault(_key(entry), i)
        kept = [c for c, cand in zip(configs, cands) if _key(cand) in order]
        return sorted(kept, key=lambda c: order[_key(config_candidate(c))])

    def perf_model(self, **kwargs):
        """cdplan's predicted ms for the config in kwargs (inf when infeasible)."""
        m, n, k, dtype = self._problem(kwargs)
        cand = candidate(kwargs)
        for (cm, cn, ck, cd, _), ranked in self._cache.items():  # ranked already (early prune)
            if (cm, cn, ck, cd) == (m, n, k, dtype):
                hit = [e for e in ranked if _key(e) == _key(cand)]
                if hit:
                    return float(hit[0]["ms"])
        cands = self.candidates if self.candidates and any(
            _key(c) == _key(cand) for c in self.candidates) else [cand]
        for entry in self.rank(m, n, k, dtype, cands):
            if _key(entry) == _key(cand):
                return float(entry["ms"])
        return math.inf

    def prune(self, configs, named_args, top_k):
        """cdplan's top_k of configs, in its order (what Triton benchmarks)."""
        return self.early_config_prune(configs, named_args)[:top_k]

    def prune_configs_by(self, top_k=3):
        """The dict for @triton.autotune(prune_configs_by=...)."""
        return {"early_config_prune": self.early_config_prune, "perf_model": self.perf_model,
                "top_k": top_k}
