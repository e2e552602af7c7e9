"""Which kernels cuBLAS runs per torch.matmul call on the awkward GEMM misses (issue 25):
torch.profiler over 20 calls a shape, kernel names, launches a call and device time a call,
beside CUDA-event time of one call after an L2 flush (median of 30)."""
import json, sys, time, statistics
import torch
from torch.profiler import profile, ProfilerActivity

SHAPES = [  # m, n, k, layout (A then B; "t" a transposed view of a row-major copy)
    (1, 256, 100, "tn"), (1, 512, 100, "tn"), (1, 256, 64, "tn"), (1, 512, 64, "tn"),
    (64, 256, 100, "tn"), (64, 256, 64, "tn"), (24, 512, 256, "nn"), (64, 512, 256, "nn"),
    (64, 512, 13, "nt"), (24, 13, 512, "nn"), (1, 256, 1000, "tn"), (1, 256, 4096, "tn"),
    (24, 1209, 2048, "nn"), (24, 25856, 2048, "nn"), (100, 479, 1024, "nn"),
    (2048, 1209, 4096, "tn"), (1000, 2048, 1209, "nt"), (100, 2048, 1209, "nt"),
    (512, 13, 100, "tn"), (1024, 479, 24, "tn")]
DT = {"tf32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
dev = "cuda"


def ops(m, n, k, lay, dt):
    """A and B of one call; "t" a transposed view of a row-major copy (also prof_split.py's)."""
    a = torch.randn(m, k, device=dev, dtype=dt) if lay[0] == "n" else torch.randn(k, m, device=dev, dtype=dt).t()
    b = torch.randn(k, n, device=dev, dtype=dt) if lay[1] == "n" else torch.randn(n, k, device=dev, dtype=dt).t()
    return a, b


def flushed_ms(a, b, flush, n):
    """CUDA-event times (ms) of n single torch.matmul calls, each after zeroing flush (the L2
    flush), after 10 warm-up calls (also prof_split.py's)."""
    for _ in range(10):
        torch.matmul(a, b)
    torch.cuda.synchronize()
    ts = []
    for _ in range(n):
        flush.zero_()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        torch.matmul(a, b)
        e.record()
        e.synchronize()
        ts.append(s.elapsed_time(e))
    return ts


def main():
    flush = torch.empty(256 << 20, dtype=torch.uint8, device=dev)
    out = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "cuda": torch.version.cuda,
           "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "rows": []}
    torch.backends.cuda.matmul.allow_tf32 = True
    for dname in ("tf32", "bf16"):
        for m, n, k, lay in SHAPES:
            a, b = ops(m, n, k, lay, DT[dname])
            ts = flushed_ms(a, b, flush, 30)
            with profile(activities=[ProfilerActivity.CUDA]) as p:
                for _ in range(20):
                    flush.zero_()
                    torch.matmul(a, b)
                torch.cuda.synchronize()
            kern = {}
            for ev in p.events():
                if ev.device_type == torch.autograd.DeviceType.CUDA:
                    nm = ev.name
                    d = kern.setdefault(nm, [0, 0.0])
                    d[0] += 1
                    try:
                        d[1] += ev.time_range.elapsed_us()
                    except Exception:
                        d[1] += getattr(ev, "device_time_total", 0) or getattr(ev, "cuda_time_total", 0)
            row = {"dtype": dname, "m": m, "n": n, "k": k, "layout": lay,
                   "event_ms_median": statistics.median(ts), "event_ms_min": min(ts),
                   "kernels": [{"name": nm[:200], "per_call": c / 20.0, "us_per_call": t / 20.0}
                               for nm, (c, t) in sorted(kern.items(), key=lambda x: -x[1][1])]}
            out["rows"].append(row)
            print(dname, m, n, k, lay, "%.4f" % row["event_ms_median"],
                  [(kk["name"][:60], kk["per_call"], round(kk["us_per_call"], 2)) for kk in row["kernels"]],
                  file=sys.stderr, flush=True)
    json.dump(out, sys.stdout, indent=1)


if __name__ == "__main__":
    main()
