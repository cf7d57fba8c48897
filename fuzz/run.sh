#!/usr/bin/env bash
# The fuzz step of .ci/run (docs/fuzzing.md): builds the `fuzz` preset (clang, libFuzzer,
# ASan + UBSan), replays every target's corpus once (seeds and the inputs of past crashes),
# then fuzzes each target for CREW_FUZZ_SECONDS (default 20) with bounded memory and time per
# input. Non-zero on any crash, leak, timeout or out-of-memory; the input that caused it is
# left in build/fuzz/artifacts/. New corpus entries go to build/fuzz/corpus-new/<target>/,
# never into fuzz/corpus/ (add an input there by hand, named after what it catches).
#   fuzz/run.sh                  # all targets
#   fuzz/run.sh object tar       # some
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${CREW_FUZZ_SECONDS:-20}"
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then targets=(store_protocol object safetensors idx tar cifar10); fi

cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j "$(nproc)"

bin=build/fuzz/bin/fuzz
art=build/fuzz/artifacts
mkdir -p "$art"
common=(-rss_limit_mb=2048 -timeout=10 -print_final_stats=1)
# run_fuzzer TARGET LOG ARGS...: runs one fuzzer, prints its summary; fails the step on a finding.
run_fuzzer() {
  local t="$1" log="$2"
  shift 2
  local rc=0
  "$bin/fuzz_$t" "${common[@]}" -artifact_prefix="$art/$t-" "$@" >"$log" 2>&1 || rc=$?
  grep -E "^#[0-9]+[[:space:]]+(DONE|INITED)|stat::number_of_executed_units|stat::peak_rss_mb|ERROR|SUMMARY|invariant" "$log" | tail -n 6 || true
  if [ "$rc" -ne 0 ]; then
    tail -n 40 "$log" >&2
    echo "fuzz: $t FAILED (exit $rc); the input is in $art/ (reproduce: $bin/fuzz_$t <input>); log $log" >&2
    exit 1
  fi
}

for t in "${targets[@]}"; do
  case "$t" in
    tar | cifar10) max_len=16384 ;;
    *) max_len=4096 ;;
  esac
  echo "fuzz: $t: replaying fuzz/corpus/$t"
  run_fuzzer "$t" "build/fuzz/$t-replay.log" -runs=0 "fuzz/corpus/$t"
  new="build/fuzz/corpus-new/$t"
  mkdir -p "$new"
  echo "fuzz: $t: fuzzing for ${seconds}s"
  run_fuzzer "$t" "build/fuzz/$t-fuzz.log" -max_total_time="$seconds" -max_len="$max_len" -use_value_profile=1 \
    "$new" "fuzz/corpus/$t"
done
echo "fuzz: ${#targets[@]} targets clean"
