"""Issue 25, after sets 33-38: which cuBLAS kernels, grids and split-K reduces the Mx1209x2048
`nn` hump (M = 424-912, priced 14-28 % high) and K = 1 outer products run: torch.profiler over
10 torch.matmul calls a shape, its Chrome trace parsed for each kernel's name, grid and block,
beside CUDA-event time of one call after an L2 flush (median of 20).

    python3 prof_split.py OUT.json
"""
import json
import os
import statistics
import sys
import tempfile
import time

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from prof_gemm import flushed_ms, ops  # noqa: E402

SHAPES = [(m, 1209, 2048, "nn") for m in (180, 328, 424, 456, 912, 1632, 3520)] + [
    (3904, 512, 1, "nn"), (14336, 512, 1, "nn"), (4736, 256, 1, "nn")]
DT = {"tf32": torch.float32, "bf16": torch.bfloat16}


def main(shapes=None, out_path=None):
    shapes = SHAPES if shapes is None else shapes
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    out = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "cuda": torch.version.cuda,
           "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "rows": []}
    torch.backends.cuda.matmul.allow_tf32 = True
    for dname, dt in DT.items():
        for m, n, k, lay in shapes:
            a, b = ops(m, n, k, lay, dt)
            ts = [t * 1e3 for t in flushed_ms(a, b, flush, 20)]
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                for _ in range(10):
                    torch.matmul(a, b)
                torch.cuda.synchronize()
            with tempfile.TemporaryDirectory() as tmp:
                path = os.path.join(tmp, "t.json")
                prof.export_chrome_trace(path)
                with open(path) as f:
                    trace = json.load(f)
            kernels = {}
            for ev in trace.get("traceEvents", []):
                if ev.get("cat") != "kernel":
                    continue
                args = ev.get("args", {})
                key = (ev.get("name", ""), str(args.get("grid")), str(args.get("block")))
                kk = kernels.setdefault(key, {"name": key[0], "grid": args.get("grid"), "block": args.get("block"),
                                              "calls": 0, "us": 0.0})
                kk["calls"] += 1
                kk["us"] += ev.get("dur", 0.0)
            ks = [dict(v, calls=v["calls"] / 10, us=v["us"] / max(1, v["calls"])) for v in kernels.values()]
            row = {"m": m, "n": n, "k": k, "layout": lay, "dtype": dname, "event_us": statistics.median(ts),
                   "kernels": ks}
            out["rows"].append(row)
            print("%s %dx%dx%d %s %.1f us: %s" % (dname, m, n, k, lay, row["event_us"], "; ".join(
                "%s grid %s block %s %.2f us x%.1f" % (x["name"][:70], x["grid"], x["block"], x["us"], x["calls"])
                for x in ks)), file=sys.stderr, flush=True)
    with open(out_path or sys.argv[1], "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
