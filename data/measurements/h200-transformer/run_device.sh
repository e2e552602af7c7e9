#!/bin/sh
# What ran on the H200 (device tool), from the repository root; results under $OUT.
set -u
python3 - <<'PY' > /tmp/tfjob.json
import json
d = json.load(open("data/measurements/h200-transformer/cases.json"))
print(json.dumps({"kind": "transformer_step", "id": "h200-transformer",
                  "params": {"warmup": 3, "iters": 12, "time_budget_s": 420,
                             "cases": [{"workload": c["workload"], "recipe": c["recipe"]}
                                       for c in d["cases"]]}}))
PY
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit --format=csv > "$OUT/host.txt" 2>&1
python3 validate/gpu/runner.py /tmp/tfjob.json > "$OUT/steps.json" 2> "$OUT/steps.log"
echo "runner rc=$?" >> "$OUT/steps.log"
timeout 120 python3 data/measurements/h200-transformer/attn_bench.py > "$OUT/attention.json" 2> "$OUT/attention.log"
echo "attn rc=$?" >> "$OUT/attention.log"
