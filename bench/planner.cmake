# bench/planner: the embedding sharding/placement solver on generated
# instances (10..5000 tables, 8..1024 GPUs) against the greedy baseline and
# brute force. Descriptors are read with bench/costmodel_load.c.
add_executable(planner_bench ${CMAKE_CURRENT_SOURCE_DIR}/planner.c
  ${CMAKE_CURRENT_SOURCE_DIR}/costmodel_load.c)
target_link_libraries(planner_bench PRIVATE cdplan_api cdplan_planner cdplan_costmodel cdplan_common
  PkgConfig::CJSON ZLIB::ZLIB m cdplan_warnings)
target_compile_definitions(planner_bench PRIVATE CDPLAN_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
list(APPEND CDPLAN_BENCH_RUN planner_bench)
