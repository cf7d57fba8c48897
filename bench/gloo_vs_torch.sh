#!/usr/bin/env bash
# crew's Gloo all_reduce against PyTorch's (torch.distributed "gloo", Debian's python3-torch),
# 2 local ranks, float32, ROUNDS rounds alternating torch and crew; per size the median over
# rounds of each round's median (bin/collectives_bench and bench/torch_allreduce.py both report
# the slower rank's time per op, median of 5 runs). crew's ranks run under `crew launch` with
# its defaults (as a user runs them); SELF=1 spawns them from collectives_bench itself instead.
#   bench/gloo_vs_torch.sh [BUILD_DIR] [ROUNDS] [SIZES]      defaults: build/release 3 4:16M
set -euo pipefail
build=${1:-build/release}
rounds=${2:-3}
sizes=${3:-4:16M}
src=$(cd "$(dirname "$0")/.." && pwd)
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
for r in $(seq 1 "$rounds"); do
  /usr/bin/python3 "$src/bench/torch_allreduce.py" --sizes "$sizes" --factor 4 --runs 5 |
    awk -F'|' '$2 ~ /[0-9]/ {gsub(/ /, "", $2); gsub(/ /, "", $3); print $2, $3}' >"$log/torch.$r"
  bench=("$build/bin/collectives_bench" --backend gloo --op all_reduce --sizes "$sizes" --factor 4 --runs 5)
  if [ "${SELF:-0}" = 1 ]; then
    "${bench[@]}" --nprocs 2
  else
    "$build/bin/crew" launch --devices=0,1 --log_dir "$log/launch" "${bench[@]}"
  fi | awk '$1 ~ /^[0-9]+$/ {print $1, $5}' >"$log/crew.$r"
done
med() { sort -n | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
echo "| size (B) | crew gloo (us) | torch gloo (us) | torch / crew | crew runs | torch runs |"
echo "| ---: | ---: | ---: | ---: | --- | --- |"
for size in $(awk '{print $1}' "$log/crew.1"); do
  c=$(cat "$log"/crew.* | awk -v s="$size" '$1 == s {print $2}' | med)
  t=$(cat "$log"/torch.* | awk -v s="$size" '$1 == s {print $2}' | med)
  cr=$(cat "$log"/crew.* | awk -v s="$size" '$1 == s {printf "%.0f ", $2}')
  tr=$(cat "$log"/torch.* | awk -v s="$size" '$1 == s {printf "%.0f ", $2}')
  awk -v s="$size" -v c="$c" -v t="$t" -v cr="$cr" -v tr="$tr" \
    'BEGIN {printf "| %s | %.0f | %.0f | %.2fx | %s | %s |\n", s, c, t, t / c, cr, tr}'
done
