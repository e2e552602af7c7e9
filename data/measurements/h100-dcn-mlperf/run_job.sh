#!/bin/sh
# One device call on a lent H100 for one runner job of this folder: run_job.sh JOB NAME
# (from the repository root) writes $OUT/NAME.json (the result), $OUT/host_NAME.txt
# (GPU, clocks, power before and after) and $OUT/run_NAME.log. The third to sixth calls of
# 2026-12-05 ran blind2_job.json (blind2), blind3_job.json (blind3) and fused_fit_job.json
# (fused_fit, then fused_fit2 after the runner's split fix) through it; their files here keep
# the names of the scripts that ran them (host3/4/5/6.txt, run3/4/5/6.log).
set -u
job=$1; name=$2
export PYTHONUNBUFFERED=1
{ nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.max.sm,power.limit --format=csv; date -u; } > "$OUT/host_$name.txt" 2>&1
timeout 300 python3 validate/gpu/runner.py "data/measurements/h100-dcn-mlperf/$job" > "$OUT/$name.json" 2> "$OUT/run_$name.log"
echo "$name rc=$?" >> "$OUT/run_$name.log"
{ nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv; date -u; } >> "$OUT/host_$name.txt" 2>&1
