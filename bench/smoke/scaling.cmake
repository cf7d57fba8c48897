# bench/train_scaling.sh end to end on a few steps (1x1, 1x2, pair, 2x1 and the summary lines).
if(TARGET train_cnn AND TARGET crew_cli)
  add_test(NAME smoke.train_scaling
    COMMAND ${PROJECT_SOURCE_DIR}/bench/train_scaling.sh ${PROJECT_BINARY_DIR} 20 1)
  set_tests_properties(smoke.train_scaling PROPERTIES TIMEOUT 180 LABELS smoke
    PASS_REGULAR_EXPRESSION "in-step ceiling .* / 1 rank: [0-9.]+x; 2 ranks reach [0-9]+% of it"
    FAIL_REGULAR_EXPRESSION "\\| (1x1|2x1|pair) \\|  \\|")
endif()

# bin/host_jitter on tiny chunks: one line per CPU alone and together, and the in-step line.
if(TARGET host_jitter)
  add_test(NAME smoke.host_jitter COMMAND host_jitter --chunk-ms 1 --chunks 20)
  set_tests_properties(smoke.host_jitter PROPERTIES TIMEOUT 60 LABELS smoke
    PASS_REGULAR_EXPRESSION "alone +cpu 0:.*together +cpu 0:.*in step \\(chunk by chunk")
endif()
