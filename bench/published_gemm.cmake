# bench/published_gemm: the GEMM model against published dense GEMM
# throughputs and cross-vendor ratios (data/measurements/published/).
add_executable(published_gemm ${CMAKE_CURRENT_SOURCE_DIR}/published_gemm.c
  ${CMAKE_CURRENT_SOURCE_DIR}/published_gemm_cdna3.c)
target_link_libraries(published_gemm PRIVATE cdplan_api cdplan_costmodel cdplan_common
  PkgConfig::CJSON m cdplan_warnings)
target_compile_definitions(published_gemm PRIVATE CDPLAN_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
list(APPEND CDPLAN_BENCH_RUN published_gemm)
# The MI300X report runs and prices its large-operand terms on fit rows
# (published_gemm_cdna3.c): a row priced as NaN or a missing report fails.
add_test(NAME published_gemm_mi300x_report COMMAND published_gemm)
set_tests_properties(published_gemm_mi300x_report PROPERTIES TIMEOUT 60
  PASS_REGULAR_EXPRESSION "spill\\+2\\^k s: cdna3 [+-][0-9]\\.[0-9]+ \\([0-9]+ fit rows\\)"
  FAIL_REGULAR_EXPRESSION "nan")
# Every answer's GEMM error band (api/provenance.c) is the check median this
# bench prints for that accelerator (fit-only where a fresh database ships a
# per-architecture calibration, datasheet otherwise): a refit that moves one
# without the other fails here.
add_test(NAME published_gemm_bands_sync
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/bands_sync.py
    $<TARGET_FILE:published_gemm> $<TARGET_FILE:cdplan>)
set_tests_properties(published_gemm_bands_sync PROPERTIES TIMEOUT 120
  PASS_REGULAR_EXPRESSION "bands in sync")
