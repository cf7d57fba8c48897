#!/usr/bin/env bash
# all_reduce across two hosts (network namespaces joined by a veth pair, shaped with tc netem,
# tests/cluster/two_hosts.sh), 2 ranks per host under one `crew launch --nnodes 2` each:
# the hier backend (shm inside a host, Gloo between hosts) against flat Gloo over all 4
# ranks. ROUNDS rounds in alternating order; prints every run's table row per size and the
# medians. Needs root.
#   bench/two_host_allreduce.sh [BUILD_DIR] [ROUNDS] [QDISC] [MAX_BYTES]
#   defaults: build/release 5 "netem delay 1ms rate 1gbit" 16777216; where the kernel has no
#   netem (CONFIG_NET_SCH_NETEM unset) the link is only rate-limited: "tbf rate 1gbit ...".
set -euo pipefail
bin=$(cd "${1:-build/release}/bin" && pwd)
rounds=${2:-5}
netem=${3:-netem delay 1ms rate 1gbit}
max_bytes=${4:-16777216}
src=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=tests/cluster/two_hosts.sh
source "$src/tests/cluster/two_hosts.sh"
log=$(mktemp -d)
trap 'two_hosts_down; rm -rf "$log"' EXIT
two_hosts_up
if ! two_hosts_shape "$netem" 2>/dev/null; then
  echo "# '$netem' is not available in this kernel; shaping with tbf (rate only, no added delay)"
  netem="tbf rate 1gbit burst 256kb latency 50ms"
  two_hosts_shape "$netem"
fi
export CREW_JOB_TOKEN=bench-token
master=${TWO_HOSTS_ADDR[0]}:29500
run() {  # backend out
  local args=("$bin/allreduce_bench" --backend "$1" --max-bytes "$max_bytes" --latency-iters 20)
  on_host 0 "$bin/crew" launch --nnodes 2 --rank 0 --master "$master" --devices=0,1 --log_dir "$log/l0" "${args[@]}" >"$2" 2>&1 &
  local p0=$!
  on_host 1 "$bin/crew" launch --nnodes 2 --rank 1 --master "$master" --devices=0,1 --log_dir "$log/l1" "${args[@]}" >/dev/null 2>&1
  wait $p0
}
echo "# link: $netem; 2 hosts x 2 ranks; all_reduce SUM float32; time (us), median over iterations"
for r in $(seq 1 "$rounds"); do
  order=(hier gloo)
  [ $((r % 2)) -eq 0 ] && order=(gloo hier)
  for b in "${order[@]}"; do
    run "$b" "$log/$b.$r"
    grep -E '^\| [0-9]+ (B|KiB|MiB) \|' "$log/$b.$r" | awk -F'|' -v b="$b" -v r="$r" '{gsub(/ /, "", $2); gsub(/ /, "", $3); print b, r, $2, $3}' >>"$log/rows"
  done
done
echo "| size | hier (us, median) | gloo (us, median) | gloo / hier |"
echo "| ---: | ---: | ---: | ---: |"
for size in $(awk '{print $3}' "$log/rows" | awk '!seen[$0]++'); do
  h=$(awk -v s="$size" '$1 == "hier" && $3 == s {print $4}' "$log/rows" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  g=$(awk -v s="$size" '$1 == "gloo" && $3 == s {print $4}' "$log/rows" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  awk -v s="$size" -v h="$h" -v g="$g" 'BEGIN {printf "| %s | %.0f | %.0f | %.2fx |\n", s, h, g, g / h}'
done
