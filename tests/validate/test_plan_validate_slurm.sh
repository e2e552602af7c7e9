#!/bin/sh
# A plan validated through the one-node Slurm fixture (SLURM_CONF from
# ctest): cdplan validate plan ID --backend slurm --gpu-type h200
# --partition debug runs both dlrm_step jobs (the runner's CPU mode, Debian's
# python3-torch) and the plan shows them measured; the device each result
# names (the CPU test mode) is checked against the job's hardware, so the
# result calibrates nothing and report --calibrate refuses it. A GPU type
# the cluster lacks fails the jobs with sbatch's reason. Skip (77) without
# Slurm or torch.
# usage: test_plan_validate_slurm.sh CDPLAN_BINARY
set -eu
BIN=$1
PY=/usr/bin/python3
command -v sbatch >/dev/null || { echo "no slurm: skip"; exit 77; }
[ -x "$PY" ] && $PY -c 'import torch' 2>/dev/null || { echo "no torch for $PY: skip"; exit 77; }
TAG=planslurm
. "$(dirname "$0")/scratch.sh"
export CDPLAN_DB="$T/p.db" CDPLAN_PYTHON=$PY CDPLAN_RUNNER_ALLOW_CPU=1

echo '{"workload":{"kind":"dlrm","name":"tiny","dense_features":13,"tables":[{"name":"t","rows":20000,"dim":16,"pooling":4,"count":4}],"bottom_mlp":[64,16],"top_mlp":[64,32,1],"interaction":"dot","optimizers":{"dense":"adam","sparse":"sgd"}},"hardware":"h200","cluster":{"gpus_per_node":1,"nodes":1},"baseline":{"batch_per_gpu":256,"precision":"fp32","framework":"pytorch_eager","checkpointing":"full"},"knobs":{"precision":["fp32","bf16"]},"time_limit_s":5}' > "$T/plan.json"
"$BIN" plan "$T/plan.json" > "$T/plan.out" 2>/dev/null || fail "plan"
ID=$(field "$T/plan.out" '["id"]')
"$BIN" validate plan "$ID" --backend slurm --gpu-type h200 --partition debug --steps 2 --wait 150 \
  > "$T/v.json" 2> "$T/v.err" || fail "validate plan: $(cat "$T/v.err")"
$PY - "$T/v.json" <<'PYEOF' || fail "the plan's validation through slurm: $(cat "$T/v.json")"
import json, sys
v = json.load(open(sys.argv[1]))["validation"]
for side in ("baseline", "planned"):
    s = v[side]
    assert s["backend"] == "slurm" and s["state"] == "done", s
    assert s["measured"]["step_ms"] > 0, s
    assert s["device_check"]["matches"] is False and s["calibrates"] is None, s
assert v["gain"]["measured"] > 0, v["gain"]
PYEOF
JOB=$(field "$T/v.json" '["validation"]["planned"]["job"]')
if "$BIN" validate report "$JOB" --calibrate > /dev/null 2> "$T/cal.err"; then fail "calibrated from a CPU run"; fi
grep -q '"field":"device"' "$T/cal.err" || fail "calibrate refusal: $(cat "$T/cal.err")"
# an H100 recipe asked for on H100s: none in this cluster, the jobs fail at sbatch
"$BIN" validate plan "$ID" --backend slurm --gpu-type h100 > "$T/bad.json" || fail "submit"
[ "$(field "$T/bad.json" '["validation"]["planned"]["state"]')" = failed ] || fail "an h100 job ran on an h200 cluster"
echo "plan validation through slurm: ok"
