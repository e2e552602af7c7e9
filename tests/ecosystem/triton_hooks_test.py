"""triton_hooks_test.py: tools/cdplan_triton.py, the @triton.autotune hooks,
on CPU without Triton, calling the real cdplan binary and a real `cdplan
serve` on 127.0.0.1 port 0. Fake configs (objects with .kwargs, .num_warps,
.num_stages) are pruned to cdplan's top-k in cdplan's order (checked against
`cdplan kernels select` run directly), infeasible ones dropped, perf_model
gives cdplan's ms (inf when infeasible), Triton's Autotuner.prune_configs
logic over the prune_configs_by dict keeps the same top-k, the dtype comes
from the tensors, and mistakes are named.
usage: triton_hooks_test.py PATH_TO_CDPLAN
"""
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from types import SimpleNamespace

BIN = os.path.abspath(sys.argv[1])
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "tools"))
import cdplan_triton  # noqa: E402

failures = []
tmp = tempfile.mkdtemp(prefix="cdplan-hooks-")
db = os.path.join(tmp, "h.db")


class FakeConfig:
    """What the hooks read of a triton.Config (hashable by identity, as Triton's are hashable)."""

    def __init__(self, kwargs, num_warps, num_stages):
        self.kwargs, self.num_warps, self.num_stages = kwargs, num_warps, num_stages


def cfg(bm, bn, bk, w, s, g=8, tutorial=True):
    names = ("BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K", "GROUP_SIZE_M") if tutorial else \
        ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M")
    return FakeConfig(dict(zip(names, (bm, bn, bk, g))), w, s)


CONFIGS = [cfg(32, 32, 32, 2, 5), cfg(64, 64, 32, 4, 4), cfg(128, 128, 128, 4, 4),  # infeasible
           cfg(64, 128, 32, 4, 4), cfg(128, 64, 32, 4, 4, tutorial=False), cfg(128, 128, 32, 4, 4),
           cfg(128, 256, 64, 8, 3), cfg(64, 256, 32, 4, 4), cfg(256, 128, 64, 8, 3, g=4)]
Tensor = SimpleNamespace


def direct(m, n, k, dtype, configs):
    cands = [cdplan_triton.config_candidate(c) for c in configs]
    req = {"hardware": "h200", "problems": [{"m": m, "n": n, "k": k, "dtype": dtype}],
           "candidates": cands}
    r = subprocess.run([BIN, "kernels", "select", "-", "--db", db], input=json.dumps(req),
                       capture_output=True, text=True, timeout=60, check=True)
    ranked = json.loads(r.stdout)["results"][0]["ranked"]
    keys = [cdplan_triton._key(c) for c in cands]
    return [(configs[keys.index(cdplan_triton._key(e))], e["ms"]) for e in ranked]


def check(what, cond, detail=""):
    if not cond:
        failures.append(f"{what}: {detail}")


def autotuner_prune(prune_by, configs, nargs):
    """Triton's Autotuner.prune_configs (python/triton/runtime/autotuner.py)."""
    pruned = configs
    if prune_by.get("early_config_prune"):
        pruned = prune_by["early_config_prune"](configs, nargs)
    top_k = prune_by["top_k"]
    if len(pruned) > top_k:
        est = {c: prune_by["perf_model"](**nargs, **c.kwargs, num_warps=c.num_warps,
                                          num_stages=c.num_stages) for c in pruned}
        pruned = sorted(est, key=lambda c: est[c])[:top_k]
    return pruned


def run_checks(sel, label):
    for (m, n, k), torch_dtype, dtype in (((4096, 1024, 512), "torch.bfloat16", "bf16"),
                                          ((512, 512, 8192), "torch.float16", "fp16")):
        nargs = {"a_ptr": Tensor(dtype=torch_dtype), "M": m, "N": n, "K": k}
        want = direct(m, n, k, dtype, CONFIGS)
        order = [c for c, _ in want]
        check(f"{label} {m}x{n}x{k}: cdplan reorders the list", order != [
            c for c in CONFIGS if c in order], "the ranking equals the input order: no test")
        check(f"{label}: infeasible present", CONFIGS[2] not in order, "128x128x128x4 ranked")
        for top_k in (1, 3):
            got = sel.prune(CONFIGS, nargs, top_k)
            check(f"{label} {m}x{n}x{k} {dtype} top_{top_k}", got == order[:top_k],
                  f"{[c.kwargs for c in got]} != {[c.kwargs for c in order[:top_k]]}")
            got = autotuner_prune(sel.prune_configs_by(top_k=top_k), CONFIGS, nargs)
            check(f"{label} Autotuner.prune_configs top_{top_k}", got == order[:top_k],
                  f"{[c.kwargs for c in got]}")
        for c, ms in want[:3]:
            pm = sel.perf_model(**nargs, **c.kwargs, num_warps=c.num_warps, num_stages=c.num_stages)
            check(f"{label} perf_model", abs(pm - ms) < 1e-12, f"{pm} != {ms}")
        c = CONFIGS[2]
        pm = sel.perf_model(**nargs, **c.kwargs, num_warps=c.num_warps, num_stages=c.num_stages)
        check(f"{label} perf_model infeasible", math.isinf(pm), f"{pm}")


# the CLI
run_checks(cdplan_triton.Selector("h200", binary=BIN, db=db), "cli")
# a perf_model alone, the configs registered up front (one request per shape)
sel = cdplan_triton.Selector("h200", configs=CONFIGS, binary=BIN, db=db)
nargs = {"a_ptr": Tensor(dtype="torch.bfloat16"), "M": 4096, "N": 1024, "K": 512}
got = autotuner_prune({"perf_model": sel.perf_model, "top_k": 2}, CONFIGS, nargs)
check("perf_model alone", got == [c for c, _ in direct(4096, 1024, 512, "bf16", CONFIGS)][:2],
      f"{[c.kwargs for c in got]}")
check("perf_model alone: one request", len(sel._cache) == 1, f"{len(sel._cache)} requests")

# mistakes
for what, fn, exc, text in (
        ("no shape", lambda: sel.prune(CONFIGS, {"M": 1, "N": 2}, 1), ValueError, "K"),
        ("bad config", lambda: sel.prune([FakeConfig({"BLOCK_SIZE_M": 64}, 4, 3)], nargs, 1),
         ValueError, "BLOCK_SIZE_N"),
        ("bad dtype", lambda: sel.prune(CONFIGS, {**nargs, "a_ptr": Tensor(dtype="torch.complex64")}, 1),
         ValueError, "complex64"),
        ("unknown hardware", lambda: cdplan_triton.Selector("nope", binary=BIN, db=db).prune(
            CONFIGS, nargs, 1), cdplan_triton.CdplanError, "nope"),
        ("no binary", lambda: cdplan_triton.Selector("h200", binary=os.path.join(tmp, "none")).prune(
            CONFIGS, nargs, 1), cdplan_triton.CdplanError, "cannot run")):
    try:
        fn()
        failures.append(f"{what}: no error")
    except exc as e:
        check(what, text in str(e), str(e))

# the HTTP API ($CDPLAN_SERVER)
srv = subprocess.Popen([BIN, "serve", "--listen", "127.0.0.1:0", "--db", os.path.join(tmp, "s.db")],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
try:
    url = json.loads(srv.stdout.readline())["listening"]
    os.environ["CDPLAN_SERVER"] = url
    os.environ.pop("CDPLAN_TOKEN", None)
    sel = cdplan_triton.Selector("h200", binary=os.path.join(tmp, "never-run"))
    check("server from $CDPLAN_SERVER", sel.server == url, str(sel.server))
    run_checks(sel, "http")
    try:
        cdplan_triton.Selector("nope").prune(CONFIGS, nargs, 1)
        failures.append("http unknown hardware: no error")
    except cdplan_triton.CdplanError as e:
        check("http unknown hardware", "404" in str(e) and "nope" in str(e), str(e))
finally:
    srv.terminate()
    srv.wait(timeout=10)

if failures:
    print("\n".join("FAIL: " + f for f in failures))
    sys.exit(1)
print("ok: cdplan_triton hooks keep cdplan's top-k in its order (CLI and HTTP)")
