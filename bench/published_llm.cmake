# bench/published_llm: the transformer step model against published LLM
# training throughputs (NeMo / Megatron-Bridge performance summaries,
# data/measurements/published/llm_training.json, LLM.md there).
add_executable(published_llm ${CMAKE_CURRENT_SOURCE_DIR}/published_llm.c)
target_link_libraries(published_llm PRIVATE cdplan_api cdplan_common PkgConfig::CJSON m
  cdplan_warnings)
target_compile_definitions(published_llm PRIVATE CDPLAN_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
list(APPEND CDPLAN_BENCH_RUN published_llm)
# The check: every row loads and every row not skipped by a stated rule
# prices through api_step (the workload and recipe validate).
add_test(NAME published_llm_check COMMAND published_llm --check)
set_tests_properties(published_llm_check PROPERTIES TIMEOUT 120)
# A ratio that names a row skipped by a stated rule (here a LoRA row) makes
# --check fail: the fixture pairs a priced row with a skipped one; the test
# wants that line and exit status 1.
add_test(NAME published_llm_ratio_unpriced
  COMMAND sh -c "\"$1\" --check \"$2\"; echo rc=$?" sh $<TARGET_FILE:published_llm>
    ${CMAKE_CURRENT_SOURCE_DIR}/published_llm_bad_ratio.json)
set_tests_properties(published_llm_ratio_unpriced PROPERTIES TIMEOUT 60
  PASS_REGULAR_EXPRESSION "1 priced, 1 skipped by a stated rule, 1 ratios, 1 bad\nrc=1")
