# bench/step_valcal: the step-level calibration from the committed H200 plan
# validation runs, fitted on one run and scored on the other and on the
# older h200-uvm whole-step files (bench/step_valcal.c). Alone:
#   cmake --build BUILD --target step_valcal && BUILD/bench/step_valcal
add_executable(step_valcal ${CMAKE_CURRENT_SOURCE_DIR}/step_valcal.c)
target_link_libraries(step_valcal PRIVATE cdplan_api PkgConfig::CJSON m cdplan_warnings)
target_compile_definitions(step_valcal PRIVATE CDPLAN_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
list(APPEND CDPLAN_BENCH_RUN step_valcal)
