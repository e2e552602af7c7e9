#!/bin/sh
# Twenty-third round: kernel selection on the 21 H100 (4-24) and 5 H200 (3-7) awkward sets
# with kernel_splitk_us raised by each D (us) over 2.123 (AWK_KP sets it in the calibration,
# no rebuild): one summary line per set and D. Run from the repository root after a build:
#   sh data/measurements/h100-awkfam/splitk_us_grid.sh build > splitk_us_grid.txt
#   python3 data/measurements/h100-awkfam/loso_sets.py splitk_us_grid.txt
set -eu
B=${1:-build}
for d in 0 0.5 1 1.5 2 2.5 3; do
  v=$(python3 -c "print(round(2.123 + $d, 3))")
  for s in $(seq 4 24); do
    AWK_KP=kernel_splitk_us=$v "$B/bench/kernel_awkward" --hw h100-sxm \
      --blind-dir data/measurements/h100-awkward$s | grep -A1 "^blind sweep" | tail -1 | sed "s/^/$d h100_$s /"
  done
  for s in 3 4 5 6 7; do
    AWK_KP=kernel_splitk_us=$v "$B/bench/kernel_awkward" \
      --blind-dir data/measurements/h200-awkward$s | grep -A1 "^blind sweep" | tail -1 | sed "s/^/$d h200_$s /"
  done
done
