# `crew bench collectives`: both backends side by side on two forked ranks (a tiny size range).
if(TARGET crew_cli AND TARGET collectives_bench)
  add_test(NAME smoke.crew_bench_collectives
    COMMAND $<TARGET_FILE:crew_cli> bench collectives --nprocs 2 --backend shm,gloo --sizes 4:4K --runs 1)
  set_tests_properties(smoke.crew_bench_collectives PROPERTIES TIMEOUT 120 LABELS smoke
    PASS_REGULAR_EXPRESSION "shm.*gloo|gloo.*shm")
endif()

# The hierarchical backend on 2 simulated hosts x 2 ranks, beside gloo.
if(TARGET crew_cli AND TARGET collectives_bench)
  add_test(NAME smoke.crew_bench_collectives_hier
    COMMAND $<TARGET_FILE:crew_cli> bench collectives --nprocs 4 --hosts 2 --backend hier,gloo --sizes 4:4K
            --runs 1 --max-iters 20 --latency-iters 20)
  set_tests_properties(smoke.crew_bench_collectives_hier PROPERTIES TIMEOUT 120 LABELS smoke
    PASS_REGULAR_EXPRESSION "backend hier, 4 ranks.*backend gloo, 4 ranks")
endif()
