#!/bin/sh
# Forty-first round, probed 2026-12-08 (not built): a cold-operand latency of XC ns per 32-deep K
# step on Hopper's unaligned one-wave, no-split kernels (XSC 0: `tn` only, 1: every layout), with
# GEMM_TN_LOAD_X at XTNX, read from the environment by r41_probe.patch (a probe, never shipped).
# From the repository root (about 5 minutes on 2 cores); writes r41_grid.txt's figures:
#   sh data/measurements/h100-gemm-time/r41_grid.sh [WORKDIR]
set -eu
w=${1:-/tmp/cdplan-r41}
git apply data/measurements/h100-gemm-time/r41_probe.patch
trap 'git checkout costmodel/gemm.c' EXIT
cmake --build build -j 2 --target kernel_awkward > /dev/null
pred() {  # name: every set's predictions under the current environment
  mkdir -p "$w/$1"
  for s in $(seq 2 76); do
    j=data/measurements/h200-awkward$s/jobs
    [ -d "$j" ] || continue
    build/bench/kernel_awkward --hw h100-sxm --jobs "$PWD/$j" --predict "$w/$1/h100_$s.json" > /dev/null
    [ "$s" -le 7 ] && build/bench/kernel_awkward --jobs "$PWD/$j" --predict "$w/$1/h200_$s.json" > /dev/null
  done
}
pred base
names=""
for sc in 0 1; do for c in 150 300 450 600; do for t in 1.0 1.2 1.4 1.6; do
  XSC=$sc XC=$c XTNX=$t pred "g_${sc}_${c}_$t"; names="$names g_${sc}_${c}_$t"
done; done; done
for t in 1.0 1.1 1.3 1.4; do XTNX=$t pred "g_0_0_$t"; names="$names g_0_0_$t"; done
cmake --build build -j 2 --target kernel_awkward > /dev/null
cd data/measurements
python3 h100-gemm-time/r40_loso.py "$w" base $names
python3 h100-gemm-time/r41_changed.py "$w/base" "$w/g_0_300_1.2"
