#!/usr/bin/env bash
# The main job: installs dependencies, builds crew, then trains the seed's CNN data-parallel
# on Fashion-MNIST with 2 workers under `crew launch`, and compares against one process.
# Extra arguments go to train_cnn (e.g. --epochs 1). With --python first, the seed's program
# in Python instead (examples/python/train_cnn.py under python3 -m crew.distributed.launch;
# the other arguments go to it).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)"
if [ "${1:-}" = "--python" ]; then
  shift
  export PYTHONPATH=$PWD/build/release/python${PYTHONPATH:+:$PYTHONPATH}
  exec /usr/bin/python3 -m crew.distributed.launch --devices=0,1 examples/python/train_cnn.py "$@"
fi
exec build/release/bin/crew launch --devices=0,1 build/release/bin/train_cnn --compare-single "$@"
