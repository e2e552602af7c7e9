#!/bin/bash
# Unpack a run_sets.sh result here and score it once, from the repository root:
#   bash data/measurements/h100-awkfam/sweep/take_sweep.sh FILES_AT/sweep_h100.tgz
# Each set sN goes to data/measurements/h100-awkwardN/ (H100) or h200-awkwardN/ (H200): the
# sweeps, with blind_kernel_16bit.json and blind_gemm_repeat.json kept as gzip -n copies
# (bench/costmodel_load.c and fit_awkfam.read_json read either form); the job files the device
# ran must hash as committed (sha256_device.txt), else nothing is scored. score.txt is
# kernel_awkward --blind-dir (selection against the committed predictions.json, cuBLAS time),
# score_gemm_rows.txt its per-row GEMM times, score_first_pass.txt (runner 1.1's two-pass
# gemm_sweep) the GEMM time on the first pass alone, as the earlier sets were timed.
set -e
tgz=$1; M=data/measurements
case "$tgz" in *h100*) g=h100; hw="--hw h100-sxm";; *h200*) g=h200; hw="";; *) echo "usage: take_sweep.sh .../sweep_h100.tgz|sweep_h200.tgz" >&2; exit 2;; esac
w=$(mktemp -d); tar xzf "$tgz" -C $w
for sd in $w/s*; do
  s=${sd##*/s}; D=$M/$g-awkward$s
  sha256sum -c --quiet $sd/sha256_device.txt || { echo "set $s: job files differ from the committed ones" >&2; exit 1; }
  [ -s $sd/blind_kernel_16bit.json ] || { echo "set $s: no kernel sweep came back" >&2; continue; }
  mkdir -p $D
  for f in blind_env.json blind_gemm.json blind_gemmbl.json blind_log.txt host.txt sha256_device.txt; do
    [ -s $sd/$f ] && cp $sd/$f $D/$f
  done
  for f in blind_kernel_16bit.json blind_gemm_repeat.json; do
    [ -s $sd/$f ] && gzip -n -9 -c $sd/$f > $D/$f.gz
  done
  build/bench/kernel_awkward $hw --blind-dir $D > $D/score.txt
  build/bench/kernel_awkward $hw --blind-dir $D --verbose | grep "^  gemm" > $D/score_gemm_rows.txt || true
  # runner 1.1 sweeps in two passes (ms: the lower median); the first pass alone, as before
  grep -q '"pass_ms"' $D/blind_gemm.json &&
    python3 bench/score_pred_gemm.py --first-pass $D/predictions.json $D/blind_gemm.json \
      "set $s first pass" > $D/score_first_pass.txt
  echo "set $s ($g): $(grep -m1 'committed picks' $D/score.txt)"
done
rm -rf $w
# Rules waiting on these sets (2026-12-08), from data/measurements:
#   python3 h100-awkfam/rule_r38.py h100 [h200]             (selection: does r38 ship?)
#   python3 h100-gemm-time/rule_r40.py h100-awkward71 h100-awkward77 ...  (withdrawn r40, for information)
# The unaligned-GEMM band the answers carry rests on these sweeps: its figures now (update
# api/provenance.c's H100_/H200_GEMM_UNALIGNED* to them; the test awkward_band_sync holds them).
python3 bench/awkward_band.py
