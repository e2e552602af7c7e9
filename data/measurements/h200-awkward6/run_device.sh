#!/bin/bash
# The h200-awkward6 sweep in one device call (issue 25, sixth blind set).
# Here: copy the jobs and the first round's run script where the device
# tool carries them from (the session's checkout, a git-ignored .dev/):
#   bash data/measurements/h200-awkward6/run_device.sh    (or: cp, below)
# There (run's command, kind nvidia-h200, carry [".dev/h-awk11"], timeout 300 s):
#   T16=200 bash .dev/h-awk11/run.sh blind validate/gpu $OUT; rm -f $OUT/blind_kernel_tf32.json $OUT/blind_kernel_fp8.json; timeout -s TERM 40 python3 validate/gpu/runner.py .dev/h-awk11/blind_gemmbl.json > $OUT/blind_gemmbl.json 2>> $OUT/log.txt; echo "gemmbl rc=$?" >> $OUT/log.txt
# (this set has no tf32 or fp8 kernel job: run.sh's tf32 and fp8 steps fail
# at once on the missing files and their empty outputs are removed; the
# backlog-timed gemm_sweep runs after run.sh, as the fourth set's did).
# It writes env.json, log.txt and blind_{kernel_16bit,gemm,gemmbl}.json to
# $OUT; copy the three blind_*.json, env.json (as blind_env.json) and log.txt
# (as blind_log.txt) into data/measurements/h200-awkward6/ and run
# bench/kernel_awkward: its "r6" rows are the score (once; predictions.json
# was committed before).
set -e
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../../.." && pwd)
d=${1:-/work/main/.dev/h-awk11}
mkdir -p "$d"
cp "$here"/jobs/*.json "$src/validate/gpu/jobs/h200-awkward/run.sh" "$d/"
echo "copied to $d"
