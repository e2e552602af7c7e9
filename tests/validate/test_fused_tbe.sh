#!/bin/sh
# validate/gpu/fused_tbe.py --check: the fused table-batched embedding (forward over all
# tables, backward with fused SGD / row-wise Adagrad) against per-table EmbeddingBag and the
# optimizers written out in float64, on fresh random inputs; the Triton path too where CUDA
# and Triton exist. Uses whichever python3 has torch (Debian's python3-torch first).
# usage: test_fused_tbe.sh FUSED_TBE_PY
set -u
for py in /usr/bin/python3 python3; do
  if command -v "$py" >/dev/null 2>&1 && "$py" -c "import torch" >/dev/null 2>&1; then
    exec "$py" "$1" --check
  fi
done
echo "no python3 with torch: skip"
exit 77
