#!/usr/bin/env bash
# Writes the GPT benchmarks' text corpus to OUT: $TEXT when set, else every fortunes file of
# Debian's fortune packages, concatenated in name order. Prints OUT's absolute path.
#   bench/fortunes_text.sh OUT
set -euo pipefail
out=${1:?usage: $0 OUT}
if [ -n "${TEXT:-}" ]; then realpath "$TEXT"; exit; fi
find /usr/share/games/fortunes -maxdepth 1 -type f ! -name '*.dat' ! -name '*.u8' | LC_ALL=C sort | xargs cat >"$out"
realpath "$out"
