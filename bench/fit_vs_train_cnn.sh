#!/usr/bin/env bash
# paddle.Model.fit (examples/python/fit_cnn.py) against bin/train_cnn on the same work: the
# seed's MyNet, Fashion-MNIST, batch 32 per rank, Adam lr 0.001, RANKS ranks under the
# launcher (python3 -m crew.distributed.launch / crew launch), EPOCHS epochs, 2 loader workers.
# ROUNDS rounds, the order alternating; prints every run's images/s (over all epochs, as each
# program counts them) and final test accuracy, then the medians and the median of the
# per-round fit / train_cnn ratios (issue 30: >= 0.90, accuracy >= 0.88 after 2 epochs).
#   bench/fit_vs_train_cnn.sh [BUILD_DIR] [ROUNDS] [EPOCHS] [RANKS]   defaults: build/release 3 2 2
set -euo pipefail
build=$(cd "${1:-build/release}" && pwd)
rounds=${2:-3}
epochs=${3:-2}
ranks=${4:-2}
src=$(cd "$(dirname "$0")/.." && pwd)
py=${CREW_PYTHON:-/usr/bin/python3}
export PYTHONPATH=$build/python
unset CREW_DATA_DIR CREW_CIFAR10
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
devices=$(seq -s, 0 $((ranks - 1)))

run_cpp() {  # -> "images/s accuracy"
  (cd "$log" && "$build/bin/crew" launch --devices="$devices" --log_dir "$log/l" "$build/bin/train_cnn" \
     --epochs "$epochs" --num-workers 2) >"$log/out" 2>&1
  sed -n 's/^done: .*, \([0-9]*\) images\/s, final test accuracy \([0-9.]*\)$/\1 \2/p' "$log/out"
}
run_fit() {  # -> "images/s accuracy": the epochs' images over their summed wall time
  (cd "$src/examples/python" && "$py" -m crew.distributed.launch --devices="$devices" --log_dir "$log/p" \
     fit_cnn.py --epochs "$epochs" --num-workers 2) >"$log/out" 2>&1
  awk '/^epoch [0-9]+: [0-9]+ images\/s$/ {t += 1 / $3; n++} /^test accuracy: / {a = $3}
       END {if (n) printf "%.0f %s\n", n / t, a}' "$log/out"
}
checked() { [ -n "$2" ] || { echo "$1 failed:" >&2; cat "$log/out" >&2; exit 1; }; echo "$2"; }
median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

for r in $(seq 1 "$rounds"); do
  if [ $((r % 2)) -eq 1 ]; then c=$(checked train_cnn "$(run_cpp)"); f=$(checked fit "$(run_fit)")
  else f=$(checked fit "$(run_fit)"); c=$(checked train_cnn "$(run_cpp)"); fi
  echo "round $r: train_cnn $c, Model.fit $f (images/s, test accuracy)"
  echo "$c $f" | awk '{printf "%s %s %s %s %.3f\n", $1, $2, $3, $4, $3 / $1}' >>"$log/runs"
done
col() { awk -v k="$1" '{print $k}' "$log/runs"; }
echo "| ranks x epochs | train_cnn images/s | Model.fit images/s | fit / train_cnn (rounds) | train_cnn accuracy | fit accuracy |"
echo "| --- | ---: | ---: | ---: | ---: | ---: |"
echo "| $ranks x $epochs | $(col 1 | median) | $(col 3 | median) | $(col 5 | median) ($(col 5 | paste -sd' ')) |" \
     "$(col 2 | median) | $(col 4 | median) |"
