# bench/kernel_select: the kernel selector against the H200 Triton sweeps
# (shared half, 2-fold CV, held-out half). bench/kernel_sweep.c (sweep
# loader + scoring) is shared with tests/kernels.
add_executable(kernel_select ${CMAKE_CURRENT_SOURCE_DIR}/kernel_select.c
  ${CMAKE_CURRENT_SOURCE_DIR}/kernel_sweep.c ${CMAKE_CURRENT_SOURCE_DIR}/costmodel_load.c)
target_link_libraries(kernel_select PRIVATE cdplan_api cdplan_costmodel cdplan_common PkgConfig::CJSON ZLIB::ZLIB m
  cdplan_warnings)
target_compile_definitions(kernel_select PRIVATE CDPLAN_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
list(APPEND CDPLAN_BENCH_RUN kernel_select)
