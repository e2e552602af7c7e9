#!/bin/sh
# Third device call on a lent H100 (README.md here): the blind2 set (blind2_job.json; its
# predictions, blind2_predictions.json, committed before this run). Results under $OUT.
set -u
export PYTHONUNBUFFERED=1
{ nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.max.sm,power.limit --format=csv; date -u; } > "$OUT/host3.txt" 2>&1
timeout 300 python3 validate/gpu/runner.py data/measurements/h100-dcn-mlperf/blind2_job.json > "$OUT/blind2.json" 2> "$OUT/run3.log"
echo "blind2 rc=$?" >> "$OUT/run3.log"
{ nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv; date -u; } >> "$OUT/host3.txt" 2>&1
