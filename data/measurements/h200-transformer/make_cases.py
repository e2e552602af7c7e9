#!/usr/bin/env python3
"""Generates the transformer-step cases measured on the H200 and splits them into a fitting
half and a held-out half before any is run (seeded: rerunning gives the same file).

  python3 data/measurements/h200-transformer/make_cases.py > data/measurements/h200-transformer/cases.json

Each case is a cdplan workload + recipe (validate/gpu/transformer_step.py runs them as they are).
draw() and finish() are also the Llama cases' (../h200-transformer-llama/make_cases.py).
"""
import json
import random


def draw(rng, n, one):
    """n distinct cases: one(rng) gives (key, workload, recipe); a key seen before is drawn again."""
    cases, seen = [], set()
    while len(cases) < n:
        key, w, r = one(rng)
        if key in seen:
            continue
        seen.add(key)
        cases.append({"workload": w, "recipe": r})
    return cases


def finish(rng, seed, cases, id_prefix):
    """Splits cases fit/check alternately over a seeded shuffle, ids in drawing order, and
    prints the file."""
    idx = list(range(len(cases)))
    rng.shuffle(idx)
    for j, i in enumerate(idx):
        cases[i]["role"] = "fit" if j % 2 == 0 else "check"
        cases[i]["id"] = "%s%02d" % (id_prefix, i)
    print(json.dumps({"hardware": "h200", "generator": "make_cases.py seed %d" % seed,
                      "cases": cases}, indent=1))


SHAPES = [  # hidden, heads, layers, vocab
    (768, 12, 12, 50304), (1024, 16, 12, 50304), (1536, 16, 8, 50304), (2048, 16, 8, 32000),
    (2048, 32, 6, 32000), (3072, 24, 4, 50304), (4096, 32, 4, 128256), (4096, 32, 6, 32000),
]


def one(rng):
    h, a, L, V = rng.choice(SHAPES)
    attn = "unfused" if rng.random() < 0.2 else "flash"
    s = rng.choice([1024, 2048] if attn == "unfused" else [1024, 2048, 4096, 8192])
    mlp = rng.choice(["gelu", "swiglu"])
    norm = "layernorm" if mlp == "gelu" else rng.choice(["rmsnorm", "layernorm"])
    kv = a if attn == "unfused" or rng.random() < 0.5 else rng.choice([a // 4, a // 8 or 1])
    ckpt = rng.choice(["none", "none", "selective", "full"])
    drop = rng.choice([0.0, 0.0, 0.1])
    tokens = rng.choice([4096, 8192, 16384, 32768])
    b = max(1, tokens // s)
    key = (h, a, L, V, attn, s, mlp, norm, kv, ckpt, drop, b)
    w = {"kind": "transformer", "name": "h%d-L%d-s%d-%s-%s-kv%d-%s" % (h, L, s, attn, mlp, kv, ckpt),
         "layers": L, "hidden": h, "heads": a, "kv_heads": kv, "seq_len": s, "vocab": V,
         "attention": attn, "mlp": mlp, "norm": norm, "dropout": drop}
    r = {"gpus": 1, "batch_per_gpu": b, "precision": "bf16", "checkpointing": ckpt}
    return key, w, r


if __name__ == "__main__":
    rng = random.Random(20261203)
    finish(rng, 20261203, draw(rng, 56, one), "tf")
