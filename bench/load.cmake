# bench/load: wrk against `cdplan serve` on loopback (healthz, estimate,
# plans); the work is in bench/load.sh, run by a small wrapper executable
# so that `make bench` runs it with the others. Alone:
#   cmake --build BUILD --target load_run && BUILD/bench/load_run
add_executable(load_run ${CMAKE_CURRENT_SOURCE_DIR}/load_run.c)
target_compile_definitions(load_run PRIVATE CDPLAN_LOAD_SH="${CMAKE_CURRENT_SOURCE_DIR}/load.sh"
  CDPLAN_BIN="$<TARGET_FILE:cdplan>" CDPLAN_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
target_link_libraries(load_run PRIVATE cdplan_warnings)
add_dependencies(load_run cdplan)
list(APPEND CDPLAN_BENCH_RUN load_run)
