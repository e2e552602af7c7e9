#!/bin/sh
# One device call on a lent nvidia-h100-x1 (README.md here): the fused Triton TBE --check
# (kernels never compiled before; diagnostic) and the MLPerf-shaped DCN steps with tables
# capped at 20M rows. Run from the repository root; results under $OUT.
set -u
export PYTHONUNBUFFERED=1
{ nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.max.sm,power.limit --format=csv
  python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
  date -u; } > "$OUT/host.txt" 2>&1
timeout 50 python3 validate/gpu/fused_tbe.py --check > "$OUT/check.txt" 2>&1
echo "check rc=$?" >> "$OUT/check.txt"
timeout 50 python3 data/measurements/h200-fused-tbe/fused_tbe_seg.py --check >> "$OUT/check.txt" 2>&1
echo "seg check rc=$?" >> "$OUT/check.txt"
D=data/measurements/h100-dcn-mlperf
timeout 230 python3 validate/gpu/runner.py "$D/job.json" > "$OUT/dcn.json" 2>> "$OUT/run.log"
echo "dcn rc=$?" >> "$OUT/run.log"
timeout 100 python3 validate/gpu/runner.py "$D/job_repeat.json" > "$OUT/dcn_repeat.json" 2>> "$OUT/run.log"
echo "dcn repeat rc=$?" >> "$OUT/run.log"
{ nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv; date -u; } >> "$OUT/host.txt" 2>&1
