# bench/published_gemm: the GEMM model against published dense GEMM
# throughputs and cross-vendor ratios (data/measurements/published/).
add_executable(published_gemm ${CMAKE_CURRENT_SOURCE_DIR}/published_gemm.c
  ${CMAKE_CURRENT_SOURCE_DIR}/published_gemm_cdna3.c)
target_link_libraries(published_gemm PRIVATE cdplan_api cdplan_costmodel cdplan_common
  PkgConfig::CJSON m cdplan_warnings)
target_compile_definitions(published_gemm PRIVATE CDPLAN_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
list(APPEND CDPLAN_BENCH_RUN published_gemm)
