#!/bin/sh
# The fitting half of cases.json again, each with 3 more steps under torch.profiler (GPU busy
# time per step against the wall time: how much of a step the host's dispatch holds up).
set -u
python3 - <<'PY' > /tmp/tfprof.json
import json
d = json.load(open("data/measurements/h200-transformer/cases.json"))
print(json.dumps({"kind": "transformer_step", "id": "h200-transformer-profile",
                  "params": {"warmup": 3, "iters": 8, "time_budget_s": 420, "profile": True,
                             "cases": [{"workload": c["workload"], "recipe": c["recipe"]}
                                       for c in d["cases"] if c["role"] == "fit"]}}))
PY
python3 validate/gpu/runner.py /tmp/tfprof.json > "$OUT/steps_profile_fit.json" 2> "$OUT/profile.log"
echo "runner rc=$?" >> "$OUT/profile.log"
