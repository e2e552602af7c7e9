"""host_probe: how fast this host dispatches eager PyTorch ops (and Triton launches), measured
in well under a second, so that a step model's per-op host cost can be given per host
(cdplan's recipe field host_op_us, docs/step-model.md "Host speed per machine").

Why: host-bound DLRM steps (small batches) ran up to 1.6x apart on two lent machines of one
kind while GPU-bound ones repeated within 3 % (data/measurements/h100-dcn-mlperf/README.md);
the model's per-op host cost (step_eager_op_us) is one number per accelerator.

eager_op_us: a small training step made of the ops a DLRM step is made of -- two Linears
(addmm), relu, cat, the DCN cross layer's mul and add, a sum as the loss, the backward
through autograd's engine, and a plain SGD update per parameter -- on tiny tensors
(64 x 64), so that every kernel is a few microseconds of GPU time and the host, not the GPU,
sets the pace. The loop is timed on the host (perf_counter around `reps` iterations, before
the final synchronize: the GPU queue never fills at ~14 kernels x `reps`), divided by the
iterations and by the kernels one iteration launches. The kernel count is the profiler's
(torch.profiler, CUDA activity: `count_kernels`, run once where asked) else KERNELS_STATIC,
counted on torch 2.x: forward 7 (addmm, relu, cat, addmm, mul, add, sum), backward 8
(the sum's expand fill, mul, addmm's mm x2 and its bias sum for the second Linear, the cat's
slice is a view, threshold_backward, mm and sum for the first Linear's weight and bias; the
first input needs no grad), update 4 (one add_ per parameter). The model counts a kernel as
one host op (costmodel/step_dlrm.c step_add), so per kernel is the model's unit.
The median of `rounds` rounds is reported, with the min and max.

triton_launch_us: where a job runs fused_triton cases and Triton is present, the host time
of launching a trivial one-program Triton kernel (compiled once before timing), the same
way: the fused TBE's forward and backward are one Triton launch each.

Without CUDA (CDPLAN_RUNNER_ALLOW_CPU) the same loop runs on the CPU: a number, not a GPU
host's dispatch cost (no kernel launch), marked cpu_mode.
"""
import statistics
import time

KERNELS_STATIC = 19  # forward 7 + backward 8 + update 4 (the docstring's count)
N = 64


def _mix(t, dev):
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


def measure(env, triton=False, count=False, reps=200, rounds=7):
    """The probe: {"eager_op_us", "eager_op_us_min", "eager_op_us_max", "kernels_per_iter",
    "kernels_source", "reps", "rounds", "seconds"} and, with triton, "triton_launch_us" (or
    "triton_error"). count: count the mix's kernels with the profiler (else the static
    count, or the one given by a previous call's "kernels_per_iter" via count=<number>)."""
    t = env.torch
    t0 = time.perf_counter()
    if env.cpu_mode:  # a logic test: keep it short
        reps, rounds = 20, 3
    fn = _mix(t, env.dev)
    for _ in range(5):  # warm: allocator, cuBLAS handle, autograd
        fn()
    env.sync()
    per_iter = _timed(env, fn, reps, rounds)
    k, src = KERNELS_STATIC, "static"
    if isinstance(count, (int, float)) and not isinstance(count, bool) and count > 0:
        k, src = float(count), "profiler"
    elif count is True:
        n = count_kernels(env, t, fn)
        if n:
            k, src = n, "profiler"
    us = sorted(s * 1e6 / k for s in per_iter)
    res = {"eager_op_us": statistics.median(us), "eager_op_us_min": us[0],
           "eager_op_us_max": us[-1], "kernels_per_iter": k, "kernels_source": src,
           "reps": reps, "rounds": rounds}
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
