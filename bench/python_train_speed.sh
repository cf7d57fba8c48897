#!/usr/bin/env bash
# images/s of the seed's training program in Python (examples/python/train_cnn.py, crew's
# Python package) against bin/train_cnn (the same program in C++), same configuration:
# Fashion-MNIST, batch 32 per rank, Adam, DistributedBatchSampler, WORKERS loader threads,
# STEPS steps, at 1 rank and at 2 ranks (python3 -m crew.distributed.launch vs crew launch).
# ROUNDS rounds, the order alternating each round so that drift of the machine's speed hits
# both alike; prints every run, the medians and the ratio Python / C++ of the medians and
# the median of the per-round ratios.
#   bench/python_train_speed.sh [BUILD_DIR] [STEPS] [ROUNDS] [WORKERS]   defaults: build/release 400 5 2
set -euo pipefail
build=$(cd "${1:-build/release}" && pwd)
steps=${2:-400}
rounds=${3:-5}
workers=${4:-2}
src=$(cd "$(dirname "$0")/.." && pwd)
py=${CREW_PYTHON:-/usr/bin/python3}
export PYTHONPATH=$build/python CREW_BIN_DIR=$build/bin
unset CREW_DATA_DIR CREW_CIFAR10
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
launch_devices() { seq -s, 0 $(($1 - 1)); }

run_cpp() {  # nranks out
  local cmd=("$build/bin/train_cnn" --epochs 1 --max-steps "$steps" --test-samples 100 --num-workers "$workers"
             --log-every 100000)
  if [ "$1" -gt 1 ]; then cmd=("$build/bin/crew" launch --devices="$(launch_devices "$1")" --log_dir "$log/l" "${cmd[@]}"); fi
  (cd "$log" && "${cmd[@]}") >"$2" 2>&1
  sed -n 's/^epoch 0: test accuracy .*, \([0-9]*\) images\/s$/\1/p' "$2" | tail -1
}
run_py() {
  local cmd=("$py")
  if [ "$1" -gt 1 ]; then cmd+=(-m crew.distributed.launch --devices="$(launch_devices "$1")" --log_dir "$log/l"); fi
  cmd+=("$src/examples/python/train_cnn.py" --epochs 1 --max-steps "$steps" --num-workers "$workers")
  (cd "$log" && HOME=$log "${cmd[@]}") >"$2" 2>&1
  sed -n 's/.*epoch 0: \([0-9]*\) images\/s$/\1/p' "$2" | tail -1
}
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

for n in 1 2; do
  : >"$log/cpp$n"; : >"$log/py$n"; : >"$log/ratio$n"
  for r in $(seq 1 "$rounds"); do
    if [ $((r % 2)) -eq 1 ]; then c=$(run_cpp "$n" "$log/out"); p=$(run_py "$n" "$log/out")
    else p=$(run_py "$n" "$log/out"); c=$(run_cpp "$n" "$log/out"); fi
    [ -n "$c" ] && [ -n "$p" ] || { echo "run failed:"; cat "$log/out"; exit 1; }
    echo "ranks=$n round=$r cpp=$c py=$p"
    echo "$c" >>"$log/cpp$n"; echo "$p" >>"$log/py$n"
    awk -v p="$p" -v c="$c" 'BEGIN {printf "%.4f\n", p / c}' >>"$log/ratio$n"
  done
  mc=$(median <"$log/cpp$n"); mp=$(median <"$log/py$n"); mr=$(median <"$log/ratio$n")
  awk -v n="$n" -v c="$mc" -v p="$mp" -v r="$mr" 'BEGIN {
    printf "ranks=%d median images/s: cpp %.0f, python %.0f; python/cpp %.3f (median of per-round ratios %.3f)\n",
           n, c, p, p / c, r }'
done
