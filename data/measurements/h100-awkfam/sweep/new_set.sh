#!/bin/bash
# A fresh blind awkward set (issue 25), from the repository root:
#   bash data/measurements/h100-awkfam/sweep/new_set.sh SET SEED BATCHES [CAND_BUILD NAME]
# problems.json (bench/awkward_shapes.py, 20 problems, stratified, all blind, excluding every
# earlier set's problems and the K = 1 probe's), jobs/ (h200-awkward5/make_jobs.py, each job
# through runner.py --check), and both GPUs' picks from the shipped model (build/, predictions.json),
# plus, where CAND_BUILD (a build folder of a candidate) and NAME are given, the candidate's as
# predictions_NAME.json.gz. Set 80 rebuilt this way is byte for byte its committed problems.json.
# Write the set's README and commit all of it before any sweep of the set.
set -e
s=$1; seed=$2; b=$3; cand=$4; name=$5; M=data/measurements; D=$M/h200-awkward$s
[ -n "$b" ] || { echo "usage: new_set.sh SET SEED BATCHES [CAND_BUILD NAME]" >&2; exit 2; }
[ -e $D/problems.json ] && { echo "$D/problems.json exists: a set is drawn once" >&2; exit 1; }
mkdir -p $D $M/h100-awkward$s
ex="--exclude $M/h200-awkward/problems.json --exclude $M/h200-awkward-k1/problems.json"
for i in $(seq 2 $((s - 1))); do ex="$ex --exclude $M/h200-awkward$i/problems.json"; done
python3 bench/awkward_shapes.py --seed $seed --count 20 --stratify --blind-only --batches $b $ex \
  --out $D/problems.json
python3 $M/h200-awkward5/make_jobs.py $D/jobs $D
for j in $D/jobs/*.json; do python3 validate/gpu/runner.py --check $j > /dev/null; done
J=$PWD/$D/jobs
build/bench/kernel_awkward --jobs $J --predict $D/predictions.json > /dev/null
build/bench/kernel_awkward --hw h100-sxm --jobs $J --predict $M/h100-awkward$s/predictions.json > /dev/null
if [ -n "$cand" ]; then
  tmp=$(mktemp)
  "$cand/bench/kernel_awkward" --jobs $J --predict $tmp > /dev/null
  gzip -n -c $tmp > $D/predictions_$name.json.gz
  "$cand/bench/kernel_awkward" --hw h100-sxm --jobs $J --predict $tmp > /dev/null
  gzip -n -c $tmp > $M/h100-awkward$s/predictions_$name.json.gz
  rm -f $tmp
fi
echo "set $s: $D (problems, jobs, predictions) and $M/h100-awkward$s (predictions)"
