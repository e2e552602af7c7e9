#!/bin/sh
# Regenerates the calibrations a new database is seeded with (api/context.c
# embeds every *.json of this folder). Run from the repository root:
#   data/calibration/generate.sh build/cli/cdplan data/calibration
# Each file is the report of one `cdplan calibrate` run on the committed
# measurements, fitted from the datasheet defaults in a throw-away database:
#   h200.json         the H200's own fit: data/measurements/h200/ only (the
#                     fitting half; h200-extra/ and the other held-out sets
#                     are never fitted -- bench/costmodel_accuracy scores them)
#                     and the fitting half of the FlashAttention sweep
#                     (h200-transformer/attention_fit.json; bench/step_accuracy
#                     section (f) scores attention_check.json)
#   arch-hopper.json  the Hopper architecture's achievable fractions per dtype,
#                     fitted on every published row of a Hopper accelerator
#                     (data/measurements/published/gemm.json); used by Hopper
#                     accelerators without a calibration of their own (H100).
#   arch-cdna3.json   the CDNA3 architecture's, fitted on every published row
#                     of a CDNA3 accelerator; used by MI300X and MI325X. Its
#                     band is the fit-only one (bench/published_gemm "shipped").
#   arch-cdna4.json   the CDNA4 architecture's (MI350X, MI355X), fitted on
#                     the "fit" rows of CDNA4 accelerators only (HipKittens'
#                     MI355X rows, rocm-libraries PR #4026's gfx950 row and,
#                     since 2026-12-06, Z-Y00's 217 MI350X hipblaslt-bench
#                     rows: bf16 0.930; all CDNA4 rows now give 0.928, before
#                     those rows 0.85 against 0.94), so it ships the fit its
#                     band (bench/published_gemm "shipped") describes. A parameter
#                     it lacks (fp16) comes from arch-cdna3.json
#                     (cost_arch_fallback, cost_calib_fill).
# tests/calibration_shipped runs this into a temporary folder and compares.
set -eu
cdplan=$1
out=$2
"$cdplan" calibrate --db :memory: --hw h200 data/measurements/h200/*.json \
  data/measurements/h200-transformer/attention_fit.json >"$out/h200.json"
"$cdplan" calibrate --db :memory: --hw h100-sxm --rows all \
  data/measurements/published/gemm.json >"$out/arch-hopper.json"
"$cdplan" calibrate --db :memory: --hw mi300x --rows all \
  data/measurements/published/gemm.json >"$out/arch-cdna3.json"
"$cdplan" calibrate --db :memory: --hw mi355x \
  data/measurements/published/gemm.json >"$out/arch-cdna4.json"
