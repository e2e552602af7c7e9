#!/usr/bin/env python3
"""Times torch SDPA (FlashAttention backend, causal) alone on the GPU: forward, and forward +
backward, per shape; prints one JSON document. Same method as ../h200/README.md (CUDA events,
median, warm-up), no L2 flush (the operands are far larger than the L2 at these shapes).

  python3 attn_bench.py > attention.json
"""
import json
import statistics
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

SHAPES = []  # b, heads, kv_heads, s, hd
for s in (1024, 2048, 4096, 8192, 16384):
    for heads, kv, hd in ((16, 16, 64), (16, 16, 128), (32, 8, 128), (32, 32, 128), (12, 12, 64)):
        b = max(1, 32768 // s)
        SHAPES.append((b, heads, kv, s, hd))


def timed(fn, iters=20, warm=3):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(iters):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        ts.append(a.elapsed_time(b))
    return statistics.median(ts), min(ts)


rows = []
for b, a, kv, s, hd in SHAPES:
    q = torch.randn(b, a, s, hd, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    k = torch.randn(b, kv, s, hd, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    v = torch.randn(b, kv, s, hd, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    do = torch.randn(b, a, s, hd, device="cuda", dtype=torch.bfloat16)
    kw = {"enable_gqa": True} if kv != a else {}
    try:
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            fwd = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True, **kw)  # noqa: E731
            fms, fmin = timed(fwd)

            def fb():
                o = F.scaled_dot_product_attention(q, k, v, is_causal=True, **kw)
                o.backward(do)
            fbms, fbmin = timed(fb)
    except Exception as e:  # noqa: BLE001
        rows.append({"b": b, "heads": a, "kv_heads": kv, "s": s, "hd": hd, "error": str(e)[:200]})
        continue
    fl = 4.0 * b * a * s * s * hd * 0.5
    rows.append({"b": b, "heads": a, "kv_heads": kv, "s": s, "hd": hd, "fwd_ms": fms,
                 "fwd_min_ms": fmin, "fwd_bwd_ms": fbms, "fwd_bwd_min_ms": fbmin,
                 "fwd_tflops": fl / fms / 1e9, "bwd_tflops": 2.5 * fl / max(1e-6, fbms - fms) / 1e9})
    print("attn b=%d a=%d kv=%d s=%d hd=%d fwd %.3f ms fwd+bwd %.3f ms" % (b, a, kv, s, hd, fms, fbms),
          file=sys.stderr)
p = torch.cuda.get_device_properties(0)
print(json.dumps({"kind": "attention_sweep", "op": "sdpa_flash_causal_bf16",
                  "device": {"name": p.name, "sms": p.multi_processor_count,
                             "mem_bytes": p.total_memory, "torch": torch.__version__,
                             "cuda": torch.version.cuda}, "rows": rows}, indent=1))
