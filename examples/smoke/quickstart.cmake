# The README's usage example, in one process and under `crew launch` with two ranks.
add_test(NAME smoke.quickstart COMMAND $<TARGET_FILE:quickstart> 30)
set_tests_properties(smoke.quickstart PROPERTIES TIMEOUT 120 LABELS smoke
  PASS_REGULAR_EXPRESSION "step 0 loss [0-9.]+.*rank 0 of 1: 30 steps")
if(TARGET crew_cli)
  add_test(NAME smoke.quickstart_launch
    COMMAND $<TARGET_FILE:crew_cli> launch --devices=0,1 --log_dir ${CMAKE_CURRENT_BINARY_DIR}/quickstart_log
            $<TARGET_FILE:quickstart> 30)
  set_tests_properties(smoke.quickstart_launch PROPERTIES TIMEOUT 120 LABELS smoke
    PASS_REGULAR_EXPRESSION "step 0 loss [0-9.]+.*rank 0 of 2: 30 steps.*Exit code 0")
endif()
