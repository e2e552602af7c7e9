#!/bin/sh
# What ran on the H200 (device tool) from a copy of this branch under .dev/h-i; results under $OUT.
set -u
H=${H:-.dev/h-i}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit --format=csv > "$OUT/host.txt" 2>&1
python3 -c "import triton; print('triton', triton.__version__)" >> "$OUT/host.txt" 2>&1
PYTHONUNBUFFERED=1 timeout 60 python3 "$H/validate/gpu/fused_tbe.py" --check > "$OUT/check.txt" 2>&1
echo "check rc=$?" >> "$OUT/check.txt"
PYTHONUNBUFFERED=1 timeout 170 python3 "$H/data/measurements/h200-fused-tbe/tbe_bench.py" > "$OUT/tbe.json" 2> "$OUT/tbe.log"
echo "bench rc=$?" >> "$OUT/tbe.log"
