# bench/step_accuracy: the step model vs the H200 DLRM measurements and the
# published Megatron-LM iteration times (run from the repository root).
add_executable(step_accuracy ${CMAKE_CURRENT_SOURCE_DIR}/step_accuracy.c
  ${CMAKE_CURRENT_SOURCE_DIR}/step_uvm.c ${CMAKE_CURRENT_SOURCE_DIR}/step_transformer.c)
target_link_libraries(step_accuracy PRIVATE cdplan_api PkgConfig::CJSON m cdplan_warnings)
list(APPEND CDPLAN_BENCH_RUN step_accuracy)
