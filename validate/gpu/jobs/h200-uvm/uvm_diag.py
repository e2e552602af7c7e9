"""Why do host-mapped gathers from 12M-row tables run at a third of the link rate while
2M- and 4M-row tables run near it (uvm_micro.json)? Table size, or the order in which
the pinned buffers were allocated? Forward gathers (batch 32768, pooling 2, fp32) from
tables allocated in ascending then descending size, each in a fresh process; and the
same 12M-row table read through ids confined to its first 2M rows.

    python3 uvm_diag.py asc|desc > out.json
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
import torch  # noqa: E402
import uvm_bag  # noqa: E402


def bench(fn, n=20):
    fn()
    torch.cuda.synchronize()
    s = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    e = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    for i in range(n):
        s[i].record()
        fn()
        e[i].record()
    torch.cuda.synchronize()
    t = sorted(a.elapsed_time(b) for a, b in zip(s, e))
    return t[n // 2]


def main():
    order = sys.argv[1]
    sizes = [(1 << 20) * k for k in (1, 2, 4, 6, 8, 12, 16)]
    dims = [128, 32]
    if order == "desc":
        sizes = sizes[::-1]
    out = []
    B, P = 32768, 2
    for dim in dims:
        for rows in sizes:
            bag = uvm_bag.UvmBag(torch, rows, dim, torch.device("cuda"), False, 1e-3)
            for lim in ([rows, 2 << 20] if rows > (2 << 20) else [rows]):
                idx = torch.randint(0, lim, (B, P), device="cuda")
                ms = bench(lambda: bag.forward_rows(idx))
                out.append({"order": order, "rows": rows, "dim": dim, "ids_below": lim,
                            "fwd_ms": ms, "GBps": B * P * dim * 4 / ms / 1e6})
                print("%s rows=%d dim=%d ids<%d fwd %.3f ms %.1f GB/s" % (
                    order, rows, dim, lim, ms, out[-1]["GBps"]), file=sys.stderr)
            del bag
            torch.cuda.synchronize()
            getattr(torch._C, "_host_emptyCache", lambda: None)()
    print(json.dumps(out, indent=1))


main()
