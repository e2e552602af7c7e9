#!/bin/sh
# Sixth device call on a lent H100 (README.md here): a FITTING set of six fused_triton DCN
# steps (rank 128, which no blind set has) under torch.profiler. Results under $OUT.
set -u
export PYTHONUNBUFFERED=1
{ nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.max.sm,power.limit --format=csv; date -u; } > "$OUT/host6.txt" 2>&1
timeout 300 python3 validate/gpu/runner.py data/measurements/h100-dcn-mlperf/fused_fit_job.json > "$OUT/fused_fit2.json" 2> "$OUT/run6.log"
echo "fused fit rc=$?" >> "$OUT/run6.log"
