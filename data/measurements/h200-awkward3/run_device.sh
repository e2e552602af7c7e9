#!/bin/bash
# The h200-awkward3 sweep in one device call (issue 25, third blind set).
# Here: copy the jobs and the first round's run script where the device
# tool carries them from (the session's checkout, a git-ignored .dev/):
#   bash data/measurements/h200-awkward3/run_device.sh    (or: cp, below)
# There (run's command, carry [".dev/h-awk3"], timeout 300 s):
#   T16=200 bash .dev/h-awk3/run.sh blind validate/gpu $OUT; rm -f $OUT/blind_kernel_fp8.json
# (the set has no fp8 shape, so no blind_kernel_fp8.json job: run.sh's fp8
# step fails at once on the missing file and its empty output is removed).
# It writes env.json, log.txt and blind_{kernel_16bit,kernel_tf32,gemm}.json
# to $OUT; copy the three blind_*.json, env.json (as blind_env.json) and
# log.txt (as blind_log.txt) into data/measurements/h200-awkward3/ and run
# bench/kernel_awkward: its "r3 blind" rows are the score (once;
# predictions.json was committed before).
set -e
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../../.." && pwd)
d=${1:-/work/main/.dev/h-awk3}
mkdir -p "$d"
cp "$here"/jobs/*.json "$src/validate/gpu/jobs/h200-awkward/run.sh" "$d/"
echo "copied to $d; device command: T16=200 bash .dev/h-awk3/run.sh blind validate/gpu \$OUT; rm -f \$OUT/blind_kernel_fp8.json"
