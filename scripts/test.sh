#!/usr/bin/env bash
# Installs dependencies, builds the release preset and runs the whole test suite.
# This is the README's test command and what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)"
ctest --preset release "$@"
