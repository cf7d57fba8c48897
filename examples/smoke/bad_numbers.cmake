# A bad number on any program's command line is one line naming the flag, the value and the
# allowed range, and exit status 2 (tools/cli_checks.h); nothing else is printed or started.
# Each test runs its program with several bad values and prints "rc=N" after each.
function(crew_bad_number_test name pass_regex)
  set(script "")
  foreach(args IN LISTS ARGN)
    string(APPEND script "\"$0\" ${args}; echo \"rc=$?\"; ")
  endforeach()
  add_test(NAME smoke.bad_number_${name} COMMAND sh -c "${script}" $<TARGET_FILE:${name}>)
  set_tests_properties(smoke.bad_number_${name} PROPERTIES
    TIMEOUT 60 LABELS smoke
    FAIL_REGULAR_EXPRESSION "Run with --help|batch_id|0\\.000000|17976931348623|Configuration"
    PASS_REGULAR_EXPRESSION "${pass_regex}")
endfunction()

crew_bad_number_test(train_cnn
  "^train_cnn: --batch-size: value 0 is out of range: expected an integer >= 1\nrc=2\ntrain_cnn: --lr: value -1 is out of range: expected a number > 0\nrc=2\ntrain_cnn: --epochs: value 'abc' is not an integer: expected an integer >= 0\nrc=2\ntrain_cnn: --seed: value -1 is out of range: expected an integer >= 0\nrc=2\ntrain_cnn: --num-workers: value 99999999999 is out of range: expected an integer from 0 to 2147483647\nrc=2\n$"
  "--batch-size 0" "--lr -1" "--epochs abc" "--seed -1" "--num-workers 99999999999")
crew_bad_number_test(train_gpt
  "^train_gpt: --n-head: value 0 is out of range: expected an integer >= 1\nrc=2\ntrain_gpt: --grad-clip: value 'nan' is not a finite number: expected a number >= 0\nrc=2\n$"
  "--n-head 0" "--grad-clip nan")
crew_bad_number_test(train_resnet
  "^train_resnet: --synthetic: value 0 is out of range: expected an integer >= 1\nrc=2\ntrain_resnet: --batch-size: value 0 is out of range: expected an integer >= 1\nrc=2\n$"
  "--synthetic 0" "--batch-size 0")
crew_bad_number_test(spawn_is_initialized
  "^spawn_is_initialized: --nprocs: value -5 is out of range: expected an integer >= -1\nrc=2\n$"
  "--nprocs -5")
if(TARGET crew_cli)
  crew_bad_number_test(crew_cli
    "^crew launch: --nnodes: value 0 is out of range: expected an integer >= 1 \\(see crew launch --help\\)\nrc=2\ncrew launch: --max_restart: value 'x' is not an integer: expected an integer >= 0 \\(see crew launch --help\\)\nrc=2\n$"
    "launch --nnodes 0 /bin/true" "launch --max_restart x /bin/true")
endif()
