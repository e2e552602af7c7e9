#!/usr/bin/env python3
"""The runner's fused Triton TBE (validate/gpu/fused_tbe.py) against eager nn.EmbeddingBag
(sparse gradients, torch.optim.SGD) on MLPerf DLRM-DCNv2-shaped tables (26 tables, dim 128,
MLPerf's multi-hot pooling, Criteo-1TB row counts capped at ROW_CAP (default 2M) so that both copies fit one
GPU), fp32 rows. One pass = forward over all tables, backward of sum(out * g) with the optimizer.
Each configuration: --check numerics first, 3 warm-up passes, then 20 passes timed each with
CUDA events (median), the L2 flushed (256 MiB write) before each. Prints one JSON object.
After the committed kernels' cases, the same passes with fused_tbe_seg.py's variant
(framework "fused_triton_seg": chunked forward, one backward program per unique row), checked
first the same way (added 2026-12-05, after the predictions; the predictions are unchanged).

  python3 data/measurements/h200-fused-tbe/tbe_bench.py [ROW_CAP] > tbe.json
"""
import json
import os
import statistics
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "..", "validate", "gpu"))
import fused_tbe  # noqa: E402
import fused_tbe_seg  # noqa: E402

import torch  # noqa: E402

MLPERF = json.load(open(os.path.join(here, "tables.json")))["tables"]


def cases(cap):
    rows = [min(t["rows"], cap) for t in MLPERF]
    pool = [t["pooling"] for t in MLPERF]
    out = []
    for B in (16384, 65536):
        for fw, opt in (("eager", "sgd"), ("fused_triton", "sgd"), ("fused_triton", "rowwise_adagrad")):
            out.append({"framework": fw, "optimizer": opt, "batch": B, "rows": rows, "pooling": pool,
                        "dim": 128})
    for B in (16384, 65536):
        for opt in ("sgd", "rowwise_adagrad"):
            out.append({"framework": "fused_triton_seg", "optimizer": opt, "batch": B,
                        "rows": rows, "pooling": pool, "dim": 128})
    return out


def time_passes(fn, dev, iters=20, warm=3):
    flush = torch.empty(256 << 20, dtype=torch.uint8, device=dev)
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(iters):
        flush.fill_(1)
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        fn()
        e1.record()
        torch.cuda.synchronize()
        ts.append(e0.elapsed_time(e1))
    return statistics.median(ts), min(ts)


def run_case(c, dev):
    B, rows, pool, D = c["batch"], c["rows"], c["pooling"], c["dim"]
    gen = torch.Generator().manual_seed(1)
    ind, off = fused_tbe.random_batch(torch, rows, B, pool, dev, gen)
    if c["framework"] in ("fused_triton", "fused_triton_seg"):
        cls = fused_tbe.FusedTBE if c["framework"] == "fused_triton" else fused_tbe_seg.FusedTBESeg
        tbe = cls(rows, [D] * len(rows), optimizer=c["optimizer"], lr=0.01, device=dev)
        g = torch.randn(B, tbe.total_d, device=dev)

        def one():
            tbe.forward(ind, off).backward(g)
    else:
        bags = [torch.nn.EmbeddingBag(n, D, mode="sum", sparse=True, device=dev) for n in rows]
        opt = torch.optim.SGD([p for b in bags for p in b.parameters()], lr=0.01)
        segs = []
        for t in range(len(rows)):
            o = off[t * B:(t + 1) * B + 1]
            lo, hi = int(o[0]), int(o[-1])
            segs.append((ind[lo:hi], (o[:-1] - lo).contiguous()))
        g = torch.randn(B, D * len(rows), device=dev)

        def one():
            out = torch.cat([bag(i, o) for bag, (i, o) in zip(bags, segs)], dim=1)
            out.backward(g)
            opt.step()
            opt.zero_grad(set_to_none=True)
    ms, mn = time_passes(one, dev)
    r = dict(c)
    r.update(ms=ms, min_ms=mn, lookups=int(ind.numel()))
    del r["rows"], r["pooling"]
    return r


def main():
    cap = int(sys.argv[1]) if len(sys.argv) > 1 else 2_000_000
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    res = {"device": torch.cuda.get_device_name() if dev == "cuda" else "cpu",
           "torch": torch.__version__, "row_cap": cap, "check_max_rel_err": None, "rows": []}
    for key, fn in (("check_max_rel_err", fused_tbe.check),
                    ("check_seg_max_rel_err", fused_tbe_seg.check)):
        try:
            res[key] = fn(verbose=False)
        except Exception as e:  # noqa: BLE001
            res[key] = "%s: %s" % (type(e).__name__, str(e)[:300])
    if dev != "cuda":
        print(json.dumps(res))
        return
    for c in cases(cap):
        try:
            res["rows"].append(run_case(c, dev))
        except Exception as e:  # noqa: BLE001
            res["rows"].append({"case": c["framework"] + " " + c["optimizer"], "batch": c["batch"],
                                "error": "%s: %s" % (type(e).__name__, str(e)[:300])})
        print("progress", res["rows"][-1], file=sys.stderr, flush=True)
        torch.cuda.empty_cache()
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
