# bench/kernel_awkward: kernel selection and GEMM time on the awkward-shape
# sweeps of issue 25 (data/measurements/h200-awkward/).
add_executable(kernel_awkward ${CMAKE_CURRENT_SOURCE_DIR}/kernel_awkward.c
  ${CMAKE_CURRENT_SOURCE_DIR}/kernel_sweep.c ${CMAKE_CURRENT_SOURCE_DIR}/costmodel_load.c)
target_link_libraries(kernel_awkward PRIVATE cdplan_api cdplan_costmodel cdplan_common PkgConfig::CJSON ZLIB::ZLIB m
  cdplan_warnings)
target_compile_definitions(kernel_awkward PRIVATE CDPLAN_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
list(APPEND CDPLAN_BENCH_RUN kernel_awkward)
# --blind-dir reads and scores a blind folder the way the built-in rows do:
# pointed at the first round's (data/measurements/h200-awkward), its current
# model and GEMM rows must equal the "r1 blind" ones, and its committed picks
# row the "r1 blind, r1 picks" one.
add_test(NAME kernel_awkward_blind_dir
  COMMAND sh -c "o=$(\"$1\" --blind-dir data/measurements/h200-awkward) || exit 1
    for p in 'bf16+fp16 ' 'tf32 ' 'all ' 'unaligned '; do
      a=$(printf '%s\\n' \"$o\" | grep \"^r1 blind $p\" | head -1 | sed \"s/^r1 blind $p *//\")
      b=$(printf '%s\\n' \"$o\" | grep \"^blind $p\" | head -1 | sed \"s/^blind $p *//\")
      [ -n \"$a\" ] && [ \"$a\" = \"$b\" ] || { echo \"differ: $p [$a] [$b]\"; exit 1; }
    done
    a=$(printf '%s\\n' \"$o\" | grep '^r1 blind, r1 picks' | sed 's/^r1 blind, r1 picks *//')
    b=$(printf '%s\\n' \"$o\" | grep '^blind bf16+fp16.*committed picks' | sed 's/^blind bf16+fp16 *//')
    [ -n \"$a\" ] && [ \"$a\" = \"$b\" ] && echo same-scores" sh $<TARGET_FILE:kernel_awkward>
  WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
set_tests_properties(kernel_awkward_blind_dir PROPERTIES TIMEOUT 120
  PASS_REGULAR_EXPRESSION "same-scores")
# --hw prices another catalog accelerator with its shipped calibration (the
# H100 SXM: arch-hopper's, measured terms from the H200's) and writes its
# picks; an unknown name is refused with exit status 1.
add_test(NAME kernel_awkward_hw
  COMMAND sh -c "\"$1\" --hw h100-sxm --predict \"$2\" && grep -c '\"hardware\":.*\"h100-sxm\"' \"$2\"
    \"$1\" --hw no-such-gpu; echo rc=$?" sh $<TARGET_FILE:kernel_awkward>
    ${CMAKE_CURRENT_BINARY_DIR}/kernel_awkward_h100_predictions.json)
set_tests_properties(kernel_awkward_hw PROPERTIES TIMEOUT 120
  PASS_REGULAR_EXPRESSION
  "priced for h100-sxm \\(data/calibration/arch-hopper.json \\(published GEMMs\\), measured terms from h200\\).*wrote [^\n]*kernel_awkward_h100_predictions.json\n1\n.*rc=1")
# --gemm-rows lists every cuBLAS row of every H200 awkward set, one line
# each: the third set's gemm_sweep has 60 rows (20 shapes x bf16/fp16/tf32)
# and its backlog-timed kernel sweeps 46, and no selection summary is printed.
add_test(NAME kernel_awkward_gemm_rows
  COMMAND sh -c "o=$(\"$1\" --gemm-rows) || exit 1
    printf '%s\\n' \"$o\" | grep -q '^kernel selection' && { echo summary-printed; exit 1; }
    a=$(printf '%s\\n' \"$o\" | grep -c '^r3blind *sweep .* meas .* pred ')
    b=$(printf '%s\\n' \"$o\" | grep -c '^r3blind *backlog .* meas .* pred ')
    echo sweep=$a backlog=$b" sh $<TARGET_FILE:kernel_awkward>
  WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
set_tests_properties(kernel_awkward_gemm_rows PROPERTIES TIMEOUT 120
  PASS_REGULAR_EXPRESSION "sweep=60 backlog=46")
# The fifth blind set's committed picks (predictions.json, written before
# the sweep) scored on its sweep: the figures reported once in
# data/measurements/h200-awkward5/README.md, and its r5 GEMM rows present.
# The GEMM rows print the current cost_gemm: scored once under the model of
# then, r5 blind unaligned 12.4 / 27.2 % and r5 gemmbl unaligned 4.9 / 23.1 %;
# since the ninth round (bf16 align1 small-grid split-K, GEMM_SPLIT_GRID_FRAC
# and GEMM_RED_GAP_US in costmodel/gemm.c, chosen with these sets as fitting
# data) 11.3 / 27.2 and 4.7 / 22.3 %; since the twenty-first round (unaligned
# 16-bit tn loads, tf32 split-K: data/measurements/h100-gemm-time/, these sets
# among its fitting data) 9.7 / 21.1 and 4.7 / 17.5 %; since the twenty-eighth round (K = 1
# GEMMs: launch + max(compute, memory), GEMM_K1_JOIN) 9.7 / 21.0 and 4.7 / 17.5 %; since the
# twenty-ninth round (split-K factor 3 on Hopper, GEMM_SPLIT3) 9.4 / 21.1 and 5.4 / 17.4 %.
add_test(NAME kernel_awkward_r5_picks
  COMMAND sh -c "o=$(\"$1\") || exit 1
    printf '%s\\n' \"$o\" | grep -E '^r5 blind, r5 picks +40 +top1 0.962 worst 0.803 tau 0.791' || exit 1
    printf '%s\\n' \"$o\" | grep -E '^r5 blind unaligned +42 +median +9.4% +p90 +21.1%' || exit 1
    printf '%s\\n' \"$o\" | grep -E '^r5 gemmbl unaligned +42 +median +5.4% +p90 +17.4%'" sh
    $<TARGET_FILE:kernel_awkward>
  WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
set_tests_properties(kernel_awkward_r5_picks PROPERTIES TIMEOUT 120
  PASS_REGULAR_EXPRESSION "r5 gemmbl unaligned")

# The sixth and seventh blind sets (h200-awkward6, h200-awkward7), swept 2026-12-06 on a lent
# H200 with the eighth round's picks committed before: each set's committed picks scored on its
# sweep and its GEMM-time score of record (the backlog-timed copy), as
# data/measurements/h200-awkward6/README.md and h200-awkward7/README.md state them
# for the model then (r6 gemmbl unaligned 8.3 / 21.1 %, r7 8.1 / 34.8 %); the GEMM
# rows print the current cost_gemm, fitted with these sets: ninth round 7.2 / 21.3, 8.1 / 11.6 %;
# twenty-first round 8.1 / 19.9, 4.3 / 11.7 %; twenty-ninth round 8.1 / 19.6, 4.6 / 11.3 %.
add_test(NAME kernel_awkward_r6_r7_picks
  COMMAND sh -c "o=$(\"$1\") || exit 1
    printf '%s\\n' \"$o\" | grep -E '^r6 blind, r6 picks +40 +top1 0.966 worst 0.677 tau 0.813' || exit 1
    printf '%s\\n' \"$o\" | grep -E '^r6 gemmbl unaligned +36 +median +8.1% +p90 +19.6%' || exit 1
    printf '%s\\n' \"$o\" | grep -E '^r7 blind, r7 picks +40 +top1 0.976 worst 0.862 tau 0.822' || exit 1
    printf '%s\\n' \"$o\" | grep -E '^r7 gemmbl unaligned +12 +median +4.6% +p90 +11.3%'" sh
    $<TARGET_FILE:kernel_awkward>
  WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
set_tests_properties(kernel_awkward_r6_r7_picks PROPERTIES TIMEOUT 120
  PASS_REGULAR_EXPRESSION "r7 gemmbl unaligned")

# --jobs and --blind-dir take absolute paths as well as ones under the source tree: the same
# predictions and scores either way; a --jobs folder with no job file is refused (exit 1) and
# leaves no predictions file (it once wrote one with empty arrays).
add_test(NAME kernel_awkward_abs_paths
  COMMAND sh -c "s=\"$1\"; o=\"$2\"; rm -f \"$o\".*
    \"$s\" --hw h100-sxm --jobs data/measurements/h200-awkward16/jobs --predict \"$o.rel\" > /dev/null || exit 1
    \"$s\" --hw h100-sxm --jobs \"$PWD/data/measurements/h200-awkward16/jobs\" --predict \"$o.abs\" > /dev/null || exit 1
    cmp \"$o.rel\" \"$o.abs\" || exit 1
    grep -q '\"bm\"' \"$o.abs\" || { echo no-picks; exit 1; }
    a=$(\"$s\" --hw h100-sxm --blind-dir data/measurements/h100-awkward16 | grep -E '^blind (unaligned|backlog unal|bf16\\+fp16) ' | sed 's/ *(committed picks.*//')
    b=$(\"$s\" --hw h100-sxm --blind-dir \"$PWD/data/measurements/h100-awkward16\" | grep -E '^blind (unaligned|backlog unal|bf16\\+fp16) ' | sed 's/ *(committed picks.*//')
    [ -n \"$a\" ] && [ \"$a\" = \"$b\" ] || { echo \"differ [$a] [$b]\"; exit 1; }
    [ $(printf '%s\\n' \"$b\" | wc -l) -ge 4 ] || { echo \"rows missing [$b]\"; exit 1; }
    \"$s\" --hw h100-sxm --jobs /nonexistent-jobs --predict \"$o.none\"; r=$?
    [ $r -ne 0 ] && [ ! -e \"$o.none\" ] && echo abs-ok" sh $<TARGET_FILE:kernel_awkward>
    ${CMAKE_CURRENT_BINARY_DIR}/kernel_awkward_abs
  WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
set_tests_properties(kernel_awkward_abs_paths PROPERTIES TIMEOUT 180 PASS_REGULAR_EXPRESSION "abs-ok")

# The command line: --help prints usage (exit 0), an unknown option is refused (exit 2) rather
# than taken for the source tree, and AWK_FAM_W=0 (the short-K residual off) moves the
# predictions of set 22's K <= 128 problems and of no other.
add_test(NAME kernel_awkward_cli
  COMMAND sh -c "s=\"$1\"; o=\"$2\"; rm -f \"$o\".*
    \"$s\" --help | grep -q '^usage: kernel_awkward' || { echo no-usage; exit 1; }
    \"$s\" --bogus 2> \"$o.err\"; r=$?
    [ $r -eq 2 ] && grep -q 'unknown option --bogus' \"$o.err\" || { echo \"bogus rc $r\"; exit 1; }
    \"$s\" --hw h100-sxm --jobs data/measurements/h200-awkward22/jobs --predict \"$o.on\" > /dev/null || exit 1
    AWK_FAM_W=0 \"$s\" --hw h100-sxm --jobs data/measurements/h200-awkward22/jobs --predict \"$o.off\" > /dev/null || exit 1
    python3 - \"$o.on\" \"$o.off\" <<'PY' || exit 1
import json, sys
a, b = (json.load(open(f))['selection'] for f in sys.argv[1:3])
moved = [x['k'] for x, y in zip(a, b) if x != y]
assert moved and all(k <= 128 for k in moved), moved
assert any(x['k'] <= 128 and x['dtype'] in ('bf16', 'fp16') for x in a)
PY
    echo cli-ok" sh $<TARGET_FILE:kernel_awkward> ${CMAKE_CURRENT_BINARY_DIR}/kernel_awkward_cli
  WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
set_tests_properties(kernel_awkward_cli PROPERTIES TIMEOUT 120 PASS_REGULAR_EXPRESSION "cli-ok")
# The unaligned-GEMM band every Hopper answer carries (api/provenance.c,
# error_band.gemm_unaligned) must be what the blind awkward sweeps give
# (bench/awkward_band.py: committed picks against each sweep).
add_test(NAME awkward_band_sync
  COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/awkward_band.py --check $<TARGET_FILE:cdplan>)
set_tests_properties(awkward_band_sync PROPERTIES TIMEOUT 120)
