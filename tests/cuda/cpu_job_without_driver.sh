#!/bin/bash
# A crew program with the CUDA module built in starts and trains on the CPU where no GPU driver
# exists: it links no libcuda, loads no cuBLASLt at start, and a short train_cnn run succeeds.
# The launcher (`crew`, optional second argument) links no CUDA library at all.
# Usage: cpu_job_without_driver.sh path/to/train_cnn [path/to/crew]
set -euo pipefail
bin=$1
launcher=${2:-}
if [ -n "$launcher" ] && ldd "$launcher" | grep -E 'libcud|libcublas|libnccl'; then
  echo "FAIL: $launcher links a CUDA library (the launcher finds GPUs without CUDA)"; exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if ldd "$bin" | grep -E 'libcuda\.so|libcublas' ; then
  echo "FAIL: $bin links the driver or cuBLAS (it must start without them)"; exit 1
fi
if [ "$(nm "$bin" 2>/dev/null | grep -c crew_cuda_backend_anchor)" = 0 ]; then
  echo "FAIL: $bin has no CUDA backend built in"; exit 1
fi
# The nccl group's driver is built in, but NCCL itself is loaded only when a group needs it.
if [ "$(nm "$bin" 2>/dev/null | grep -c crew_nccl_driver_anchor)" = 0 ]; then
  echo "FAIL: $bin has no nccl driver built in"; exit 1
fi
if ldd "$bin" | grep -E 'libnccl' ; then
  echo "FAIL: $bin links NCCL (it must start without it)"; exit 1
fi
# 40 + 20 MNIST-format images (bench/gpu/make_idx.py).
/usr/bin/python3 "$(dirname "$0")/../../bench/gpu/make_idx.py" "$work" 40 20
start=$(date +%s.%N)
"$bin" --dataset fashion-mnist --data-dir "$work" --epochs 1 --batch-size 8 --num-workers 1 --threads 1 \
  --log-every 1 > "$work/out.log" 2>&1 || { cat "$work/out.log"; echo "FAIL: train_cnn exited $?"; exit 1; }
end=$(date +%s.%N)
cat "$work/out.log" | tail -5
grep -qi "loss" "$work/out.log" || { echo "FAIL: no loss line"; exit 1; }
# Asking for the GPU says there is none, and how.
if "$bin" --dataset fashion-mnist --data-dir "$work" --epochs 1 --device gpu > "$work/gpu.log" 2>&1; then
  echo "FAIL: --device gpu succeeded without a GPU"; exit 1
fi
grep -q "set_device: 'gpu' does not exist: 0 gpu device(s) present" "$work/gpu.log" || { cat "$work/gpu.log"; exit 1; }
echo "OK: train_cnn with the CUDA module ran a CPU job in $(awk "BEGIN{printf \"%.2f\", $end - $start}") s without a GPU driver"
