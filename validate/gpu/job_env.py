"""The torch environment a GPU kind runs in: Env (torch, the device, dtypes, the timing
method of ../shared/data/h200/README.md), and the helpers several kinds share (TF32
switch, table filling, MLPs, a profiled step). torch is imported when Env is made, never at
import time: --check and cpu_selftest need Python alone.

Without CUDA, CDPLAN_RUNNER_ALLOW_CPU=1 runs the kinds on the CPU to test their logic
(timings mean nothing there); otherwise such a host is "unavailable".
"""
import os
import statistics
import time

from job_schema import EXIT_UNAVAILABLE, JobError, progress


class Env:
    """torch, the device and the timing method."""

    def __init__(self):
        try:
            import torch  # noqa: PLC0415
        except ImportError as e:
            raise JobError("unavailable", "PyTorch is not installed: %s" % e, rc=EXIT_UNAVAILABLE)
        self.torch = torch
        self.cpu_mode = False
        if not torch.cuda.is_available():
            if os.environ.get("CDPLAN_RUNNER_ALLOW_CPU") == "1":
                self.cpu_mode = True  # for testing the job logic only; timings mean nothing
            else:
                raise JobError("unavailable", "no GPU: torch.cuda.is_available() is false",
                               rc=EXIT_UNAVAILABLE)
        self.dev = torch.device("cpu") if self.cpu_mode else torch.device("cuda")
        self._flush = None

    def device_info(self):
        t = self.torch
        if self.cpu_mode:
            return {"name": "cpu (test mode)", "sms": 0, "mem_bytes": 0, "l2_bytes": 0,
                    "torch": t.__version__, "cuda": None}
        p = t.cuda.get_device_properties(0)
        l2 = getattr(p, "L2_cache_size", None)
        if l2 is None:
            l2 = getattr(p, "l2_cache_size", 0)
        cuda = t.version.cuda if t.version.cuda else ("hip " + str(getattr(t.version, "hip", "")))
        return {"name": p.name, "sms": p.multi_processor_count, "mem_bytes": p.total_memory,
                "l2_bytes": int(l2), "torch": t.__version__, "cuda": cuda}

    def dtype(self, name):
        t = self.torch
        if name == "fp8":
            hip = getattr(t.version, "hip", None)
            if hip and not self.cpu_mode and "gfx94" in getattr(
                    t.cuda.get_device_properties(0), "gcnArchName", ""):
                return t.float8_e4m3fnuz
            return t.float8_e4m3fn
        return {"bf16": t.bfloat16, "fp16": t.float16, "tf32": t.float32,
                "fp32": t.float32}[name]

    def sync(self):
        if not self.cpu_mode:
            self.torch.cuda.synchronize()

    def set_flush(self, mib):
        if mib <= 0:
            self._flush = None
        elif self._flush is None or self._flush.numel() != (mib << 20):
            self._flush = None
            n = mib << 20 if not self.cpu_mode else min(mib, 8) << 20
            self._flush = self.torch.empty(n, dtype=self.torch.uint8, device=self.dev)

    def flush(self):
        if self._flush is not None:
            self._flush.zero_()

    def time_once(self, fn):
        """ms of one call (no flush), events on the GPU."""
        if self.cpu_mode:
            t0 = time.perf_counter()
            fn()
            return (time.perf_counter() - t0) * 1000.0
        s = self.torch.cuda.Event(enable_timing=True)
        e = self.torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        return s.elapsed_time(e)

    def bench(self, fn, p, max_call_ms=None, iters=None):
        """The method of ../shared/data/h200/README.md: one untimed call, a short
        warm-up, the L2 flushed before every timed iteration, each iteration timed
        alone with events. Returns (median ms, min ms, iters)."""
        fn()
        self.sync()
        est = self.time_once(fn)
        if max_call_ms is not None and est > max_call_ms:
            raise TooSlow(est)
        for _ in range(p["warmup"]):
            fn()
        if iters is None:
            iters = p.get("iters")
        if iters is None:
            iters = int(p["time_budget_ms"] / max(est, 1e-3))
            iters = max(p["min_iters"], min(p["max_iters"], iters))
        times = []
        if self.cpu_mode:
            for _ in range(iters):
                self.flush()
                t0 = time.perf_counter()
                fn()
                times.append((time.perf_counter() - t0) * 1000.0)
        else:
            backlog = p.get("backlog_us", 0)
            times = self._timed(fn, iters, backlog)
            # A host slower than the backlog lets the GPU idle between the
            # start event and the kernel, so the median doubles while the
            # minimum stays: time again with a 4x longer backlog (twice at
            # most). The backlog used is kept in last_backlog_us.
            for _ in range(2):
                if backlog <= 0 or statistics.median(times) <= 1.5 * min(times):
                    break
                backlog *= 4
                times = self._timed(fn, iters, backlog)
            self.last_backlog_us = backlog
        return statistics.median(times), min(times), iters

    def _timed(self, fn, iters, backlog_us):
        """iters calls, each timed alone with events after an L2 flush and a
        GPU spin of backlog_us (so the host's launch path is hidden)."""
        ev = self.torch.cuda.Event
        starts = [ev(enable_timing=True) for _ in range(iters)]
        ends = [ev(enable_timing=True) for _ in range(iters)]
        spin = int(backlog_us * 2000)  # cycles, ~1 us each at 2 GHz
        for i in range(iters):
            self.flush()
            if spin > 0:
                self.torch.cuda._sleep(spin)
            starts[i].record()
            fn()
            ends[i].record()
        self.torch.cuda.synchronize()
        return [s.elapsed_time(e) for s, e in zip(starts, ends)]

    def free(self):
        import gc  # noqa: PLC0415
        gc.collect()
        if not self.cpu_mode:
            self.torch.cuda.empty_cache()


class TooSlow(Exception):
    def __init__(self, ms):
        super().__init__("one call took %.1f ms" % ms)
        self.ms = ms


def cuda_broken(e):
    """Is the CUDA context lost (so that going on with the next case is pointless)?"""
    s = str(e)
    return "illegal memory access" in s or "unspecified launch failure" in s or \
        "device-side assert" in s


def set_tf32(env, on):
    t = env.torch
    t.backends.cuda.matmul.allow_tf32 = bool(on)
    t.backends.cudnn.allow_tf32 = bool(on)


def mlp(nn, sizes, relu_last, device):
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1], device=device))
        if i < len(sizes) - 2 or relu_last:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


def bce_train_step(F, forward, batch, opts, autocast):
    """One training step of a click model (dlrm_step, step): the gradients of
    the optimizers in opts (None skipped) zeroed, forward(dense, idx) under
    autocast(), binary cross-entropy with logits of its output against y (a
    pair: the output and an extra loss term added before backward), backward,
    each optimizer's step in order. Returns the loss."""
    dense, idx, y = batch
    opts = [o for o in opts if o]
    for o in opts:
        o.zero_grad(set_to_none=True)
    with autocast():
        out = forward(dense, idx)
    extra = None
    if isinstance(out, tuple):
        out, extra = out
    loss = F.binary_cross_entropy_with_logits(out.float().squeeze(1), y)
    (loss if extra is None else loss + extra).backward()
    for o in opts:
        o.step()
    return loss


def fill_uniform(t, w, bound, dev, cpu_mode):
    """w.uniform_(-bound, bound). A host table is filled from GPU-generated chunks
    (CPU uniform_ runs on one thread: minutes for tens of GB)."""
    if w.device.type != "cpu" or cpu_mode:
        w.uniform_(-bound, bound)
        return
    step = max(1, (64 << 20) // max(1, w.shape[1]))  # 256 MiB of fp32 per chunk
    buf = t.empty((min(step, w.shape[0]), w.shape[1]), device=dev, dtype=w.dtype)
    for a in range(0, w.shape[0], step):
        b = min(w.shape[0], a + step)
        chunk = buf[:b - a]
        chunk.uniform_(-bound, bound)
        w[a:b].copy_(chunk)
    del buf


def profile_steps(env, t, step, first, n=3):
    """Runs n steps under torch.profiler; returns per-step wall ms, GPU busy ms (the union
    of the kernels' intervals: when the GPU idles waiting for the host, busy < wall), the
    kernel count and the 40 kernels with the most GPU time."""
    from torch.profiler import ProfilerActivity, profile  # noqa: PLC0415
    env.sync()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        t0 = time.perf_counter()
        for i in range(n):
            step(first + i)
        env.sync()
        wall = (time.perf_counter() - t0) * 1000.0
    spans, by_name, api = [], {}, {}
    for e in prof.events():
        if getattr(e, "device_type", None) != t.autograd.DeviceType.CUDA:
            if e.name.startswith("cuda") and ("Synchronize" in e.name or "Memcpy" in e.name):
                api[e.name] = api.get(e.name, 0) + 1  # where the host waits for the GPU
            continue
        # user annotations (Optimizer.step#SGD.step, ...) span idle gaps: not kernels
        if getattr(e, "is_user_annotation", False) or e.name.startswith(("Optimizer.", "ProfilerStep")):
            continue
        a, b = e.time_range.start, e.time_range.end
        if b <= a:
            continue
        spans.append((a, b))
        k = by_name.setdefault(e.name[:160], [0, 0.0])
        k[0] += 1
        k[1] += (b - a) / 1000.0
    spans.sort()
    busy, cur_a, cur_b = 0.0, None, None
    for a, b in spans:
        if cur_b is None or a > cur_b:
            if cur_b is not None:
                busy += cur_b - cur_a
            cur_a, cur_b = a, b
        else:
            cur_b = max(cur_b, b)
    if cur_b is not None:
        busy += cur_b - cur_a
    top = sorted(by_name.items(), key=lambda kv: -kv[1][1])[:40]
    cpu = sorted(prof.key_averages(), key=lambda a: -a.self_cpu_time_total)[:25]
    return {"steps": n, "wall_ms": wall / n, "gpu_busy_ms": busy / 1000.0 / n,
            "kernels": len(spans) / n, "gpu_kernel_ms": sum(v[1] for v in by_name.values()) / n,
            "top": [{"name": k, "count": v[0] / n, "ms": v[1] / n} for k, v in top],
            "cuda_api": {k: v / n for k, v in sorted(api.items())},
            "cpu_top": [{"name": a.key[:160], "count": a.count / n,
                         "self_ms": a.self_cpu_time_total / 1000.0 / n} for a in cpu]}


def run_cases(env, params, res, row_of, one_case, done, name, reason_chars):
    """The cases of a whole-step kind in turn, within params["time_budget_s"]: each row
    starts as row_of(case) and takes one_case(case)'s fields (into res["rows"]; progress
    done(i, case, row)), or the exception that stopped it (into res["failed"]: the kind
    goes on with the next case)."""
    t0 = time.time()
    cases = params["cases"]
    for ci, c in enumerate(cases):
        row = row_of(c)
        if time.time() - t0 > params["time_budget_s"]:
            row["reason"] = "time budget spent"
            res["failed"].append(row)
            continue
        try:
            row.update(one_case(c))
            res["rows"].append(row)
            progress(done(ci, c, row))
        except Exception as e:  # noqa: BLE001
            row["reason"] = "%s: %s" % (type(e).__name__, str(e)[:reason_chars])
            res["failed"].append(row)
            progress("%s case %d failed: %s" % (name, ci + 1, row["reason"]))
        env.free()
    return res
