#!/usr/bin/env python3
"""Each GEMM of shapes.json timed two ways on the GPU, bf16 torch.matmul:
  isolated: as data/measurements/h200/README.md (L2 flushed before each, CUDA events, median);
  sustained: back to back for `secs` seconds (the GPU at its training-load clocks and power),
             time per call = elapsed / calls.
The SM clock and power are sampled by nvidia-smi meanwhile (clocks.log beside the output)."""
import json, statistics, sys, time
import torch
secs = float(sys.argv[1]) if len(sys.argv) > 1 else 6.0
shapes = json.load(open(__file__.rsplit("/", 1)[0] + "/shapes.json"))["shapes"]
flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
rows = []
for m, n, k in shapes:
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    for _ in range(3):
        a @ b
    torch.cuda.synchronize()
    iso = []
    for _ in range(15):
        flush.zero_()
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record(); a @ b; e1.record(); torch.cuda.synchronize()
        iso.append(e0.elapsed_time(e1))
    torch.cuda.synchronize()
    t0 = time.perf_counter(); calls = 0
    while time.perf_counter() - t0 < secs:
        for _ in range(20):
            a @ b
        calls += 20
        torch.cuda.synchronize()
    sus = (time.perf_counter() - t0) * 1000.0 / calls
    iso_ms = statistics.median(iso)
    rows.append({"m": m, "n": n, "k": k, "dtype": "bf16", "isolated_ms": iso_ms,
                 "sustained_ms": sus, "calls": calls, "t_end": time.time(),
                 "isolated_tflops": 2 * m * n * k / iso_ms / 1e9,
                 "sustained_tflops": 2 * m * n * k / sus / 1e9})
    print("gemm %d %d %d iso %.3f sus %.3f ms" % (m, n, k, iso_ms, sus), file=sys.stderr)
print(json.dumps({"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
                  "secs": secs, "rows": rows}, indent=1))
