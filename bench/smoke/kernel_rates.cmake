# bin/gemm_rate and bin/conv_rate (issue 31's float32 against bf16 kernel rates) on tiny
# shapes: they run, print a row per shape, and reject a malformed shape.
if(TARGET gemm_rate)
  add_test(NAME smoke.gemm_rate
    COMMAND $<TARGET_FILE:gemm_rate> --shapes 16x8x4 --reps 1 --min-seconds 0.001 --dtypes float32 bfloat16 float16)
  set_tests_properties(smoke.gemm_rate PROPERTIES TIMEOUT 60 LABELS smoke
    PASS_REGULAR_EXPRESSION "\\| 16x8x4 \\| [0-9.]+ \\| [0-9.]+ \\([0-9.]+x\\) \\| [0-9.]+ \\([0-9.]+x\\) \\|")
  add_test(NAME smoke.gemm_rate_bad_shape COMMAND $<TARGET_FILE:gemm_rate> --shapes 16x8)
  set_tests_properties(smoke.gemm_rate_bad_shape PROPERTIES TIMEOUT 60 LABELS smoke WILL_FAIL TRUE)
endif()
if(TARGET conv_rate)
  add_test(NAME smoke.conv_rate COMMAND $<TARGET_FILE:conv_rate> --shapes 2,16,16,4,3 --reps 1 --iters 1)
  set_tests_properties(smoke.conv_rate PROPERTIES TIMEOUT 60 LABELS smoke
    PASS_REGULAR_EXPRESSION "\\| 2,16,16,4x4,3x3 \\|.*x\\) \\|.*x\\) \\|.*x\\) \\| [0-9.]+x \\|")
  add_test(NAME smoke.conv_rate_bad_shape COMMAND $<TARGET_FILE:conv_rate> --shapes 2,16,0,4,3)
  set_tests_properties(smoke.conv_rate_bad_shape PROPERTIES TIMEOUT 60 LABELS smoke WILL_FAIL TRUE)
endif()
