#!/usr/bin/env python3
"""Transformer steps with grouped-query attention, rotary embeddings, SwiGLU + RMSNorm
(Llama-like small configs), with and without checkpointing, for the H200 (issue 21). Split
into a fitting and a held-out half before any ran (seeded):

  python3 data/measurements/h200-transformer-llama/make_cases.py > .../cases.json
"""
import json
import random

rng = random.Random(20261205)
SHAPES = [  # hidden, heads, kv_heads, layers, vocab, ffn (Llama-like, scaled down)
    (1024, 16, 4, 8, 32000, 2816), (2048, 16, 4, 6, 32000, 5632), (2048, 32, 8, 4, 128256, 8192),
    (3072, 24, 8, 4, 32000, 8192), (4096, 32, 8, 4, 128256, 14336), (1536, 12, 4, 8, 32000, 4096),
]
cases, seen = [], set()
while len(cases) < 24:
    h, a, kv, L, V, f = rng.choice(SHAPES)
    kv = rng.choice([kv, kv, a, 1])
    pos = rng.choice(["rotary", "rotary", "learned"])
    attn = "unfused" if rng.random() < 0.15 else "flash"
    s = rng.choice([1024, 2048] if attn == "unfused" else [1024, 2048, 4096, 8192])
    ckpt = rng.choice(["none", "none", "selective", "full"])
    tokens = rng.choice([4096, 8192, 16384])
    b = max(1, tokens // s)
    key = (h, a, kv, L, V, pos, attn, s, ckpt, b)
    if key in seen:
        continue
    seen.add(key)
    w = {"kind": "transformer", "name": "h%d-L%d-s%d-%s-kv%d-%s-%s" % (h, L, s, attn, kv, pos, ckpt),
         "layers": L, "hidden": h, "heads": a, "kv_heads": kv, "ffn": f, "seq_len": s, "vocab": V,
         "attention": attn, "mlp": "swiglu", "norm": "rmsnorm", "position": pos, "dropout": 0.0}
    r = {"gpus": 1, "batch_per_gpu": b, "precision": "bf16", "checkpointing": ckpt}
    cases.append({"workload": w, "recipe": r})
idx = list(range(len(cases)))
rng.shuffle(idx)
for j, i in enumerate(idx):
    cases[i]["role"] = "fit" if j % 2 == 0 else "check"
    cases[i]["id"] = "ll%02d" % i
print(json.dumps({"hardware": "h200", "generator": "make_cases.py seed 20261205",
                  "cases": cases}, indent=1))
