# Smoke tests of examples/train_resnet (synthetic images) and examples/train_gpt (Debian's
# fortunes, apt-get install fortunes): a few steps each, one process and two ranks, and the
# 2 ranks x B/2 = 1 rank x B equivalence (examples/smoke/ranks_equivalence.py).
add_test(NAME smoke.train_resnet
  COMMAND $<TARGET_FILE:train_resnet> --synthetic 64 --batch-size 8 --max-steps 6 --num-workers 1 --threads 1
          --log-every 5 --augment --lr-schedule cosine --warmup-steps 2)
set_tests_properties(smoke.train_resnet PROPERTIES
  TIMEOUT 120 LABELS smoke
  PASS_REGULAR_EXPRESSION "train_resnet: 1 process x 1 thread\\(s\\), batch 8 per rank, 8 steps per epoch.*epoch: 0, batch_id: 0, loss is: \\[[0-9.e+-]+\\].*epoch: 0, batch_id: 5, loss is.*done: 6 steps, [0-9]+ images/s, peak RSS [0-9]+ MB")

add_test(NAME smoke.train_gpt
  COMMAND $<TARGET_FILE:train_gpt> --n-layer 1 --n-head 2 --n-embd 32 --block-size 32 --batch-size 4
          --max-steps 4 --num-workers 1 --threads 1 --sample 40)
set_tests_properties(smoke.train_gpt PROPERTIES
  TIMEOUT 120 LABELS smoke
  PASS_REGULAR_EXPRESSION "train_gpt: 1 process.*epoch: 0, batch_id: 0, loss is: \\[5\\.[0-9]+\\].*done: 4 steps, [0-9]+ tokens/s.*sample \\(40 bytes\\):")

if(TARGET crew_cli)
  add_test(NAME smoke.train_gpt_launch
    COMMAND $<TARGET_FILE:crew_cli> launch --devices=0,1 --log_dir ${CMAKE_CURRENT_BINARY_DIR}/train_gpt_launch_log
            $<TARGET_FILE:train_gpt> --n-layer 1 --n-head 2 --n-embd 32 --block-size 32 --batch-size 4
            --max-steps 4 --num-workers 1 --threads 1 --profile)
  set_tests_properties(smoke.train_gpt_launch PROPERTIES
    TIMEOUT 180 LABELS "smoke;distributed"
    PASS_REGULAR_EXPRESSION "train_gpt: 2 ranks.*done: 4 steps, [0-9]+ tokens/s.*profile rank 0 \\(4 steps\\): compute [0-9.]+ ms \\+ communication wait [0-9.]+ ms \\+ data wait [0-9.]+ ms per step.*profile rank 1.*Exit code 0")
  if(NOT Python3_EXECUTABLE AND EXISTS /usr/bin/python3)
    set(Python3_EXECUTABLE /usr/bin/python3)  # Debian's, with NumPy (not a pyenv shim)
  endif()
  find_package(Python3 COMPONENTS Interpreter)
  if(Python3_Interpreter_FOUND)
    add_test(NAME smoke.models_ranks_equivalence
      COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/smoke/ranks_equivalence.py ${PROJECT_BINARY_DIR}/bin
              ${CMAKE_CURRENT_BINARY_DIR}/ranks_equivalence)
    set_tests_properties(smoke.models_ranks_equivalence PROPERTIES TIMEOUT 300 LABELS "smoke;distributed")
    # --checkpoint-dir: stopped at step 4, resumed to 6, the same losses as a straight run.
    add_test(NAME smoke.train_gpt_resume
      COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/smoke/resume_check.py ${PROJECT_BINARY_DIR}/bin
              ${CMAKE_CURRENT_BINARY_DIR}/train_gpt_resume)
    set_tests_properties(smoke.train_gpt_resume PROPERTIES TIMEOUT 120 LABELS smoke)
    # The same at O2 (bfloat16 parameters; the float32 master weights in the checkpoint).
    add_test(NAME smoke.train_gpt_resume_amp
      COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/smoke/resume_check.py ${PROJECT_BINARY_DIR}/bin
              ${CMAKE_CURRENT_BINARY_DIR}/train_gpt_resume_amp --amp bf16 --amp-level O2)
    set_tests_properties(smoke.train_gpt_resume_amp PROPERTIES TIMEOUT 120 LABELS smoke)
    # --amp bf16 at O1 and O2 (and fp16 through the loss scaler; O2 on 2 ranks with
    # --comm-dtype bf16): losses finite and falling.
    add_test(NAME smoke.train_models_amp
      COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/smoke/amp_check.py ${PROJECT_BINARY_DIR}/bin
              ${CMAKE_CURRENT_BINARY_DIR}/train_models_amp)
    set_tests_properties(smoke.train_models_amp PROPERTIES TIMEOUT 300 LABELS "smoke;distributed")
  endif()
endif()
