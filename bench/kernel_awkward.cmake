# bench/kernel_awkward: kernel selection and GEMM time on the awkward-shape
# sweeps of issue 25 (data/measurements/h200-awkward/).
add_executable(kernel_awkward ${CMAKE_CURRENT_SOURCE_DIR}/kernel_awkward.c
  ${CMAKE_CURRENT_SOURCE_DIR}/kernel_sweep.c ${CMAKE_CURRENT_SOURCE_DIR}/costmodel_load.c)
target_link_libraries(kernel_awkward PRIVATE cdplan_api cdplan_costmodel cdplan_common PkgConfig::CJSON m
  cdplan_warnings)
target_compile_definitions(kernel_awkward PRIVATE CDPLAN_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
list(APPEND CDPLAN_BENCH_RUN kernel_awkward)
