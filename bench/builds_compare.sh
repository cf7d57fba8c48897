#!/usr/bin/env bash
# Two builds of crew side by side (before/after a change): bin/train_resnet and bin/train_gpt of
# OLD_BUILD and NEW_BUILD, each config RANKSxTHREADS, ROUNDS rounds, the order alternating (old
# first in odd rounds). Rates are the programs' "done" rates (after 5 warm-up steps); prints
# every run and a table of medians with the median of the per-round new/old ratios.
#   bench/builds_compare.sh OLD_BUILD NEW_BUILD ROUNDS [STEPS]     default STEPS 30
#   MODELS="resnet18 gpt" CONFIGS="1x1 2x1" TEXT=file.txt          (env, defaults shown)
set -euo pipefail
usage="usage: $0 OLD_BUILD NEW_BUILD ROUNDS [STEPS]"
old=$(cd "${1:?$usage}" && pwd)
new=$(cd "${2:?$usage}" && pwd)
rounds=${3:?$usage}
steps=${4:-30}
models=${MODELS:-resnet18 gpt}
configs=${CONFIGS:-1x1 2x1}
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT

text=$("$(dirname "$0")/fortunes_text.sh" "$log/fortunes.txt")

rate() {  # metrics model: the "done" line's rate, or nothing
  python3 - "$1" "$2" <<'PY'
import json, sys
unit = "tokens_per_s" if sys.argv[2] == "gpt" else "images_per_s"
try:
    done = [json.loads(l) for l in open(sys.argv[1]) if '"done"' in l]
except OSError:
    sys.exit()
if done:
    print(f'{done[-1][unit]:.1f}')
PY
}

run() {  # build model ranks threads
  local prog=train_resnet data=(--synthetic 2048)
  if [ "$2" = gpt ]; then prog=train_gpt; data=(--text "$text"); fi
  local cmd=("$1/bin/$prog" "${data[@]}" --epochs 1 --max-steps "$steps" --threads "$4" --num-workers 1
             --metrics "$log/m.jsonl")
  if [ "$3" -gt 1 ]; then
    cmd=("$1/bin/crew" launch --devices="$(seq -s, 0 $(($3 - 1)))" --log_dir "$log/launch" "${cmd[@]}")
  fi
  rm -f "$log/m.jsonl"
  (cd "$log" && "${cmd[@]}") >"$log/out" 2>&1 || true
  local r
  r=$(rate "$log/m.jsonl" "$2")
  [ -n "$r" ] || { echo "run of $1/bin/$prog failed:" >&2; cat "$log/out" >&2; exit 1; }
  echo "$r"
}
median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

echo "| model | config | old | new | new/old (median of rounds) |"
echo "| --- | --- | --- | --- | --- |"
for model in $models; do
  for config in $configs; do
    ranks=${config%x*}; threads=${config#*x}; key=$log/$model.$config
    for r in $(seq 1 "$rounds"); do
      if [ $((r % 2)) -eq 1 ]; then o=$(run "$old" "$model" "$ranks" "$threads"); n=$(run "$new" "$model" "$ranks" "$threads")
      else n=$(run "$new" "$model" "$ranks" "$threads"); o=$(run "$old" "$model" "$ranks" "$threads"); fi
      echo "$model $config round $r: old $o new $n" >&2
      echo "$o" >>"$key.old"; echo "$n" >>"$key.new"
      awk -v o="$o" -v n="$n" 'BEGIN {printf "%.4f\n", n / o}' >>"$key.ratio"
    done
    echo "| $model | $config | $(median <"$key.old") | $(median <"$key.new") | $(median <"$key.ratio") |"
  done
done
