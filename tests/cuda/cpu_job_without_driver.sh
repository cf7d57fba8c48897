#!/bin/bash
# A crew program with the CUDA module built in starts and trains on the CPU where no GPU driver
# exists: it links no libcuda, loads no cuBLASLt at start, and a short train_cnn run succeeds.
# Usage: cpu_job_without_driver.sh path/to/train_cnn
set -euo pipefail
bin=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if ldd "$bin" | grep -E 'libcuda\.so|libcublas' ; then
  echo "FAIL: $bin links the driver or cuBLAS (it must start without them)"; exit 1
fi
if [ "$(nm "$bin" 2>/dev/null | grep -c crew_cuda_backend_anchor)" = 0 ]; then
  echo "FAIL: $bin has no CUDA backend built in"; exit 1
fi
# 40 + 20 MNIST-format images of coloured squares (what tests/launch/idx_test_data.h writes).
/usr/bin/python3 - "$work" <<'PY'
import struct, sys
d = sys.argv[1]
for prefix, count, seed in (("train", 40, 11), ("t10k", 20, 23)):
    state = seed
    img = bytearray(struct.pack(">IIII", 0x803, count, 28, 28))
    lab = bytearray(struct.pack(">II", 0x801, count))
    for i in range(count):
        label = (i * 7 + seed) % 10
        lab.append(label)
        row, col = 2 + (label // 5) * 12, 2 + (label % 5) * 5
        for y in range(28):
            for x in range(28):
                state = (state * 1664525 + 1013904223) & 0xFFFFFFFF
                v = state >> 26
                if row <= y < row + 6 and col <= x < col + 6:
                    v += 180
                img.append(v)
    open(f"{d}/{prefix}-images-idx3-ubyte", "wb").write(img)
    open(f"{d}/{prefix}-labels-idx1-ubyte", "wb").write(lab)
PY
start=$(date +%s.%N)
"$bin" --dataset fashion-mnist --data-dir "$work" --epochs 1 --batch-size 8 --num-workers 1 --threads 1 \
  --log-every 1 > "$work/out.log" 2>&1 || { cat "$work/out.log"; echo "FAIL: train_cnn exited $?"; exit 1; }
end=$(date +%s.%N)
cat "$work/out.log" | tail -5
grep -qi "loss" "$work/out.log" || { echo "FAIL: no loss line"; exit 1; }
echo "OK: train_cnn with the CUDA module ran a CPU job in $(echo "$end - $start" | bc) s without a GPU driver"
