# Smoke tests of the distributed examples. One-process runs check the warning and that the
# example still works; the multi-rank runs go through the ParallelExamples tests of
# crew_distributed_tests, which fork the ranks on 127.0.0.1 and check every rank's output.
set(crew_no_parallel_env
    CREW_RANK=unset: CREW_WORLD_SIZE=unset: CREW_MASTER=unset: PADDLE_TRAINER_ID=unset:
    PADDLE_TRAINERS_NUM=unset: RANK=unset: WORLD_SIZE=unset: OMPI_COMM_WORLD_RANK=unset: SLURM_PROCID=unset:)

add_test(NAME smoke.all_gather_object COMMAND all_gather_object)
set_tests_properties(smoke.all_gather_object PROPERTIES
  LABELS smoke TIMEOUT 60
  ENVIRONMENT_MODIFICATION "${crew_no_parallel_env}"
  PASS_REGULAR_EXPRESSION "Currently not a parallel execution environment, init_parallel_env will not do anything\\.(.|\n)*\\[\\{'foo': \\[1, 2, 3\\]\\}\\]")

add_test(NAME smoke.is_initialized COMMAND is_initialized 0)
set_tests_properties(smoke.is_initialized PROPERTIES
  LABELS smoke TIMEOUT 60
  ENVIRONMENT_MODIFICATION "${crew_no_parallel_env}"
  PASS_REGULAR_EXPRESSION "ID:0 False(.|\n)*not a parallel execution environment(.|\n)*ID:0 False")

if(TARGET crew_distributed_tests OR EXISTS ${PROJECT_SOURCE_DIR}/tests/distributed/parallel_examples_test.cpp)
  add_test(NAME smoke.all_gather_object_3_ranks
           COMMAND $<TARGET_FILE:crew_distributed_tests> --gtest_filter=ParallelExamples.AllGatherObjectThreeRanks)
  add_test(NAME smoke.is_initialized_4_ranks
           COMMAND $<TARGET_FILE:crew_distributed_tests> --gtest_filter=ParallelExamples.IsInitializedFourRanks)
  set_tests_properties(smoke.all_gather_object_3_ranks smoke.is_initialized_4_ranks PROPERTIES
    LABELS "smoke;distributed" TIMEOUT 120
    ENVIRONMENT "CREW_EXAMPLES_DIR=${PROJECT_BINARY_DIR}/bin"
    ENVIRONMENT_MODIFICATION "${crew_no_parallel_env}"
    PASS_REGULAR_EXPRESSION "\\[  PASSED  \\] 1 test"
    FAIL_REGULAR_EXPRESSION "SKIPPED|FAILED")
endif()
