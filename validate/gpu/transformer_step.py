"""transformer_step: one GPT-style training step, built from cdplan's own workload and
recipe documents (kind "transformer"), timed and its peak memory taken.

Job (runner.py kind "transformer_step"):
  {"kind": "transformer_step",
   "params": {"cases": [{"workload": {...cdplan transformer workload...},
                         "recipe": {"batch_per_gpu": 4, "precision": "bf16",
                                    "checkpointing": "none"}}, ...],
              "warmup": 3, "iters": 10, "seed": 0, "time_budget_s": 500}}

The model, as docs/step-model.md ("Transformers") prices it:
  token + learned position embeddings; per layer x += attn(norm1(x)), x += mlp(norm2(x));
  a final norm; logits by the tied token embedding; cross-entropy on fp32 logits (eager).
  attention "flash": torch SDPA restricted to the FlashAttention backend (is_causal; GQA through
  enable_gqa); "unfused": Q K^T, a causal mask, softmax in the 16-bit dtype, dropout, times V.
  mlp "gelu": two bias-free Linear layers around tanh-GELU; "swiglu": silu(W1 x) * W3 x, then W2.
  norm "layernorm" (with bias) or "rmsnorm" (no bias), run in the 16-bit dtype.
  position "learned" (a table added to the input) or "rotary" (no table; Q and K rotated in
  every layer as Llama's reference does: x cos + rotate_half(x) sin, base 10000, in the 16-bit
  dtype). kv_heads < heads: grouped-query attention (flash: SDPA enable_gqa; unfused: K and V
  repeated to every head).
  Linear layers carry no bias. Mixed precision as Megatron keeps its bytes: fp32 master
  weights, bf16 copies under autocast, fp32 gradients kept between steps (zero_grad without
  freeing, as DDP's buckets and Megatron's grad buffer do), fused AdamW; the residual stream and
  every activation in the 16-bit dtype. Checkpointing: "full" recomputes each block
  (torch.utils.checkpoint, non-reentrant); "selective" only the attention core.

Only one GPU, tp = pp = 1. Without CUDA (CDPLAN_RUNNER_ALLOW_CPU) it runs on the CPU in fp32,
where SDPA is missing (PyTorch 1.13) the flash path falls back to the math attention.
"""

import contextlib
import math
import statistics
import time

from job_env import profile_steps, run_cases
from job_schema import JobError, check_cases, get_enum, get_int, v_bool, v_int, v_num

WL_FIELDS = {"kind", "name", "layers", "hidden", "heads", "kv_heads", "ffn", "seq_len", "vocab",
             "attention", "mlp", "norm", "loss", "dropout", "position"}
RC_FIELDS = {"gpus", "tp", "pp", "batch_per_gpu", "global_batch", "precision", "checkpointing",
             "sequence_parallel", "framework"}


def check_case(c, field):
    if not isinstance(c, dict):
        raise JobError("bad_field", "%s must be an object" % field, field)
    for k in c:
        if k not in ("workload", "recipe"):
            raise JobError("unknown_field", "unknown field %s.%s" % (field, k), "%s.%s" % (field, k))
    w, r = c.get("workload"), c.get("recipe", {})
    wf, rf = field + ".workload", field + ".recipe"
    if not isinstance(w, dict):
        raise JobError("missing_field" if w is None else "bad_field",
                       "%s must be an object" % wf, wf)
    if not isinstance(r, dict):
        raise JobError("bad_field", "%s must be an object" % rf, rf)
    for k in w:
        if k not in WL_FIELDS:
            raise JobError("unknown_field", "unknown field %s.%s (moe is not run here)" % (wf, k),
                           "%s.%s" % (wf, k))
    for k in r:
        if k not in RC_FIELDS:
            raise JobError("unknown_field", "unknown field %s.%s" % (rf, k), "%s.%s" % (rf, k))
    if w.get("kind") != "transformer":
        raise JobError("bad_field", "%s.kind must be transformer" % wf, wf + ".kind")
    m = {"layers": get_int(w, "layers", wf, 1, 1024),
         "hidden": get_int(w, "hidden", wf, 8, 1 << 16),
         "heads": get_int(w, "heads", wf, 1, 1024),
         "seq_len": get_int(w, "seq_len", wf, 1, 1 << 17),
         "vocab": get_int(w, "vocab", wf, 2, 1 << 20),
         "attention": get_enum(w, "attention", wf, ("flash", "unfused")),
         "mlp": get_enum(w, "mlp", wf, ("gelu", "swiglu")),
         "norm": get_enum(w, "norm", wf, ("layernorm", "rmsnorm")),
         "loss": get_enum(w, "loss", wf, ("eager", "fused")),
         "position": get_enum(w, "position", wf, ("learned", "rotary")),
         "dropout": v_num(0.0, 0.9)(w.get("dropout", 0.0), wf + ".dropout")}
    m["kv_heads"] = get_int(w, "kv_heads", wf, 1, 1024, m["heads"])
    if m["loss"] != "eager":
        raise JobError("bad_field", "%s.loss: only eager cross-entropy is run here" % wf,
                       wf + ".loss")
    if m["hidden"] % m["heads"] or m["heads"] % m["kv_heads"]:
        raise JobError("bad_field", "%s: heads must divide hidden and kv_heads heads" % wf,
                       wf + ".heads")
    h = m["hidden"]
    dflt = 4 * h if m["mlp"] == "gelu" else (8 * h // 3 + 255) // 256 * 256
    m["ffn"] = get_int(w, "ffn", wf, 1, 1 << 20, dflt)
    if "name" in w:
        m["name"] = str(w["name"])[:128]
    for k in ("gpus", "tp", "pp"):
        if get_int(r, k, rf, 1, 1, 1) != 1:
            raise JobError("out_of_range", "%s.%s: this kind runs one GPU" % (rf, k), rf + "." + k)
    rc = {"batch_per_gpu": get_int(r, "batch_per_gpu", rf, 1, 1 << 16),
          "precision": get_enum(r, "precision", rf, ("bf16", "fp32")),
          "checkpointing": get_enum(r, "checkpointing", rf, ("none", "selective", "full"))}
    gb = get_int(r, "global_batch", rf, 1, 1 << 20, rc["batch_per_gpu"])
    if gb != rc["batch_per_gpu"]:
        raise JobError("out_of_range", "%s.global_batch: no gradient accumulation here" % rf,
                       rf + ".global_batch")
    if r.get("sequence_parallel") not in (None, False):
        raise JobError("out_of_range", "%s.sequence_parallel needs tp > 1" % rf,
                       rf + ".sequence_parallel")
    if r.get("framework", "pytorch_eager") != "pytorch_eager":
        raise JobError("out_of_range", "%s.framework: pytorch_eager only" % rf, rf + ".framework")
    return {"workload": m, "recipe": rc}


def check_params(v, field):
    allowed = {"cases", "warmup", "iters", "seed", "time_budget_s", "profile"}
    return {"cases": check_cases(v, field, allowed, 256, check_case),
            "warmup": v_int(0, 100)(v.get("warmup", 3), field + ".warmup"),
            "iters": v_int(1, 1000)(v.get("iters", 10), field + ".iters"),
            "seed": v_int(0, 2 ** 31)(v.get("seed", 0), field + ".seed"),
            "time_budget_s": v_num(1, 86400)(v.get("time_budget_s", 3600), field + ".time_budget_s"),
            # after the timed steps, 3 more under torch.profiler: GPU busy time per step
            "profile": v_bool(v.get("profile", False), field + ".profile")}


def autocast(t, dev, lp):
    if lp == t.float32:
        return contextlib.nullcontext()
    return t.autocast(device_type=dev.type, dtype=lp)


def _build(t, m, rc, dev, lp):
    nn, F = t.nn, t.nn.functional
    h, a, kv = m["hidden"], m["heads"], m["kv_heads"]
    hd, f, s = h // a, m["ffn"], m["seq_len"]
    p = m["dropout"]
    ckpt = rc["checkpointing"]
    has_sdpa = hasattr(F, "scaled_dot_product_attention")
    rot = m["position"] == "rotary"
    if rot:
        inv = 1.0 / (10000.0 ** (t.arange(0, hd, 2, dtype=t.float32, device=dev) / hd))
        ang = t.outer(t.arange(s, dtype=t.float32, device=dev), inv)
        ang = t.cat((ang, ang), dim=-1)
        cos_t, sin_t = ang.cos().to(lp), ang.sin().to(lp)

    def rotary(x):
        x1, x2 = x[..., : hd // 2], x[..., hd // 2:]
        return x * cos_t + t.cat((-x2, x1), dim=-1) * sin_t
    from torch.utils.checkpoint import checkpoint  # noqa: PLC0415

    def no_autocast():
        if lp == t.float32:
            return contextlib.nullcontext()
        return t.autocast(device_type=dev.type, enabled=False)

    def norm(mod, x):
        # in the 16-bit dtype, outside autocast (which would run it in fp32)
        with no_autocast():
            w = mod.weight.to(lp)
            if m["norm"] == "layernorm":
                return F.layer_norm(x, (h,), w, mod.bias.to(lp), 1e-5)
            if hasattr(F, "rms_norm"):
                return F.rms_norm(x, (h,), w, 1e-6)
            return x * t.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w

    class Norm(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(t.ones(h))
            self.bias = nn.Parameter(t.zeros(h)) if m["norm"] == "layernorm" else None

    def core(q, k, v, training):
        if m["attention"] == "flash" and has_sdpa:
            kw = {"enable_gqa": True} if kv != a else {}
            return F.scaled_dot_product_attention(q, k, v, dropout_p=p if training else 0.0,
                                                  is_causal=True, **kw)
        if kv != a:
            k = k.repeat_interleave(a // kv, dim=1)
            v = v.repeat_interleave(a // kv, dim=1)
        with no_autocast():
            sc = t.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(hd))
            mask = t.ones(s, s, dtype=t.bool, device=q.device).triu(1)
            pr = t.softmax(sc.masked_fill(mask, float("-inf")), dim=-1)
            if p > 0 and training:
                pr = F.dropout(pr, p)
            return t.matmul(pr, v)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.n1, self.n2 = Norm(), Norm()
            self.qkv = nn.Linear(h, h + 2 * kv * hd, bias=False)
            self.proj = nn.Linear(h, h, bias=False)
            if m["mlp"] == "gelu":
                self.fc1, self.fc2 = nn.Linear(h, f, bias=False), nn.Linear(f, h, bias=False)
            else:
                self.w1, self.w3 = nn.Linear(h, f, bias=False), nn.Linear(h, f, bias=False)
                self.w2 = nn.Linear(f, h, bias=False)

        def attn(self, x):
            b = x.shape[0]
            qkv = self.qkv(norm(self.n1, x))
            q, k, v = qkv.split([h, kv * hd, kv * hd], dim=-1)
            q = q.view(b, s, a, hd).transpose(1, 2)
            k = k.view(b, s, kv, hd).transpose(1, 2)
            v = v.view(b, s, kv, hd).transpose(1, 2)
            if rot:
                q, k = rotary(q), rotary(k)
            if ckpt == "selective":
                o = checkpoint(core, q, k, v, self.training, use_reentrant=False)
            else:
                o = core(q, k, v, self.training)
            o = self.proj(o.transpose(1, 2).reshape(b, s, h))
            return F.dropout(o, p, self.training) if p > 0 else o

        def mlp(self, x):
            y = norm(self.n2, x)
            if m["mlp"] == "gelu":
                y = self.fc2(F.gelu(self.fc1(y), approximate="tanh"))
            else:
                y = self.w2(F.silu(self.w1(y)) * self.w3(y))
            return F.dropout(y, p, self.training) if p > 0 else y

        def forward(self, x):
            x = x + self.attn(x)
            return x + self.mlp(x)

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(m["vocab"], h)
            self.wpe = None if rot else nn.Embedding(s, h)
            for e in (self.wte, self.wpe):  # GPT-2's initialisation
                if e is not None:
                    nn.init.normal_(e.weight, std=0.02)
            self.blocks = nn.ModuleList([Block() for _ in range(m["layers"])])
            self.nf = Norm()

        def forward(self, idx):
            x = self.wte(idx) if rot else self.wte(idx) + self.wpe.weight[:s]
            x = x.to(lp)
            for blk in self.blocks:
                if ckpt == "full":
                    x = checkpoint(blk, x, use_reentrant=False)
                else:
                    x = blk(x)
            with autocast(t, dev, lp):
                return F.linear(norm(self.nf, x), self.wte.weight)

    return GPT().to(dev)


def _one_case(env, c, params):
    t = env.torch
    F = t.nn.functional
    dev = env.dev
    m, rc = c["workload"], c["recipe"]
    lp = t.bfloat16 if rc["precision"] == "bf16" and not env.cpu_mode else t.float32
    t.manual_seed(params["seed"])
    model = _build(t, m, rc, dev, lp)
    model.train()
    n_params = sum(q.numel() for q in model.parameters())
    kw = {"fused": True} if dev.type == "cuda" else {}
    opt = t.optim.AdamW(model.parameters(), lr=1e-4, **kw)
    b, s, V = rc["batch_per_gpu"], m["seq_len"], m["vocab"]
    idx = t.randint(0, V, (b, s), device=dev)
    tgt = t.randint(0, V, (b, s), device=dev)
    ctx = (lambda: t.nn.attention.sdpa_kernel(t.nn.attention.SDPBackend.FLASH_ATTENTION)) \
        if m["attention"] == "flash" and dev.type == "cuda" and hasattr(t.nn, "attention") \
        else None

    def step():
        # the backend pinned for the recomputation in backward as well
        with ctx() if ctx else contextlib.nullcontext():
            with autocast(t, dev, lp):
                logits = model(idx)
            loss = F.cross_entropy(logits.float().view(-1, V), tgt.view(-1))
            loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=False)
        return loss

    for _ in range(max(1, params["warmup"])):
        step()
    env.sync()
    if dev.type == "cuda":
        t.cuda.reset_peak_memory_stats()
    times = []
    for _ in range(params["iters"]):
        t0 = time.perf_counter()
        loss = step()
        env.sync()
        times.append((time.perf_counter() - t0) * 1000.0)
    peak = t.cuda.max_memory_allocated() if dev.type == "cuda" else None
    ms = statistics.median(times)
    prof = None
    if params["profile"] and dev.type == "cuda":
        pr = profile_steps(env, t, lambda _i: step(), 0)
        prof = {k: pr[k] for k in ("wall_ms", "gpu_busy_ms", "kernels", "gpu_kernel_ms",
                                   "cuda_api", "cpu_top")}
        prof["top"] = pr["top"][:12]
    return {"profile": prof,"step_ms": ms, "min_ms": min(times), "iters": len(times), "peak_mem_bytes": peak,
            "tokens_per_s": b * s / (ms / 1000.0), "params": n_params,
            "loss": float(loss.detach().float().cpu())}


def run(job, env, state):
    params = job["params"]
    res = {"kind": "transformer_step", "rows": [], "failed": [], "device": env.device_info(),
           "method": "median of iters steps after warmup, each timed by wall clock around a "
                     "device synchronize; peak = torch.cuda.max_memory_allocated over the timed "
                     "steps"}
    state["result"] = res

    def done(ci, c, row):
        return "transformer %d/%d %s: %.2f ms, peak %.2f GB" % (
            ci + 1, len(params["cases"]), c["workload"].get("name", ""), row["step_ms"],
            (row["peak_mem_bytes"] or 0) / 1e9)
    return run_cases(env, params, res, lambda c: {"workload": c["workload"], "recipe": c["recipe"]},
                     lambda c: _one_case(env, c, params), done, "transformer", 300)
