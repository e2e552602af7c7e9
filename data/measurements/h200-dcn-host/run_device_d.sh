#!/bin/sh
# Set D's device call (a lent H100, kind nvidia-h100-x1): H is the copy of the repository the
# files are read from (the checkout: H=. from the main checkout); results under $OUT.
#   job_d.json        the 11 set-D cases (dcn_host_d.json), host probe (second version) before and after
#   job_d_repeat.json the six b<=6144 cases reversed, profiled (dcn_repeat_d.json), own probes
set -u
H=${H:-.}
D="$H/data/measurements/h200-dcn-host"
export PYTHONUNBUFFERED=1
{ nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.max.sm,power.limit --format=csv
  python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
  nproc; grep -m1 'model name' /proc/cpuinfo; date -u; } > "$OUT/host_d.txt" 2>&1
timeout 120 python3 "$H/validate/gpu/runner.py" "$D/job_d.json" > "$OUT/dcn_host_d.json" 2> "$OUT/run_d.log"
echo "dcn rc=$?" >> "$OUT/run_d.log"
timeout 75 python3 "$H/validate/gpu/runner.py" "$D/job_d_repeat.json" > "$OUT/dcn_repeat_d.json" 2>> "$OUT/run_d.log"
echo "repeat rc=$?" >> "$OUT/run_d.log"
{ nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv; date -u; } >> "$OUT/host_d.txt" 2>&1
