"""Which cuBLAS kernels run the shared GEMM shapes (data/measurements/h200/gemm.json), per dtype:
for each (m, n, k, dtype) row of that file, one warm call, then three calls under torch.profiler;
the kernels launched (name, grid, block, registers, shared memory, duration) are written out.
Only the shapes and dtypes of the fitting half are profiled (never h200-extra).

    python3 gemm_kernels.py GEMM_JSON > out.json
"""
import json
import sys

import torch
from torch.profiler import ProfilerActivity, profile


def operands(m, n, k, dt):
    dev = "cuda"
    if dt == "fp8":
        a = torch.randn((m, k), device=dev).to(torch.float8_e4m3fn)
        b = torch.randn((n, k), device=dev).to(torch.float8_e4m3fn).t()
        one = torch.ones((), device=dev)
        return lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
    tdt = {"bf16": torch.bfloat16, "fp16": torch.float16, "tf32": torch.float32,
           "fp32": torch.float32}[dt]
    a = torch.randn((m, k), device=dev, dtype=tdt)
    b = torch.randn((k, n), device=dev, dtype=tdt)
    return lambda: torch.matmul(a, b)


def main():
    rows = json.load(open(sys.argv[1]))["rows"]
    out = []
    for i, r in enumerate(rows):
        m, n, k, dt = r["m"], r["n"], r["k"], r["dtype"]
        torch.backends.cuda.matmul.allow_tf32 = dt == "tf32"
        try:
            fn = operands(m, n, k, dt)
            fn()
            torch.cuda.synchronize()
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                for _ in range(3):
                    fn()
                torch.cuda.synchronize()
            ks = {}
            for e in prof.events():
                if e.device_type != torch.autograd.DeviceType.CUDA:
                    continue
                key = e.name
                d = ks.setdefault(key, {"name": e.name[:200], "count": 0, "us": 0.0})
                d["count"] += 1
                d["us"] += e.device_time_total if hasattr(e, "device_time_total") else e.cuda_time_total
            kern = sorted(ks.values(), key=lambda x: -x["us"])
            for d in kern:
                d["count"] //= 3
                d["us"] /= 3
            out.append({"m": m, "n": n, "k": k, "dtype": dt, "ms": r["ms"], "kernels": kern})
        except Exception as e:  # noqa: BLE001
            out.append({"m": m, "n": n, "k": k, "dtype": dt, "error": str(e)[:200]})
        fn = None
        torch.cuda.empty_cache()
        if i % 50 == 0:
            print("row %d/%d" % (i, len(rows)), file=sys.stderr)
    # grid / block from a Chrome trace of the last profile are not needed: the kernel names
    # carry the tile shape (e.g. nvjet_..._256x128_..., sm90_xmma_..._128x128x32_...)
    print(json.dumps({"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
                      "rows": out}))


main()
