# Smoke tests of examples/train_cnn on the Debian package's Fashion-MNIST
# (apt-get install dataset-fashion-mnist): a few steps, a small test subset.
add_test(NAME smoke.train_cnn
  COMMAND $<TARGET_FILE:train_cnn> --epochs 1 --max-steps 20 --test-samples 200 --num-workers 1 --threads 1
          --log-every 10 --seed 3)
set_tests_properties(smoke.train_cnn PROPERTIES
  TIMEOUT 120 LABELS smoke
  PASS_REGULAR_EXPRESSION "epoch: 0, batch_id: 0, loss is: \\[[0-9.e+-]+\\].*epoch: 0, batch_id: 10, loss is: \\[[0-9.e+-]+\\].*epoch 0: test accuracy [01]\\.[0-9][0-9][0-9][0-9] \\(200 images\\), [0-9]+ images/s.*done: 1 epochs, [0-9.]+ s, [0-9]+ images/s, final test accuracy [01]\\.[0-9]+ \\(stopped by --max-steps after 20 steps\\)")

# --save after a --max-steps stop, then --resume from it with metrics written.
add_test(NAME smoke.train_cnn_resume
  COMMAND sh -c "rm -rf \"$1\" && mkdir -p \"$1\" && \"$0\" --epochs 2 --max-steps 5 --test-samples 100 --num-workers 0 --threads 1 --save \"$1/ckpt\" && \"$0\" --epochs 1 --max-steps 5 --test-samples 100 --threads 1 --resume \"$1/ckpt\" --metrics \"$1/m.jsonl\" && cat \"$1/m.jsonl\""
          $<TARGET_FILE:train_cnn> ${CMAKE_CURRENT_BINARY_DIR}/train_cnn_resume)
set_tests_properties(smoke.train_cnn_resume PROPERTIES
  TIMEOUT 120 LABELS smoke
  PASS_REGULAR_EXPRESSION "done: 1 epochs.*resumed from [^\n]*ckpt: 0 epochs, step 5.*\"type\": \"step\", \"epoch\": 0, \"step\": 5,.*\"type\": \"epoch\", \"epoch\": 0,")

# The main job's distributed form: two ranks under `crew launch`, DataParallel, the profile
# breakdown and the one-process comparison.
if(TARGET crew_cli)
  add_test(NAME smoke.train_cnn_launch
    COMMAND $<TARGET_FILE:crew_cli> launch --devices=0,1 --log_dir ${CMAKE_CURRENT_BINARY_DIR}/train_cnn_launch_log
            $<TARGET_FILE:train_cnn> --epochs 1 --max-steps 20 --test-samples 200 --num-workers 1 --log-every 10
            --compare-single --compare-steps 10 --profile)
  set_tests_properties(smoke.train_cnn_launch PROPERTIES
    TIMEOUT 180 LABELS "smoke;distributed"
    PASS_REGULAR_EXPRESSION "train_cnn: fashion-mnist, 2 ranks.*epoch: 0, batch_id: 10, loss is: \\[[0-9.e+-]+\\].*epoch 0: test accuracy [01]\\.[0-9]+ \\(200 images\\).*profile \\(rank 0, 20 steps\\): step [0-9.]+ ms = compute.*gradient communication wait.*data wait.*profile per rank \\(compute / communication wait / data wait, ms per step\\): rank 0 [0-9.]+ / [0-9.]+ / [0-9.]+, rank 1 [0-9.]+.*speed-up: 2 ranks [0-9]+ images/s vs 1 process [0-9]+ images/s.*Pod completed.*Exit code 0")
endif()

# --checkpoint-dir: a run stopped by --max-steps, then a second one resuming mid-epoch from its
# newest checkpoint and keeping the last 2 (the restart tests with a killed worker are launch.ResumeFault.*).
add_test(NAME smoke.train_cnn_checkpoint_dir
  COMMAND sh -c "rm -rf \"$1\" && \"$0\" --epochs 1 --max-steps 6 --test-samples 100 --num-workers 0 --threads 1 --checkpoint-dir \"$1\" --checkpoint-every 4 && ls \"$1\" && \"$0\" --epochs 1 --max-steps 9 --test-samples 100 --num-workers 0 --threads 1 --checkpoint-dir \"$1\" --checkpoint-every 4 --checkpoint-keep 2 && ls \"$1\""
          $<TARGET_FILE:train_cnn> ${CMAKE_CURRENT_BINARY_DIR}/train_cnn_checkpoint_dir)
set_tests_properties(smoke.train_cnn_checkpoint_dir PROPERTIES
  TIMEOUT 120 LABELS smoke
  PASS_REGULAR_EXPRESSION "stopped by --max-steps after 6 steps.*step-000000000004\nstep-000000000006\n.*resumed from [^\n]*train_cnn_checkpoint_dir/step-000000000006 \\(epoch 0, batch 6\\).*stopped by --max-steps after 3 steps[^\n]*\nstep-000000000008\nstep-000000000009\n")

# Bad output paths are usage errors (exit 2) found before the first step, each naming its flag:
# a directory that cannot be created, a file where a directory is wanted, an unwritable file.
add_test(NAME smoke.train_cnn_bad_output_paths
  COMMAND sh -c "rm -rf \"$1\" && touch \"$1\" && \"$0\" --epochs 1 --max-steps 2 --checkpoint-dir /proc/nope/ckpt; echo \"rc=$?\"; \"$0\" --epochs 1 --max-steps 2 --save \"$1\"; echo \"rc=$?\"; \"$0\" --epochs 1 --max-steps 2 --metrics /proc/nope/m.jsonl; echo \"rc=$?\"; \"$0\" --epochs 1 --max-steps 2 --checkpoint-dir \"$1/sub\"; echo \"rc=$?\""
          $<TARGET_FILE:train_cnn> ${CMAKE_CURRENT_BINARY_DIR}/train_cnn_bad_output_paths.file)
set_tests_properties(smoke.train_cnn_bad_output_paths PROPERTIES
  TIMEOUT 60 LABELS smoke
  FAIL_REGULAR_EXPRESSION "epoch|train_cnn: fashion-mnist|filesystem error"
  PASS_REGULAR_EXPRESSION "train_cnn: --checkpoint-dir /proc/nope/ckpt: cannot create it: [^\n]+\nrc=2\ntrain_cnn: --save [^\n]*train_cnn_bad_output_paths.file: not a directory\nrc=2\ntrain_cnn: --metrics /proc/nope/m.jsonl: cannot open it for writing: No such file or directory\nrc=2\ntrain_cnn: --checkpoint-dir [^\n]*train_cnn_bad_output_paths.file/sub: cannot create it: [^\n]+\nrc=2\n")

# --save (per epoch) and --checkpoint-dir (per N steps) are one or the other: both is a usage
# error before anything is trained.
add_test(NAME smoke.train_cnn_save_excludes_checkpoint_dir
  COMMAND sh -c "\"$0\" --epochs 1 --max-steps 2 --save \"$1/save\" --checkpoint-dir \"$1/ckpt\"; echo \"rc=$?\""
          $<TARGET_FILE:train_cnn> ${CMAKE_CURRENT_BINARY_DIR}/train_cnn_save_excludes)
set_tests_properties(smoke.train_cnn_save_excludes_checkpoint_dir PROPERTIES
  TIMEOUT 60 LABELS smoke
  FAIL_REGULAR_EXPRESSION "epoch|train_cnn: fashion-mnist"
  PASS_REGULAR_EXPRESSION "train_cnn: --save excludes --checkpoint-dir\nrc=2\n")
