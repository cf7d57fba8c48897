#!/bin/bash
# Packs what a GPU machine lacks for crew's GPU check (docs/devices.md, "Checking on a GPU"):
# the CUDA build's programs and GPU test binary, the shared libraries they need that such a
# machine has not (oneDNN, OpenBLAS, Gloo, ...; the CUDA libraries come from PyTorch's wheels
# there), a small data set, CPU reference traces recorded here, and check.sh. One tar.xz,
# about 16 MB, refused over 64 MiB (what may travel to the machine).
#
#   bench/gpu/pack.sh [BUILD_DIR [OUT]]     # defaults: build/release, build/gpu_bundle.tar.xz
#   then there: tar -xJf gpu_bundle.tar.xz && crew_gpu/check.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build/release}" && pwd)
out=${2:-$root/build/gpu_bundle.tar.xz}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
stage=$tmp/crew_gpu
mkdir -p "$stage/bin" "$stage/lib" "$stage/ref" "$stage/data" "$stage/scripts"

programs=(train_cnn train_resnet train_gpt crew)
for p in "${programs[@]}"; do
  [ -x "$build/bin/$p" ] || { echo "pack: $build/bin/$p is not built"; exit 1; }
  cp "$build/bin/$p" "$stage/bin/"
done
[ -x "$build/tests/crew_cuda_tests" ] || { echo "pack: $build/tests/crew_cuda_tests is not built (a CUDA build: CREW_CUDA=ON)"; exit 1; }
cp "$build/tests/crew_cuda_tests" "$stage/bin/"
if [ "$(nm "$stage/bin/train_cnn" | grep -c crew_cuda_backend_anchor)" = 0 ]; then
  echo "pack: $build is not a CUDA build (train_cnn has no CUDA backend)"; exit 1
fi
strip --strip-unneeded "$stage"/bin/* 2>/dev/null || true

# Libraries: everything the programs load except the C library's own, the C++ runtime (newer
# there) and CUDA's (the wheels' copies there; two cuDNNs on the path break cuDNN).
skip='^(linux-vdso|ld-linux|libc\.so|libm\.so|libdl\.so|libpthread\.so|librt\.so|libgcc_s\.so|libstdc\+\+\.so|libcudnn|libcublas|libcudart|libnccl|libcuda\.so)'
for b in "$stage"/bin/*; do
  ldd "$b" | awk '/=> \//{print $1, $3}'
done | sort -u | while read -r name path; do
  if ! [[ $name =~ $skip ]]; then cp -L "$path" "$stage/lib/$name"; fi
done

# Data and CPU reference traces (the GPU runs start from the same seed, hence the same weights).
/usr/bin/python3 "$root/bench/gpu/make_idx.py" "$stage/data" 2000 500
cp "$root/bench/gpu/make_idx.py" "$root/bench/gpu/check.sh" "$root/bench/gpu/compare_traces.py" \
   "$root/bench/gpu/torch_cnn_step.py" "$root/bench/torch_train_step.py" "$root/bench/torch_models.py" \
   "$stage/scripts/"
cat "$root"/docs/*.md > "$stage/data/text.txt"  # the GPT's text (the GPU machine has no fortunes)
mv "$stage/scripts/check.sh" "$stage/check.sh"
"$stage/bin/train_cnn" --dataset fashion-mnist --data-dir "$stage/data" --epochs 1 --max-steps 20 --batch-size 32 \
  --no-shuffle --num-workers 0 --threads 1 --seed 7 --test-samples 100 --metrics "$stage/ref/cnn_cpu_20.jsonl" \
  > "$tmp/ref.log" 2>&1 || { cat "$tmp/ref.log"; echo "pack: the CPU reference run failed"; exit 1; }
"$stage/bin/train_cnn" --dataset fashion-mnist --data-dir "$stage/data" --epochs 10 --batch-size 32 \
  --num-workers 0 --threads 2 --seed 7 --metrics "$stage/ref/cnn_cpu_10_epochs.jsonl" \
  > "$tmp/ref10.log" 2>&1 || { cat "$tmp/ref10.log"; echo "pack: the CPU 10-epoch run failed"; exit 1; }
"$stage/bin/train_resnet" --synthetic 256 --max-steps 5 --batch-size 32 --no-shuffle --num-workers 0 --seed 7 \
  --log-every 1 --threads 2 --metrics "$stage/ref/resnet_cpu_5.jsonl" > "$tmp/resnet.log" 2>&1 ||
  { cat "$tmp/resnet.log"; echo "pack: the CPU ResNet-18 reference failed"; exit 1; }
"$stage/bin/train_gpt" --text "$stage/data/text.txt" --n-layer 2 --max-steps 5 --batch-size 16 --no-shuffle \
  --num-workers 0 --seed 7 --log-every 1 --threads 2 --metrics "$stage/ref/gpt_cpu_5.jsonl" > "$tmp/gpt.log" 2>&1 ||
  { cat "$tmp/gpt.log"; echo "pack: the CPU GPT reference failed"; exit 1; }
git -C "$root" rev-parse HEAD > "$stage/ref/commit" 2>/dev/null || true
{ echo "built on: $(uname -srm), $(ldd --version | head -1)"; echo "packed: $(date -u +%FT%TZ)"; } > "$stage/ref/host"

mkdir -p "$(dirname "$out")"
raw=$(du -sm "$stage" | cut -f1)
XZ_OPT=-9e tar -C "$tmp" -cJf "$out" crew_gpu
size=$(stat -c %s "$out")
echo "pack: $out: $((size / 1024 / 1024)) MiB compressed ($raw MiB raw), $(ls "$stage/lib" | wc -l) libraries"
if [ "$size" -ge $((64 * 1024 * 1024)) ]; then
  echo "pack: the bundle is over 64 MiB, more than may travel to a GPU machine"; exit 1
fi
