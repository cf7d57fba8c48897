# Smoke tests for `crew launch` and crew::dist::spawn with the seed's demos.
set(_crew_list3 "\\[\\{'foo': \\[1, 2, 3\\]\\}, \\{'bar': \\[4, 5, 6\\]\\}, \\{'bar': \\[4, 5, 6\\]\\}\\]")
set(_crew_list4 "\\[\\{'foo': \\[1, 2, 3\\]\\}, \\{'bar': \\[4, 5, 6\\]\\}, \\{'bar': \\[4, 5, 6\\]\\}, \\{'bar': \\[4, 5, 6\\]\\}\\]")

if(TARGET crew_cli AND TARGET all_gather_object)
  # python -m paddle.distributed.launch --devices=0,1,2 demo.py
  add_test(NAME smoke.launch_all_gather_object_3
           COMMAND crew_cli launch --devices=0,1,2 --log_overwrite --log_dir ${CMAKE_BINARY_DIR}/smoke_logs/launch_3
                   $<TARGET_FILE:all_gather_object>)
  set_tests_properties(smoke.launch_all_gather_object_3 PROPERTIES
    PASS_REGULAR_EXPRESSION "${_crew_list3}\n.*Exit code 0"
    FAIL_REGULAR_EXPRESSION "Pod failed"
    TIMEOUT 60 LABELS "smoke;distributed")
  add_test(NAME smoke.launch_all_gather_object_4
           COMMAND crew_cli launch --devices=0,1,2,3 --log_overwrite --log_dir ${CMAKE_BINARY_DIR}/smoke_logs/launch_4
                   $<TARGET_FILE:all_gather_object>)
  set_tests_properties(smoke.launch_all_gather_object_4 PROPERTIES
    PASS_REGULAR_EXPRESSION "${_crew_list4}\n.*Exit code 0"
    FAIL_REGULAR_EXPRESSION "Pod failed"
    TIMEOUT 60 LABELS "smoke;distributed")
endif()

if(TARGET spawn_all_gather)
  # dist.spawn(train): every process prints the gathered list.
  add_test(NAME smoke.spawn_all_gather COMMAND spawn_all_gather --nprocs 3)
  set_tests_properties(smoke.spawn_all_gather PROPERTIES
    PASS_REGULAR_EXPRESSION "${_crew_list3}\n.*${_crew_list3}\n.*${_crew_list3}\n"
    TIMEOUT 60 LABELS "smoke;distributed")
endif()

if(TARGET spawn_is_initialized)
  # dist.spawn(train, args=(3,)) on 4 processes: rank 3 prints before and after init.
  add_test(NAME smoke.spawn_is_initialized COMMAND spawn_is_initialized --nprocs 4)
  set_tests_properties(smoke.spawn_is_initialized PROPERTIES
    PASS_REGULAR_EXPRESSION "ID:3 False\n.*ID:3 True\n"
    FAIL_REGULAR_EXPRESSION "ID:[0-2]"
    TIMEOUT 60 LABELS "smoke;distributed")
endif()
