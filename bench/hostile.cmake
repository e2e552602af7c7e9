# bench/hostile: slowloris and large-upload figures against the real
# `cdplan serve` (bench/hostile.c). Alone:
#   cmake --build BUILD --target hostile && BUILD/bench/hostile
add_executable(hostile ${CMAKE_CURRENT_SOURCE_DIR}/hostile.c)
target_compile_definitions(hostile PRIVATE CDPLAN_BIN="$<TARGET_FILE:cdplan>")
target_link_libraries(hostile PRIVATE cdplan_warnings)
add_dependencies(hostile cdplan)
list(APPEND CDPLAN_BENCH_RUN hostile)
