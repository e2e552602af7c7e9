# bench/costmodel_accuracy: cost model accuracy against data/measurements/h200.
# api/measure.c is compiled in directly so the bench does not need the rest
# of cdplan_api (hwdb, SQLite) to build.
add_executable(costmodel_accuracy ${CMAKE_CURRENT_SOURCE_DIR}/costmodel_accuracy.c
  ${CMAKE_CURRENT_SOURCE_DIR}/costmodel_load.c ${CMAKE_SOURCE_DIR}/api/measure.c)
target_link_libraries(costmodel_accuracy PRIVATE cdplan_costmodel cdplan_common PkgConfig::CJSON m
  cdplan_warnings)
target_compile_definitions(costmodel_accuracy PRIVATE CDPLAN_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
list(APPEND CDPLAN_BENCH_RUN costmodel_accuracy)
