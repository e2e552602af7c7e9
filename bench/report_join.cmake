# bench/report_join: a validation report's time at 5,000 / 20,000 / 80,000
# measured rows (bench/report_join.c). Alone:
#   cmake --build BUILD --target report_join && BUILD/bench/report_join
add_executable(report_join ${CMAKE_CURRENT_SOURCE_DIR}/report_join.c)
target_link_libraries(report_join PRIVATE cdplan_api PkgConfig::CJSON cdplan_warnings)
list(APPEND CDPLAN_BENCH_RUN report_join)
