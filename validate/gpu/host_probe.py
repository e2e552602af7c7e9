"""host_probe: how fast this host dispatches eager PyTorch ops (and Triton launches), measured
in well under a second, so that a step model's per-op host cost can be given per host
(cdplan's recipe field host_op_us, docs/step-model.md "Host speed per machine").

Why: host-bound DLRM steps (small batches) ran up to 1.6x apart on two lent machines of one
kind while GPU-bound ones repeated within 3 % (data/measurements/h100-dcn-mlperf/README.md);
the model's per-op host cost (step_eager_op_us) is one number per accelerator.

eager_op_us: the marginal host time of one more eager op. Two small training steps made of
the ops a DLRM step is made of -- two Linears (addmm), relu, cat, the DCN cross layer's mul and
add, a sum as the loss, the backward through autograd's engine, a plain SGD update per
parameter -- on tiny tensors (64 x 64: every kernel is a few microseconds of GPU time, so the
host sets the pace): the base mix, and the long mix with EXTRA more mul + add pairs in the
chain. Each is timed on the host (perf_counter around `reps` iterations, before the final
synchronize), in interleaved rounds; the difference of the two per iteration over the
difference of their kernel counts is the time one more kernel-launching op costs the host,
forward dispatch, autograd recording and its backward included, with the per-step costs (the
backward call's hand-off to the engine's device thread, the loop, the update) cancelled: the
quantity the step model's per-op host cost (step_eager_op_us, one op per kernel in
costmodel/step_dlrm.c step_add) means. iter_fixed_us is the base iteration less its kernels
at that rate; step_kernel_us the base iteration over its kernels (this probe's first version
reported that as eager_op_us: on a lent H100 it was 25-39 us against ~10 us the steps imply,
the per-step costs of a 25-kernel step spread over its kernels; data/measurements/
h200-dcn-host). Kernel counts: torch.profiler (CUDA activity: `count_kernels`, run once
where asked), else KERNELS_STATIC and 4 per extra pair.

triton_launch_us: where a job runs fused_triton cases and Triton is present, the host time
of launching a trivial one-program Triton kernel (compiled once before timing), the same
way: the fused TBE's forward and backward are one Triton launch each.

Without CUDA (CDPLAN_RUNNER_ALLOW_CPU) the same loop runs on the CPU: a number, not a GPU
host's dispatch cost (no kernel launch), marked cpu_mode.
"""
import statistics
import time

KERNELS_STATIC = 25  # the base mix, counted by torch.profiler on a lent H100 (torch 2.11)
EXTRA = 24  # the long mix: 24 more mul + add pairs (4 kernels each: 2 forward, 2 backward)
N = 64


def _mix(t, dev, extra=0):
    F = t.nn.functional
    g = t.Generator(device="cpu").manual_seed(0)
    w1 = (t.randn(N, N, generator=g) * 0.05).to(dev).requires_grad_()
    b1 = t.zeros(N, device=dev, requires_grad=True)
    w2 = (t.randn(2 * N, 2 * N, generator=g) * 0.05).to(dev).requires_grad_()
    b2 = t.zeros(2 * N, device=dev, requires_grad=True)
    x = t.randn(N, N, generator=g).to(dev)
    x0 = t.randn(N, 2 * N, generator=g).to(dev)
    params = (w1, b1, w2, b2)

    def one():
        h = F.relu(F.linear(x, w1, b1))
        c = t.cat([h, x], 1)
        z = x0 * F.linear(c, w2, b2) + c
        for _ in range(extra):  # the long mix: a chain of cross-layer-like mul + add
            z = z * x0 + z
        z.sum().backward()
        with t.no_grad():
            for p in params:
                p.add_(p.grad, alpha=-1e-6)
                p.grad = None
    return one


def _timed(env, fn, reps, rounds):
    out = []
    for _ in range(rounds):
        env.sync()
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        out.append((time.perf_counter() - t0) / reps)
        env.sync()
    return out


def count_kernels(env, t, fn):
    """CUDA kernels one call of fn launches (torch.profiler); None where it cannot tell."""
    if env.cpu_mode:
        return None
    try:
        from torch.profiler import ProfilerActivity, profile  # noqa: PLC0415
        env.sync()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(4):
                fn()
            env.sync()
        n = sum(1 for e in prof.events()
                if getattr(e, "device_type", None) == t.autograd.DeviceType.CUDA
                and not getattr(e, "is_user_annotation", False)
                and not e.name.startswith(("Memcpy", "Memset", "ProfilerStep")))
        return n / 4.0 if n else None
    except Exception:  # noqa: BLE001 -- the static count stands without it
        return None


def _triton_launch(env, reps, rounds):
    import triton  # noqa: PLC0415
    import triton.language as tl  # noqa: PLC0415
    t = env.torch

    @triton.jit
    def _k(p, v):
        tl.store(p + tl.program_id(0), v)

    buf = t.zeros(4, device=env.dev, dtype=t.float32)
    _k[(1,)](buf, 1.0)  # compile outside the timing
    env.sync()
    return _timed(env, lambda: _k[(1,)](buf, 2.0), reps, rounds)


def derive(raw, kb, kl):
    """The figures from a probe's raw times (us per iteration, one per round, of the base and
    the long mix) and the two mixes' kernel counts: eager_op_us, the marginal host time per
    kernel (the median over rounds of (long - base) / (kl - kb): what one more op costs, the
    per-step costs cancelled), iter_fixed_us (the base iteration less its kernels at that
    rate: the backward call's hand-off, the loop), step_kernel_us (the base iteration over its
    kernels, fixed costs included: the first probe's figure)."""
    b, d = raw["base_iter_us"], raw["long_iter_us"]
    diff = sorted((y - x) / (kl - kb) for x, y in zip(b, d))
    op = statistics.median(diff)
    mb = statistics.median(b)
    return {"eager_op_us": op, "eager_op_us_min": diff[0], "eager_op_us_max": diff[-1],
            "iter_fixed_us": mb - kb * op, "step_kernel_us": mb / kb,
            "kernels_base": kb, "kernels_long": kl}


def measure(env, triton=False, count=False, reps=50, rounds=7):
    """The probe: derive()'s figures, "kernels_source", the raw times, "reps", "rounds",
    "seconds", and, with triton, "triton_launch_us" (or "triton_error"). count: count the two
    mixes' kernels with the profiler (else the static counts)."""
    t = env.torch
    t0 = time.perf_counter()
    if env.cpu_mode:  # a logic test: keep it short
        reps, rounds = 5, 3
    base, long_ = _mix(t, env.dev), _mix(t, env.dev, EXTRA)
    for _ in range(5):  # warm: allocator, cuBLAS handle, autograd
        base()
        long_()
    env.sync()
    raw = {"base_iter_us": [], "long_iter_us": []}
    for _ in range(rounds):  # interleaved: drift hits both mixes alike
        raw["base_iter_us"] += [s * 1e6 for s in _timed(env, base, reps, 1)]
        raw["long_iter_us"] += [s * 1e6 for s in _timed(env, long_, reps, 1)]
    kb, kl, src = KERNELS_STATIC, KERNELS_STATIC + 4 * EXTRA, "static"
    if count:
        nb, nl = count_kernels(env, t, base), count_kernels(env, t, long_)
        if nb and nl and nl > nb:
            kb, kl, src = nb, nl, "profiler"
    res = derive(raw, kb, kl)
    res.update(raw)
    res.update({"kernels_source": src, "reps": reps, "rounds": rounds})
    if env.cpu_mode:
        res["cpu_mode"] = True
    if triton and not env.cpu_mode:
        try:
            tl = sorted(s * 1e6 for s in _triton_launch(env, 4 * reps, rounds))
            res["triton_launch_us"] = statistics.median(tl)
            res["triton_launch_us_min"], res["triton_launch_us_max"] = tl[0], tl[-1]
        except Exception as e:  # noqa: BLE001 -- the eager figure stands without it
            res["triton_error"] = "%s: %s" % (type(e).__name__, str(e)[:200])
    res["seconds"] = time.perf_counter() - t0
    return res
