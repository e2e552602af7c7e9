#!/bin/sh
# One device call for issue 21's seventh blind DCN set (any lent H200 or H100 80 GB: the tables
# are 32.9 GB): blind7_job.json through the runner; host facts before and after. Results under
# $OUT: blind7.json, run.log, host.txt.
set -u
H=${H:-.}
export PYTHONUNBUFFERED=1
{ nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.max.sm,power.limit --format=csv
  python3 -c "import torch; print('torch', torch.__version__)"; nproc
  lscpu | grep -m1 'Model name'; date -u; } > "$OUT/host.txt" 2>&1
D="$H/data/measurements/dcn-blind7"
timeout 400 python3 "$H/validate/gpu/runner.py" "$D/blind7_job.json" > "$OUT/blind7.json" 2> "$OUT/run.log"
echo "blind7 rc=$?" >> "$OUT/run.log"
{ nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv; date -u; } >> "$OUT/host.txt" 2>&1
