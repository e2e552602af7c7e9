#!/bin/sh
# Set C's device call (a lent H100, kind nvidia-h100-x1): H is the copy of the repository the
# files are read from (.dev/h-host on the device); results under $OUT.
#   job_c.json        the 10 set-C cases (dcn_host_c.json), host probe (second version) before and after
#   job_c_repeat.json the same cases reversed (dcn_repeat_c.json), with its own probes
set -u
H=${H:-.}
D="$H/data/measurements/h200-dcn-host"
export PYTHONUNBUFFERED=1
{ nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.max.sm,power.limit --format=csv
  python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
  nproc; grep -m1 'model name' /proc/cpuinfo; date -u; } > "$OUT/host_c.txt" 2>&1
timeout 150 python3 "$H/validate/gpu/runner.py" "$D/job_c.json" > "$OUT/dcn_host_c.json" 2> "$OUT/run_c.log"
echo "dcn rc=$?" >> "$OUT/run_c.log"
timeout 80 python3 "$H/validate/gpu/runner.py" "$D/job_c_repeat.json" > "$OUT/dcn_repeat_c.json" 2>> "$OUT/run_c.log"
echo "repeat rc=$?" >> "$OUT/run_c.log"
{ nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv; date -u; } >> "$OUT/host_c.txt" 2>&1
