#!/bin/sh
# What ran on the H200 (device tool) from a copy of this branch's files under .dev/h-i
# (validate/gpu and this folder); results under $OUT.
set -u
H=${H:-.dev/h-i}
python3 - "$H" <<'PY' > /tmp/lljob.json
import json, sys
d = json.load(open(sys.argv[1] + "/data/measurements/h200-transformer-llama/cases.json"))
print(json.dumps({"kind": "transformer_step", "id": "h200-transformer-llama",
                  "params": {"warmup": 3, "iters": 8, "time_budget_s": 330,
                             "cases": [{"workload": c["workload"], "recipe": c["recipe"]}
                                       for c in d["cases"]]}}))
PY
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit --format=csv > "$OUT/host.txt" 2>&1
PYTHONUNBUFFERED=1 python3 "$H/validate/gpu/runner.py" /tmp/lljob.json > "$OUT/steps.json" 2> "$OUT/steps.log"
echo "runner rc=$?" >> "$OUT/steps.log"
