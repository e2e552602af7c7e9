# bash data/measurements/h100-gemm-time/cub_rows.sh OUT (from the repository root): the first-run cuBLAS rows (kernel_awkward --verbose) of H100 sets 2-38, the K = 1 probe and H200 sets 2-7 under the current build
for G in h100 h200; do HW=""; [ $G = h100 ] && HW="--hw h100-sxm"
 for s in $(seq 2 38) -k1; do D=data/measurements/$G-awkward$s; [ -f $D/blind_gemm.json ] || continue
  build/bench/kernel_awkward $HW --blind-dir $D --verbose 2>/dev/null | grep "  gemm " | sed "s/^/$G $s /"
 done; done | sort -u > $1
