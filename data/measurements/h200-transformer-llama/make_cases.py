#!/usr/bin/env python3
"""Transformer steps with grouped-query attention, rotary embeddings, SwiGLU + RMSNorm
(Llama-like small configs), with and without checkpointing, for the H200 (issue 21). Split
into a fitting and a held-out half before any ran (seeded):

  python3 data/measurements/h200-transformer-llama/make_cases.py > .../cases.json

The drawing loop and the split are ../h200-transformer/make_cases.py's.
"""
import importlib.util
import os
import random

_spec = importlib.util.spec_from_file_location(
    "tf_make_cases", os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir,
                                  "h200-transformer", "make_cases.py"))
tf = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tf)

SHAPES = [  # hidden, heads, kv_heads, layers, vocab, ffn (Llama-like, scaled down)
    (1024, 16, 4, 8, 32000, 2816), (2048, 16, 4, 6, 32000, 5632), (2048, 32, 8, 4, 128256, 8192),
    (3072, 24, 8, 4, 32000, 8192), (4096, 32, 8, 4, 128256, 14336), (1536, 12, 4, 8, 32000, 4096),
]


def one(rng):
    h, a, kv, L, V, f = rng.choice(SHAPES)
    kv = rng.choice([kv, kv, a, 1])
    pos = rng.choice(["rotary", "rotary", "learned"])
    attn = "unfused" if rng.random() < 0.15 else "flash"
    s = rng.choice([1024, 2048] if attn == "unfused" else [1024, 2048, 4096, 8192])
    ckpt = rng.choice(["none", "none", "selective", "full"])
    tokens = rng.choice([4096, 8192, 16384])
    b = max(1, tokens // s)
    key = (h, a, kv, L, V, pos, attn, s, ckpt, b)
    w = {"kind": "transformer", "name": "h%d-L%d-s%d-%s-kv%d-%s-%s" % (h, L, s, attn, kv, pos, ckpt),
         "layers": L, "hidden": h, "heads": a, "kv_heads": kv, "ffn": f, "seq_len": s, "vocab": V,
         "attention": attn, "mlp": "swiglu", "norm": "rmsnorm", "position": pos, "dropout": 0.0}
    r = {"gpus": 1, "batch_per_gpu": b, "precision": "bf16", "checkpointing": ckpt}
    return key, w, r


rng = random.Random(20261205)
tf.finish(rng, 20261205, tf.draw(rng, 24, one), "ll")
