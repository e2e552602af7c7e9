#!/bin/sh
# One device call for issue 21's blind DCN sets 7 and 8 (any lent H200 or H100 80 GB: the
# tables are 30.7-32.9 GB): SETS (default "8 7") each through the runner; host facts before
# and after. Results under $OUT: blindN.json, run.log, host.txt.
set -u
H=${H:-.}
export PYTHONUNBUFFERED=1
{ nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.max.sm,power.limit --format=csv
  python3 -c "import torch; print('torch', torch.__version__)"; nproc
  lscpu | grep -m1 'Model name'; date -u; } > "$OUT/host.txt" 2>&1
D="$H/data/measurements/dcn-blind7"
for s in ${SETS:-8 7}; do
  timeout 300 python3 "$H/validate/gpu/runner.py" "$D/blind${s}_job.json" > "$OUT/blind$s.json" 2>> "$OUT/run.log"
  echo "blind$s rc=$?" >> "$OUT/run.log"
done
{ nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv; date -u; } >> "$OUT/host.txt" 2>&1
