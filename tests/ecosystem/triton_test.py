"""triton_test.py: `cdplan kernels select --format triton` and `--format
triton-heuristic` print Python that parses (ast) into triton.Config calls
with the matmul tutorial's meta-parameter names; AMD configs carry
waves_per_eu, matrix_instr_nonkdim and kpack (1 on gfx950, where Triton
overwrites other values), NVIDIA ones do not; the heuristic module has one
config per shape, the same as the JSON answer's chosen config.
usage: triton_test.py PATH_TO_CDPLAN
"""
import ast
import json
import os
import subprocess
import sys
import tempfile

BIN = sys.argv[1]
TUTORIAL = {"BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K", "GROUP_SIZE_M"}
AMD = {"waves_per_eu", "matrix_instr_nonkdim", "kpack"}
failures = []
db = os.path.join(tempfile.mkdtemp(prefix="cdplan-triton-"), "t.db")
problems = [{"m": 4096, "n": 4096, "k": 4096, "dtype": "bf16"},
            {"m": 8192, "n": 1024, "k": 512, "dtype": "fp16"},
            {"m": 512, "n": 512, "k": 8192, "dtype": "bf16"}]


def select(hw, fmt):
    req = json.dumps({"hardware": hw, "problems": problems})
    r = subprocess.run([BIN, "kernels", "select", "-", f"--format={fmt}", "--db", db],
                       input=req, capture_output=True, text=True, timeout=60)
    if r.returncode:
        failures.append(f"{hw} {fmt}: exit {r.returncode} {r.stderr}")
    return r.stdout


def configs(tree):
    """(kwargs dict, num_warps, num_stages) of every triton.Config call."""
    out = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "Config":
            kw = {k.arg: ast.literal_eval(k.value) for k in n.keywords}
            out.append((ast.literal_eval(n.args[0]), kw.get("num_warps"), kw.get("num_stages")))
    return out


for hw, vendor, arch in (("h200", "nvidia", "sm_90"), ("mi300x", "amd", "gfx942"), ("mi355x", "amd", "gfx950")):
    doc = json.loads(select(hw, "json") or "{}")
    chosen = [r.get("triton_config") for r in doc.get("results", [])]
    for fmt in ("triton", "triton-heuristic"):
        text = select(hw, fmt)
        try:
            tree = ast.parse(text)
        except SyntaxError as e:
            failures.append(f"{hw} {fmt}: not Python: {e}")
            continue
        cfgs = configs(tree)
        want = len(problems) if fmt == "triton-heuristic" else None
        if not cfgs or (want and len(cfgs) != want):
            failures.append(f"{hw} {fmt}: {len(cfgs)} configs")
        for meta, warps, stages in cfgs:
            keys = set(meta)
            if not TUTORIAL <= keys:
                failures.append(f"{hw} {fmt}: names {sorted(keys)} lack the tutorial's")
            if vendor == "amd":
                if not AMD <= keys:
                    failures.append(f"{hw} {fmt}: AMD options missing: {sorted(keys)}")
                elif meta["kpack"] != (1 if arch == "gfx950" else 2) or meta["matrix_instr_nonkdim"] != 16 \
                        or not 1 <= meta["waves_per_eu"] <= 16:
                    failures.append(f"{hw} {fmt}: AMD options {meta}")
            elif keys & AMD:
                failures.append(f"{hw} {fmt}: AMD options on NVIDIA: {sorted(keys & AMD)}")
            if warps not in (1, 2, 4, 8, 16) or not isinstance(stages, int) or stages < 1:
                failures.append(f"{hw} {fmt}: num_warps {warps} num_stages {stages}")
        if fmt == "triton-heuristic":
            fns = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
            if not {"config_for", "heuristics"} <= fns:
                failures.append(f"{hw}: heuristic module lacks config_for/heuristics: {fns}")
            assigns = [n for n in tree.body if isinstance(n, ast.Assign) and n.targets[0].id == "CONFIGS"]
            keys = [ast.literal_eval(k) for k in assigns[0].value.keys] if assigns else []
            if keys != [(p["m"], p["n"], p["k"], p["dtype"]) for p in problems]:
                failures.append(f"{hw}: CONFIGS keys {keys}")
            for c in chosen:
                if c not in text:
                    failures.append(f"{hw}: the chosen {c} is not in the module")

if failures:
    print("\n".join(failures), file=sys.stderr)
    sys.exit(1)
print("triton and triton-heuristic output parse, with the tutorial's names and AMD options")
