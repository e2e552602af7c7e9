#!/bin/bash
# The h200-awkward2 sweep in one device call (issue 25, second blind set).
# Here: copy the jobs and the first round's run script where the device
# tool carries them from (the session's checkout, a git-ignored .dev/):
#   d=/work/main/.dev/h-awk; mkdir -p $d
#   cp data/measurements/h200-awkward2/jobs/*.json validate/gpu/jobs/h200-awkward/run.sh $d/
# There (run's command, carry [".dev/h-awk"], timeout 560 s):
#   T16=200 bash .dev/h-awk/run.sh blind validate/gpu $OUT
# It writes env.json, log.txt and blind_{kernel_16bit,kernel_tf32,kernel_fp8,gemm}.json
# to $OUT; copy the four blind_*.json and env.json (as blind_env.json) into
# data/measurements/h200-awkward2/ and run bench/kernel_awkward: its "r2 blind"
# rows are the score (once; predictions.json was committed before).
set -e
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../../.." && pwd)
d=${1:-/work/main/.dev/h-awk}
mkdir -p "$d"
cp "$here"/jobs/*.json "$src/validate/gpu/jobs/h200-awkward/run.sh" "$d/"
echo "copied to $d; device command: T16=200 bash .dev/h-awk/run.sh blind validate/gpu \$OUT"
