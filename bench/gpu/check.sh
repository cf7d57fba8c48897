#!/bin/bash
# crew's GPU check, run on a GPU machine from the bundle bench/gpu/pack.sh made
# (docs/devices.md, "Checking on a GPU"). Every stage runs under its own timeout and logs to
# LOG_DIR/<stage>.log; a summary table comes last. The timeouts add up to 7 minutes.
#
#   tar -xJf gpu_bundle.tar.xz && crew_gpu/check.sh [LOG_DIR]      # LOG_DIR: crew_gpu/logs
#
# Exit 0: every stage that ran passed; 1: a stage failed; 77: no GPU here (nothing to check).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
logs=${1:-$here/logs}
mkdir -p "$logs"
bin=$here/bin

# CUDA libraries: PyTorch's wheels (one cuDNN directory only), else a toolkit's.
site=$(python3 -c 'import site; print(site.getsitepackages()[0])' 2>/dev/null || true)
cuda_libs=""
for d in "$site/nvidia/cu13/lib" "$site/nvidia/cudnn/lib" "$site/nvidia/nccl/lib"; do
  [ -d "$d" ] && cuda_libs="$cuda_libs:$d"
done
[ -z "$cuda_libs" ] && for d in /usr/local/cuda/lib64 /usr/local/cuda/lib; do [ -d "$d" ] && cuda_libs="$cuda_libs:$d"; done
export LD_LIBRARY_PATH="$here/lib$cuda_libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

names=()
results=()
times=()
# stage NAME TIMEOUT_S COMMAND...: runs COMMAND under the timeout, logs to $logs/NAME.log;
# exit 77 from it is a skip.
stage() {
  local name=$1 limit=$2
  shift 2
  local start=$SECONDS rc
  echo "== $name (at most ${limit} s)"
  timeout --kill-after=10 "$limit" bash -c "$*" > "$logs/$name.log" 2>&1
  rc=$?
  local result
  case $rc in
    0) result=ok ;;
    77) result=skipped ;;
    124 | 137) result="TIMEOUT (${limit} s)" ;;
    *) result="FAILED (exit $rc)" ;;
  esac
  names+=("$name")
  results+=("$result")
  times+=("$((SECONDS - start))")
  tail -3 "$logs/$name.log" | sed 's/^/   /'
}

summary() {
  echo
  printf '%-16s %-22s %6s  %s\n' stage result secs log
  for i in "${!names[@]}"; do
    printf '%-16s %-22s %6s  %s\n' "${names[$i]}" "${results[$i]}" "${times[$i]}" "$logs/${names[$i]}.log"
  done
}

stage versions 15 "nvidia-smi; uname -a; ldd --version | head -1; python3 -c 'import torch; print(\"torch\", torch.__version__, \"cuda\", torch.version.cuda, \"cudnn\", torch.backends.cudnn.version())'; echo LD_LIBRARY_PATH=\$LD_LIBRARY_PATH; ls $site/nvidia/*/lib 2>/dev/null | grep -E 'cudart|cublasLt|cudnn.so|nccl'; cat $here/ref/host $here/ref/commit"
# CREW_GPU_CHECK_FORCE=1 runs the stages anyway (to try this script where there is no GPU).
if [ "${CREW_GPU_CHECK_FORCE:-0}" != 1 ] && ! nvidia-smi -L > /dev/null 2>&1 && ! ls /dev/nvidia0 > /dev/null 2>&1; then
  echo "no GPU here (nvidia-smi finds none, no /dev/nvidia0): nothing to check" | tee "$logs/gpu.log"
  names+=(gpu); results+=("no GPU"); times+=(0)
  summary
  exit 77
fi
stage ldd 10 "for b in $bin/*; do echo \"\$b\"; ldd \"\$b\" | grep -E 'not found|dnnl|openblas|gloo|cudnn'; done; ! (for b in $bin/*; do ldd \"\$b\"; done | grep 'not found')"
# TF32 off twice over: crew asks for FMA math, and NVIDIA_TF32_OVERRIDE=0 forbids TF32 to cuBLAS/cuDNN.
export NVIDIA_TF32_OVERRIDE=0
stage kernels 60 "$bin/crew_cuda_tests --gtest_filter='CudaKernels.*:CudaRuntime.*:CudaNnKernels.*:CudaDataLoader.*'"
# A one-rank NCCL communicator (the most one GPU runs), and non-blocking init aborted on time.
stage nccl 30 "$bin/crew_cuda_tests --gtest_filter='CudaNccl.*'"
stage cnn_20_steps 60 "$bin/crew_cuda_tests --gtest_filter='CudaTraining.*' && $bin/train_cnn --device gpu --dataset fashion-mnist --data-dir $here/data --epochs 1 --max-steps 20 --batch-size 32 --no-shuffle --num-workers 0 --threads 1 --seed 7 --test-samples 100 --metrics $logs/cnn_gpu_20.jsonl && python3 $here/scripts/compare_traces.py losses $here/ref/cnn_cpu_20.jsonl $logs/cnn_gpu_20.jsonl 20 1e-4"
stage cnn_10_epochs 70 "$bin/train_cnn --device gpu --dataset fashion-mnist --data-dir $here/data --epochs 10 --batch-size 32 --num-workers 2 --seed 7 --metrics $logs/cnn_gpu_10.jsonl && python3 $here/scripts/compare_traces.py accuracy $here/ref/cnn_cpu_10_epochs.jsonl $logs/cnn_gpu_10.jsonl 0.01"
# Two ranks sharing the GPU (their collectives staged through host memory around shm) end
# where one rank at twice the batch does.
cnn_args="--dataset fashion-mnist --data-dir $here/data --epochs 1 --max-steps 20 --no-shuffle --num-workers 0 --threads 1 --seed 7 --test-samples 100"
stage staged_2_ranks 50 "cd $logs && rm -rf one two && $bin/train_cnn --device gpu:0 $cnn_args --batch-size 32 --save one && $bin/crew launch --nproc_per_node 2 --log_dir launch_2_ranks $bin/train_cnn --device gpu:0 $cnn_args --batch-size 16 --save two && python3 $here/scripts/compare_traces.py weights one/model.safetensors two/model.safetensors 1e-4"
# ResNet-18 and the GPT on the GPU: their first 5 losses against the CPU's from the same
# weights and batches (a looser bound than the CNN's: deeper nets, Adam's first steps).
resnet_args="--synthetic 256 --max-steps 5 --batch-size 32 --no-shuffle --num-workers 0 --seed 7 --log-every 1"
gpt_args="--text $here/data/text.txt --n-layer 2 --max-steps 5 --batch-size 16 --no-shuffle --num-workers 0 --seed 7 --log-every 1"
stage resnet_gpt 45 "$bin/train_resnet --device gpu $resnet_args --metrics $logs/resnet_gpu_5.jsonl && python3 $here/scripts/compare_traces.py losses $here/ref/resnet_cpu_5.jsonl $logs/resnet_gpu_5.jsonl 5 1e-2 && $bin/train_gpt --device gpu $gpt_args --metrics $logs/gpt_gpu_5.jsonl && python3 $here/scripts/compare_traces.py losses $here/ref/gpt_cpu_5.jsonl $logs/gpt_gpu_5.jsonl 5 1e-2"
# Speed beside PyTorch eager on the same card, TF32 off on both sides.
stage speed 70 "$bin/train_cnn --device gpu --dataset fashion-mnist --data-dir $here/data --epochs 2 --batch-size 32 --num-workers 2 --seed 7 | tail -2; python3 $here/scripts/torch_cnn_step.py --batch 32 --steps 200 --reps 3; $bin/train_resnet --device gpu --synthetic 2048 --max-steps 40 --batch-size 32 --num-workers 2 | tail -1; python3 $here/scripts/torch_models.py --model resnet18 --synthetic 2048 --steps 40 --batch-size 32 --device cuda; $bin/train_gpt --device gpu --text $here/data/text.txt --max-steps 30 --batch-size 16 --num-workers 2 | tail -1; python3 $here/scripts/torch_models.py --model gpt --text $here/data/text.txt --steps 30 --batch-size 16 --device cuda"
summary
for r in "${results[@]}"; do
  case $r in ok | skipped) ;; *) exit 1 ;; esac
done
exit 0
