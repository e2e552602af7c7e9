#!/bin/sh
# The twenty-first round's grid (issue 25): cuBLAS GEMM time of every awkward
# set's rows (kernel_awkward --verbose "gemm" lines: 23 H100 sets on
# h100-sxm, 7 H200 sets) under GEMM_TN_LOAD_X in 1.0..1.5 and
# GEMM_TF32_SPLIT_M in 0/64/128, each a build of kernel_awkward with the
# two constants set by -D (costmodel/gemm.c). Then: python3 loso.py DIR.
# usage: grid.sh SOURCE_DIR OUT_DIR   (about 20 s a point after its build)
set -eu
src=$(cd "$1" && pwd); out=$2; mkdir -p "$out"
for x in 1.0 1.1 1.2 1.3 1.4 1.5; do for m in 0 64 128; do
  b="$out/build_${x}_$m"
  cmake -S "$src" -B "$b" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_FLAGS="-DGEMM_TN_LOAD_X=$x -DGEMM_TF32_SPLIT_M=$m" > /dev/null
  cmake --build "$b" --target kernel_awkward -j2 > /dev/null
  k="$b/bench/kernel_awkward"
  {
    for d in "$src"/data/measurements/h100-awkward[0-9]*; do s=${d##*awkward}
      "$k" --hw h100-sxm --blind-dir "$d" --verbose 2>/dev/null | grep "^  gemm " | sed "s/^/h$s /"; done
    for d in "$src"/data/measurements/h200-awkward "$src"/data/measurements/h200-awkward[2-7]; do
      s=${d##*awkward}
      "$k" --blind-dir "$d" --verbose 2>/dev/null | grep "^  gemm " | sed "s/^/g${s:-1} /"; done
  } > "$out/gr_${x}_$m.txt"
done; done
