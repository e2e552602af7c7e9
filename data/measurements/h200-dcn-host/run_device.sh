#!/bin/sh
# The device call for this folder (a lent H100, kind nvidia-h100-x1): H is the copy of the
# repository the files are read from (.dev/h-host on the device); results under $OUT.
#   job.json        the 12 blind cases (dcn_host.json), host probe before and after
#   job_repeat.json the six b4096 cases again, reversed, profiled (dcn_repeat.json)
set -u
H=${H:-.}
D="$H/data/measurements/h200-dcn-host"
export PYTHONUNBUFFERED=1
{ nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.max.sm,power.limit --format=csv
  python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
  nproc; grep -m1 'model name' /proc/cpuinfo; date -u; } > "$OUT/host.txt" 2>&1
timeout 200 python3 "$H/validate/gpu/runner.py" "$D/job.json" > "$OUT/dcn_host.json" 2> "$OUT/run.log"
echo "dcn rc=$?" >> "$OUT/run.log"
timeout 90 python3 "$H/validate/gpu/runner.py" "$D/job_repeat.json" > "$OUT/dcn_repeat.json" 2>> "$OUT/run.log"
echo "repeat rc=$?" >> "$OUT/run.log"
{ nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv; date -u; } >> "$OUT/host.txt" 2>&1
