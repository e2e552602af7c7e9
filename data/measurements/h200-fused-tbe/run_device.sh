#!/bin/sh
# What ran on the H200 (device tool) from a copy of this branch under .dev/h-i; results under $OUT.
set -u
H=${H:-.dev/h-i}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit --format=csv > "$OUT/host.txt" 2>&1
python3 -c "import triton; print('triton', triton.__version__)" >> "$OUT/host.txt" 2>&1
PYTHONUNBUFFERED=1 timeout 60 python3 "$H/validate/gpu/fused_tbe.py" --check > "$OUT/check.txt" 2>&1
echo "check rc=$?" >> "$OUT/check.txt"
PYTHONUNBUFFERED=1 timeout 100 python3 "$H/data/measurements/h200-fused-tbe/tbe_bench.py" > "$OUT/tbe.json" 2> "$OUT/tbe.log"
echo "bench rc=$?" >> "$OUT/tbe.log"
# Diagnosis, fitting half only: three Llama-like fit cases (ll06 no recompute; ll17, ll18 full
# recompute, measured ~2x the prediction) again under torch.profiler.
python3 - "$H" <<'PY' > /tmp/prof.json
import json, sys
d = json.load(open(sys.argv[1] + "/data/measurements/h200-transformer-llama/cases.json"))
pick = [c for c in d["cases"] if c["id"] in ("ll06", "ll17", "ll18")]
print(json.dumps({"kind": "transformer_step", "id": "llama-profile-fit",
                  "params": {"warmup": 3, "iters": 8, "time_budget_s": 35, "profile": True,
                             "cases": [{"workload": c["workload"], "recipe": c["recipe"]} for c in pick]}}))
PY
PYTHONUNBUFFERED=1 timeout 45 python3 "$H/validate/gpu/runner.py" /tmp/prof.json > "$OUT/profile_fit.json" 2> "$OUT/profile.log"
echo "profile rc=$?" >> "$OUT/profile.log"
