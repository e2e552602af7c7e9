#!/bin/sh
# The fortieth round's grid (withdrawn 2026-12-08; README.md). It needs the round's gemm.c, commit
# 1491067 (git checkout 1491067 -- costmodel/gemm.c, then back): kernel_awkward built
# with each point by -D in its own build folder, every awkward set's cuBLAS times predicted
# (H100 sets on h100-sxm, H200 sets 2-7 on the H200), then r40_loso.py. From the repository root:
#   sh data/measurements/h100-gemm-time/r40.sh [WORKDIR]    (about 2 minutes a point on 2 cores)
set -eu
w=${1:-/tmp/cdplan-r40}
mkdir -p "$w"
point() {  # name cflags
  b="$w/build-$1"
  cmake -S . -B "$b" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS="$2" > /dev/null
  cmake --build "$b" -j 2 --target kernel_awkward > /dev/null
  mkdir -p "$w/$1"
  for s in $(seq 2 76); do
    j=data/measurements/h200-awkward$s/jobs
    [ -d "$j" ] || continue
    "$b/bench/kernel_awkward" --hw h100-sxm --jobs "$PWD/$j" --predict "$w/$1/h100_$s.json" > /dev/null
    [ "$s" -le 7 ] && "$b/bench/kernel_awkward" --jobs "$PWD/$j" --predict "$w/$1/h200_$s.json" > /dev/null
  done
  echo "point $1 done"
}
point off "-DGEMM_TN_BIG_M=0"
point k0 "-DGEMM_TN_BIG_K=0"
point k64 "-DGEMM_TN_BIG_K=64"
point k128 ""
point k256 "-DGEMM_TN_BIG_K=256"
cd data/measurements && python3 h100-gemm-time/r40_loso.py "$w" off k0 k64 k128 k256
