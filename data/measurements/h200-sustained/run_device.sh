#!/bin/sh
# Run on the H200 from the repository root; results under $OUT.
D=data/measurements/h200-sustained
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv,noheader -lms 200 > "$OUT/clocks.log" &
S=$!
python3 $D/gemm_sustained.py 6 > "$OUT/gemm_sustained.json" 2> "$OUT/gemm.log"
kill $S
