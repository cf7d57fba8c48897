#!/usr/bin/env bash
# 2 ranks against the in-step ceiling for train_resnet and train_gpt (issue 17), as
# bench/train_scaling.sh measures it for train_cnn:
#   pair  two independent 1-thread processes at once, one per core (taskset), no communication
#   ceil  2 x the slower of the pair: what a job keeping the two in step could reach there
#   2x1   2 ranks x 1 thread under crew launch (DataParallel, default backend and affinity)
# ROUNDS rounds, the order alternating; prints every run, the medians and the median of the
# per-round 2x1 / ceil ratios. Rates are the programs' "done" rates (after 5 warm-up steps).
#   bench/model_scaling.sh BUILD_DIR ROUNDS [STEPS]          default STEPS 30
#   MODELS="resnet18 gpt" (env)
set -euo pipefail
build=$(cd "${1:?usage: $0 BUILD_DIR ROUNDS [STEPS]}" && pwd)
rounds=${2:?usage: $0 BUILD_DIR ROUNDS [STEPS]}
steps=${3:-30}
models=${MODELS:-resnet18 gpt}
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT

cmd_of() {  # model: sets the array cmd
  local common=(--epochs 1 --max-steps "$steps" --threads 1 --num-workers 1 --log-every 100000)
  if [ "$1" = gpt ]; then cmd=("$build/bin/train_gpt" "${common[@]}"); else
    cmd=("$build/bin/train_resnet" --synthetic 4096 "${common[@]}"); fi
}
rate() { sed -n 's/^done: .* steps, \([0-9]*\) [a-z]*\/s.*/\1/p' "$1"; }
run_pair() {  # out-prefix: prints "slower faster"
  taskset -c 0 "${cmd[@]}" >"$1.a" 2>/dev/null &
  local a=$!
  taskset -c 1 "${cmd[@]}" >"$1.b" 2>/dev/null
  wait "$a"
  printf '%s\n%s\n' "$(rate "$1.a")" "$(rate "$1.b")" | sort -n | tr '\n' ' '
}
run_2x1() { "$build/bin/crew" launch --devices=0,1 --log_dir "$log/launch" "${cmd[@]}" >"$1" 2>/dev/null; rate "$1"; }
median() { sort -n | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

for model in $models; do
  cmd_of "$model"
  : >"$log/$model.ceil"; : >"$log/$model.two"; : >"$log/$model.ratio"
  for r in $(seq 1 "$rounds"); do
    if [ $((r % 2)) = 1 ]; then pair=$(run_pair "$log/p"); two=$(run_2x1 "$log/t"); else
      two=$(run_2x1 "$log/t"); pair=$(run_pair "$log/p"); fi
    read -r slow fast <<<"$pair"
    ceil=$((2 * slow))
    echo "$model round $r: pair $slow $fast, ceiling $ceil, 2x1 $two ($(awk -v a="$two" -v b="$ceil" 'BEGIN {printf "%.3f", a / b}'))"
    echo "$ceil" >>"$log/$model.ceil"; echo "$two" >>"$log/$model.two"
    awk -v a="$two" -v b="$ceil" 'BEGIN {print a / b}' >>"$log/$model.ratio"
  done
  echo "$model medians: ceiling $(median <"$log/$model.ceil"), 2x1 $(median <"$log/$model.two"), 2x1/ceiling per round (median) $(median <"$log/$model.ratio")"
done
