#!/usr/bin/env bash
# images/s of the full training loop (loader included) of examples/train_cnn for
# 1 rank x 1 thread, 1 rank x 2 threads and 2 ranks x 1 thread (under crew launch), with the
# step-time breakdown of each. Prints a markdown table.
#   bench/train_scaling.sh [BUILD_DIR] [STEPS]
set -euo pipefail
build=${1:-build/release}
steps=${2:-600}
bin=$build/bin
log=$(mktemp -d)
common=(--epochs 1 --max-steps "$steps" --test-samples 1000 --num-workers 1 --log-every 100000 --profile)
rate() { sed -n 's/.*done: .* s, \([0-9]*\) images\/s.*/\1/p' "$1"; }
prof() { sed -n "s/^profile (rank [^:]*: //p" "$1"; }
CREW_NUM_THREADS=1 "$bin/train_cnn" "${common[@]}" >"$log/1x1" 2>&1
CREW_NUM_THREADS=2 "$bin/train_cnn" "${common[@]}" >"$log/1x2" 2>&1
"$bin/crew" launch --devices=0,1 --log_dir "$log/launch" "$bin/train_cnn" "${common[@]}" >"$log/2x1" 2>&1
echo "| configuration | images/s | step breakdown (rank 0) |"
echo "| --- | ---: | --- |"
echo "| 1 rank x 1 thread | $(rate "$log/1x1") | $(prof "$log/1x1") |"
echo "| 1 rank x 2 threads | $(rate "$log/1x2") | $(prof "$log/1x2") |"
echo "| 2 ranks x 1 thread | $(rate "$log/2x1") | $(prof "$log/2x1") |"
sed -n 's/^profile per rank /\n2 ranks, per rank /p' "$log/2x1"
r1=$(rate "$log/1x1"); r2=$(rate "$log/2x1")
awk -v a="$r1" -v b="$r2" 'BEGIN { printf "\nscaling 2 ranks / 1 rank: %.2fx (efficiency %.0f%%)\n", b / a, 50 * b / a }'
rm -rf "$log"
