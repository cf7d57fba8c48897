#!/usr/bin/env bash
# images/s of the full training loop (loader included) of examples/train_cnn for
#   1x1   1 rank x 1 thread (plain bin/train_cnn, as a user runs it)
#   1x2   1 rank x 2 threads
#   pair  two independent 1-thread processes at once, one per core, no communication: what
#         this machine gives two trainings side by side (the ceiling for 2 ranks)
#   sync  2 x the slower of the pair: what a job that keeps the two in step (as synchronous
#         data parallelism must) could reach on those cores; below pair when one core runs
#         slower than the other (on a shared VM host it often does)
#   2x1   2 ranks x 1 thread under crew launch (DataParallel, default backend)
# repeated ROUNDS times, the order rotating each round so that drift of the machine's speed
# hits every configuration alike. Prints every run, the medians, the speed-ups of the medians
# and the median of the per-round speed-ups, and the 2-rank step breakdown (--profile).
#   bench/train_scaling.sh [BUILD_DIR] [STEPS] [ROUNDS]      defaults: build/release 600 1
set -euo pipefail
build=${1:-build/release}
steps=${2:-600}
rounds=${3:-1}
bin=$build/bin
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
common=(--epochs 1 --max-steps "$steps" --test-samples 1000 --num-workers 1 --log-every 100000 --profile)
second_cpu=$(( $(nproc) > 1 ? 1 : 0 ))  # a 1-CPU machine runs the pair on one core
rate() { sed -n 's/.*done: .* s, \([0-9]*\) images\/s.*/\1/p' "$1"; }

run_1x1() { CREW_NUM_THREADS=1 "$bin/train_cnn" "${common[@]}" >"$1" 2>&1; rate "$1"; }
run_1x2() { CREW_NUM_THREADS=2 "$bin/train_cnn" "${common[@]}" >"$1" 2>&1; rate "$1"; }
run_pair() {
  CREW_NUM_THREADS=1 taskset -c 0 "$bin/train_cnn" "${common[@]}" >"$1.a" 2>&1 &
  local a=$!
  CREW_NUM_THREADS=1 taskset -c "$second_cpu" "$bin/train_cnn" "${common[@]}" >"$1.b" 2>&1
  wait "$a"
  local ra rb
  ra=$(rate "$1.a") rb=$(rate "$1.b")
  echo $(( ra < rb ? 2 * ra : 2 * rb )) >"$1.sync"
  echo $(( ra + rb ))
}
run_2x1() {
  "$bin/crew" launch --devices=0,1 --log_dir "$1.logs" "$bin/train_cnn" "${common[@]}" >"$1" 2>&1
  rate "$1"
}

configs=(1x1 1x2 pair 2x1)
declare -A runs
for ((r = 0; r < rounds; r++)); do
  for ((i = 0; i < ${#configs[@]}; i++)); do
    c=${configs[$(( (i + r) % ${#configs[@]} ))]}
    v=$("run_$c" "$log/$c.$r")
    runs[$c]="${runs[$c]:-} $v"
    echo "round $r $c $v" >&2
    if [ "$c" = pair ]; then runs[sync]="${runs[sync]:-} $(cat "$log/$c.$r.sync")"; fi
  done
done

median() { tr ' ' '\n' | sed '/^$/d' | sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
echo "| configuration | images/s median | runs |"
echo "| --- | ---: | --- |"
for c in 1x1 1x2 pair sync 2x1; do
  echo "| $c | $(echo ${runs[$c]} | median) | ${runs[$c]# } |"
done
m1=$(echo ${runs[1x1]} | median); mp=$(echo ${runs[pair]} | median); m2=$(echo ${runs[2x1]} | median)
ms=$(echo ${runs[sync]} | median)
per_round=$(paste <(echo ${runs[1x1]} | tr ' ' '\n') <(echo ${runs[2x1]} | tr ' ' '\n') |
  awk '{ printf "%.3f ", $2 / $1 }')
echo
awk -v a="$m1" -v b="$m2" -v p="$mp" -v s="$ms" 'BEGIN {
  printf "scaling 2 ranks / 1 rank (medians): %.2fx (efficiency %.0f%%)\n", b / a, 50 * b / a
  printf "independent pair / 1 rank (medians): %.2fx; 2 ranks reach %.0f%% of the pair\n", p / a, 100 * b / p
  printf "in-step ceiling (2 x slower of the pair) / 1 rank: %.2fx; 2 ranks reach %.0f%% of it\n", s / a, 100 * b / s }'
echo "per-round 2 ranks / 1 rank: $per_round(median $(echo $per_round | median))"
echo "2 ranks, last round: $(sed -n 's/^profile per rank //p' "$log/2x1.$((rounds - 1))")"
