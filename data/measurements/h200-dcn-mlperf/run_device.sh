#!/bin/sh
# One device call for issue 21 (nvidia-h200, needs_h200: the DCN tables are 104.5 GB):
#   1. the fused Triton TBE bench (../h200-fused-tbe: --check, then tbe_bench.py)
#   2. the MLPerf-shaped DCN steps (job.json through the runner, then job_repeat.json: the
#      same cases in reverse order, for the run-to-run spread, as far as its budget goes)
# H is the copy of the repo the files are read from (.dev/h-dev on the device); results under $OUT.
set -u
H=${H:-.}
export PYTHONUNBUFFERED=1
{ nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.max.sm,power.limit --format=csv
  python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
  date -u; } > "$OUT/host.txt" 2>&1
timeout 50 python3 "$H/validate/gpu/fused_tbe.py" --check > "$OUT/check.txt" 2>&1
echo "check rc=$?" >> "$OUT/check.txt"
timeout 50 python3 "$H/data/measurements/h200-fused-tbe/fused_tbe_seg.py" --check >> "$OUT/check.txt" 2>&1
echo "seg check rc=$?" >> "$OUT/check.txt"
timeout 150 python3 "$H/data/measurements/h200-fused-tbe/tbe_bench.py" > "$OUT/tbe.json" 2> "$OUT/run.log"
echo "tbe bench rc=$?" >> "$OUT/run.log"
D="$H/data/measurements/h200-dcn-mlperf"
timeout 230 python3 "$H/validate/gpu/runner.py" "$D/job.json" > "$OUT/dcn.json" 2>> "$OUT/run.log"
echo "dcn rc=$?" >> "$OUT/run.log"
timeout 100 python3 "$H/validate/gpu/runner.py" "$D/job_repeat.json" > "$OUT/dcn_repeat.json" 2>> "$OUT/run.log"
echo "dcn repeat rc=$?" >> "$OUT/run.log"
{ nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv; date -u; } >> "$OUT/host.txt" 2>&1
