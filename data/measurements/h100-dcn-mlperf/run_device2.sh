#!/bin/sh
# Second device call on a lent H100 SXM (README.md here): the fused TBE bench against
# ../h100-fused-tbe/predictions_prerun.json (committed before this run), then seven profiled
# DCN steps (job_profile.json: where the 53 % the first run's predictions missed goes).
# Run from the repository root; results under $OUT.
set -u
export PYTHONUNBUFFERED=1
{ nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.max.sm,power.limit --format=csv
  lscpu | grep -E "Model name|^CPU\(s\)|MHz"; date -u; } > "$OUT/host2.txt" 2>&1
timeout 150 python3 data/measurements/h200-fused-tbe/tbe_bench.py > "$OUT/tbe.json" 2> "$OUT/run2.log"
echo "tbe bench rc=$?" >> "$OUT/run2.log"
timeout 300 python3 validate/gpu/runner.py data/measurements/h100-dcn-mlperf/job_profile.json > "$OUT/dcn_profile.json" 2>> "$OUT/run2.log"
echo "dcn profile rc=$?" >> "$OUT/run2.log"
{ nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv; date -u; } >> "$OUT/host2.txt" 2>&1
