# bench/costmodel_accuracy: cost model accuracy against data/measurements/h200.
# It reads descriptors and measurement files with the api's decoders
# (cdplan_api).
add_executable(costmodel_accuracy ${CMAKE_CURRENT_SOURCE_DIR}/costmodel_accuracy.c
  ${CMAKE_CURRENT_SOURCE_DIR}/costmodel_load.c)
target_link_libraries(costmodel_accuracy PRIVATE cdplan_api cdplan_costmodel cdplan_common PkgConfig::CJSON ZLIB::ZLIB m
  cdplan_warnings)
target_compile_definitions(costmodel_accuracy PRIVATE CDPLAN_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
list(APPEND CDPLAN_BENCH_RUN costmodel_accuracy)
