"""What Triton makes of each tile config of triton_matmul.py, without running it.

For every config of runner.default_kernel_configs(), every dtype and every
specialization class of (M, N, K) -- which of K and N are multiples of 16,
the only shape facts Triton's integer specialization passes to the compiler
besides ==1 -- compile the kernel and record what the compiler reports:
registers per thread, spilled bytes, shared memory per block, and counts of
the PTX instructions that say how the tile runs (wgmma or mma.sync, 16-byte
or 4-byte cp.async, scalar global loads, shared loads and stores, ldmatrix).
A config that does not compile gets its error message (Triton names the
shared memory it required).

The cost model's feasibility rules, register estimate and MMA-path rules are
checked against this file (data/measurements/h200-compile/).

    python3 validate/gpu/compile_info.py --out FILE [--workers N] [--dtypes tf32,fp8]
"""
import argparse
import concurrent.futures as cf
import json
import multiprocessing as mp
import os
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# (m, n, k) per specialization class: K and N multiples of 16 or not.
CLASSES = {
    "aligned": (4096, 4096, 4096),
    "k_unaligned": (4096, 4096, 1000),
    "n_unaligned": (4096, 1000, 4096),
    "both_unaligned": (4096, 1000, 1000),
}

PTX_COUNTS = {
    "wgmma": r"\bwgmma\.mma_async",
    "mma_sync": r"\bmma\.sync",
    "cp_async_16": r"\bcp\.async\.c[ag]\.shared\.global[^;]*,\s*16\b",
    "cp_async_8": r"\bcp\.async\.c[ag]\.shared\.global[^;]*,\s*8\b",
    "cp_async_4": r"\bcp\.async\.c[ag]\.shared\.global[^;]*,\s*4\b",
    "ld_global": r"\bld\.global",
    "st_shared": r"\bst\.shared",
    "ld_shared": r"\bld\.shared",
    "ldmatrix": r"\bldmatrix",
    "stmatrix": r"\bstmatrix",
    "bulk_tensor": r"\bcp\.async\.bulk",
}


def _worker(task):
    dt_name, cls, m, n, k, cfg = task
    row = {"dtype": dt_name, "class": cls, "m": m, "n": n, "k": k, **cfg}
    try:
        sys.path.insert(0, HERE)
        import triton_matmul  # noqa: PLC0415
        kern = triton_matmul.precompile_dtype(dt_name, m, n, k, cfg)
        if hasattr(kern, "_init_handles"):
            kern._init_handles()
        row["ok"] = True
        row["n_regs"] = getattr(kern, "n_regs", None)
        row["n_spills"] = getattr(kern, "n_spills", None)
        md = getattr(kern, "metadata", None)
        row["shared"] = getattr(md, "shared", None) if md is not None else None
        ptx = kern.asm.get("ptx", "") if hasattr(kern, "asm") else ""
        row["ptx"] = {name: len(re.findall(rx, ptx)) for name, rx in PTX_COUNTS.items()}
    except Exception as e:  # noqa: BLE001
        row["ok"] = False
        msg = str(e)
        req = re.search(r"Required:\s*(\d+)", msg)
        row["error"] = "%s: %s" % (type(e).__name__, msg[:300])
        if req:
            row["required_shared"] = int(req.group(1))
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--workers", type=int, default=max(1, min(16, (os.cpu_count() or 2) - 1)))
    ap.add_argument("--dtypes", default="bf16,tf32,fp8")
    ap.add_argument("--timeout", type=float, default=420.0)
    args = ap.parse_args()
    sys.path.insert(0, HERE)
    import runner  # noqa: PLC0415
    cfgs = runner.default_kernel_configs()
    tasks = []
    for dt in args.dtypes.split(","):
        for cls, (m, n, k) in CLASSES.items():
            if dt == "fp8" and cls != "aligned":
                continue  # the sweeps take fp8 only with M, N, K multiples of 16
            tasks += [(dt, cls, m, n, k, c) for c in cfgs]
    tasks.sort(key=lambda t: -(t[5]["bm"] * t[5]["bn"] * t[5]["stages"]))
    t0 = time.time()
    rows = []
    print("compiling %d kernels with %d processes" % (len(tasks), args.workers), file=sys.stderr)
    ex = cf.ProcessPoolExecutor(max_workers=args.workers, mp_context=mp.get_context("spawn"))
    futs = [ex.submit(_worker, t) for t in tasks]
    done, _ = cf.wait(futs, timeout=args.timeout)
    for f in done:
        try:
            rows.append(f.result())
        except Exception as e:  # noqa: BLE001
            rows.append({"ok": False, "error": "worker: %s" % e})
    ex.shutdown(wait=False, cancel_futures=True)
    import torch  # noqa: PLC0415
    import triton  # noqa: PLC0415
    res = {"kind": "compile_info", "triton": triton.__version__, "torch": torch.__version__,
           "device": torch.cuda.get_device_name(0), "classes": CLASSES,
           "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t0)),
           "elapsed_s": round(time.time() - t0, 1), "asked": len(tasks), "rows": rows}
    with open(args.out, "w") as f:
        json.dump(res, f, indent=0)
    print("%d of %d compiled or failed in %.0f s" % (len(rows), len(tasks), time.time() - t0),
          file=sys.stderr)


if __name__ == "__main__":
    main()
