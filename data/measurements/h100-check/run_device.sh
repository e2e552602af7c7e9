#!/bin/sh
# One device call on a lent nvidia-h100-x1 (README.md here): the H200 second set's GEMM,
# memory-op and DLRM-step jobs, unchanged, through the batch driver; results under $OUT.
export PYTHONUNBUFFERED=1
J=validate/gpu/jobs/h200-extra
python3 validate/gpu/batch.py --out "$OUT" --deadline ${DEADLINE:-330} "$J/gemm.json=90" \
  "$J/memory_ops.json=90" "$J/dlrm_step.json=120"
tail -5 "$OUT/log.txt"
