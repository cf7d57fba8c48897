#!/usr/bin/env bash
# crew's ResNet-18 and GPT training (bin/train_resnet, bin/train_gpt) against the same models in
# PyTorch (bench/torch_models.py): training rate after a 5-step warm-up and peak RSS, per model
# and config RANKSxTHREADS, STEPS steps, batch 32 (ResNet, 2048 random images) or 16 x 128
# tokens (GPT, the fortunes text or $TEXT) per rank. ROUNDS rounds, A first in odd rounds and
# B first in even ones; prints every run and a markdown table of medians, the ratio being
# the median of the per-round A/B ratios. crew stops at the end of its one epoch (ResNet:
# 64 steps on 1 rank, 32 on 2) where torch would wrap around: keep STEPS within it.
#   bench/models_vs_torch.sh BUILD_DIR ROUNDS [STEPS]              default STEPS 30
#   MODELS="resnet18 gpt" CONFIGS="1x1 2x1" TEXT=file.txt          (env, defaults shown)
# Two sides are compared, A (default crew) against B (default torch), each with extra options:
#   A=crew A_ARGS="--amp bf16 --amp-level O2" B=torch B_ARGS="--autocast bfloat16"  (mixed precision)
#   A_ARGS="--amp bf16" B=crew                                  (crew's bf16 against its float32)
#   B=crew B_ENV="CREW_WEIGHT_LAYOUT=0"                         (environment per side: one switch)
set -euo pipefail
build=$(cd "${1:?usage: $0 BUILD_DIR ROUNDS [STEPS]}" && pwd)
rounds=${2:?usage: $0 BUILD_DIR ROUNDS [STEPS]}
steps=${3:-30}
models=${MODELS:-resnet18 gpt}
configs=${CONFIGS:-1x1 2x1}
py=${TORCH_PYTHON:-/usr/bin/python3}
side_a=${A:-crew}; side_b=${B:-torch}
read -r -a args_a <<<"${A_ARGS:-}"
read -r -a args_b <<<"${B_ARGS:-}"
src=$(cd "$(dirname "$0")/.." && pwd)
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT

text=$("$(dirname "$0")/fortunes_text.sh" "$log/fortunes.txt")

set_data() {  # model: sets the array data to the model's data options
  if [ "$1" = gpt ]; then data=(--text "$text"); else data=(--synthetic 2048); fi
}
unit() { if [ "$1" = gpt ]; then echo tokens_per_s; else echo images_per_s; fi; }
# The "done" line's rate and peak RSS: "RATE RSS", or nothing.
done_fields() {  # metrics model
  "$py" - "$1" "$(unit "$2")" <<'EOF'
import json, sys
try:
    lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
except OSError:
    sys.exit()
done = [l for l in lines if l.get("type") == "done"]
if done:
    print(f'{done[-1][sys.argv[2]]:.1f} {done[-1]["peak_rss_mb"]:.0f}')
EOF
}

run_crew() {  # model ranks threads [extra options...]
  local prog=train_resnet data
  [ "$1" = gpt ] && prog=train_gpt
  set_data "$1"
  local cmd=("$build/bin/$prog" "${data[@]}" --epochs 1 --max-steps "$steps" --threads "$3"
             --num-workers 1 --metrics "$log/m.jsonl" "${@:4}")
  if [ "$2" -gt 1 ]; then
    cmd=("$build/bin/crew" launch --devices="$(seq -s, 0 $(($2 - 1)))" --log_dir "$log/launch" "${cmd[@]}")
  fi
  rm -f "$log/m.jsonl"
  (cd "$log" && "${cmd[@]}") >"$log/out" 2>&1 || true
  done_fields "$log/m.jsonl" "$1"
}
run_torch() {  # model ranks threads [extra options...]
  local data
  set_data "$1"
  rm -f "$log/m.jsonl"
  (cd "$log" && "$py" "$src/bench/torch_models.py" --model "$1" "${data[@]}" --steps "$steps" \
     --warmup 5 --threads "$3" --world "$2" --metrics "$log/m.jsonl" "${@:4}") >"$log/out" 2>&1 || true
  done_fields "$log/m.jsonl" "$1"
}
with_env() {  # "VAR=value ..." command...: the command with those variables (in this subshell)
  if [ -n "$1" ]; then export ${1?}; fi
  "${@:2}"
}
median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
checked() {  # side fields: fails with the run's output when the run wrote no "done" line
  [ -n "$2" ] || { echo "$1 run failed:" >&2; cat "$log/out" >&2; exit 1; }
  echo "$2"
}

table=$log/table
for model in $models; do
  for config in $configs; do
    ranks=${config%x*}; threads=${config#*x}; key=$log/$model.$config
    for r in $(seq 1 "$rounds"); do
      run_a() { with_env "${A_ENV:-}" run_"$side_a" "$model" "$ranks" "$threads" "${args_a[@]}"; }
      run_b() { with_env "${B_ENV:-}" run_"$side_b" "$model" "$ranks" "$threads" "${args_b[@]}"; }
      if [ $((r % 2)) -eq 1 ]; then c=$(checked "$side_a" "$(run_a)"); t=$(checked "$side_b" "$(run_b)")
      else t=$(checked "$side_b" "$(run_b)"); c=$(checked "$side_a" "$(run_a)"); fi
      echo "$model $config round $r: A $c, B $t ($(unit "$model"), peak RSS MB)"
      echo "$c $t" | awk '{printf "%s %s %s %s %.3f\n", $1, $2, $3, $4, $1 / $3}' >>"$key"
    done
    col() { awk -v k="$1" '{print $k}' "$key"; }
    awk -v m="$model ($(unit "$model" | sed "s/_per_s/\/s/"))" -v cfg="$ranks rank(s) x $threads thread(s)" \
      -v c="$(col 1 | median)" -v t="$(col 3 | median)" -v r="$(col 5 | median)" \
      -v rs="$(col 5 | paste -sd' ')" -v cm="$(col 2 | median)" -v tm="$(col 4 | median)" \
      'BEGIN {printf "| %s | %s | %.0f | %.0f | %.2f (%s) | %.0f | %.0f |\n", m, cfg, c, t, r, rs, cm, tm}' >>"$table"
  done
done
echo
echo "A: $side_a ${A_ENV:-} ${A_ARGS:-}; B: $side_b ${B_ENV:-} ${B_ARGS:-}"
echo "| model | config | A rate | B rate | A/B (rounds) | A peak RSS (MB) | B peak RSS (MB) |"
echo "| --- | --- | ---: | ---: | ---: | ---: | ---: |"
cat "$table"
