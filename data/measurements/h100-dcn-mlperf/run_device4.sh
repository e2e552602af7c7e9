#!/bin/sh
# Fourth device call on a lent H100 (README.md here): the blind3 set (fused_triton DCN steps;
# blind3_predictions.json committed before this run). Results under $OUT.
set -u
export PYTHONUNBUFFERED=1
{ nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.max.sm,power.limit --format=csv; date -u; } > "$OUT/host4.txt" 2>&1
timeout 300 python3 validate/gpu/runner.py data/measurements/h100-dcn-mlperf/blind3_job.json > "$OUT/blind3.json" 2> "$OUT/run4.log"
echo "blind3 rc=$?" >> "$OUT/run4.log"
{ nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv; date -u; } >> "$OUT/host4.txt" 2>&1
