# bench/published_accuracy: the collective model against published
# nccl-tests / rccl-tests tables (data/measurements/published/), fitted on
# the rows marked fit, scored on both halves; and the step model against the
# published MLPerf DLRM-DCNv2 throughputs (published_mlperf.c).
add_executable(published_accuracy ${CMAKE_CURRENT_SOURCE_DIR}/published_accuracy.c
  ${CMAKE_CURRENT_SOURCE_DIR}/published_mlperf.c)
target_link_libraries(published_accuracy PRIVATE cdplan_api cdplan_costmodel cdplan_common
  PkgConfig::CJSON m cdplan_warnings)
target_compile_definitions(published_accuracy PRIVATE CDPLAN_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
list(APPEND CDPLAN_BENCH_RUN published_accuracy)
