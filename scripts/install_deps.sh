#!/usr/bin/env bash
# Installs everything crew needs from Debian's packages. Idempotent: packages already
# present are skipped. Needs root (or sudo).
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config clang libclang-rt-14-dev
  libdnnl-dev libopenblas-dev zlib1g-dev
  libgtest-dev libgmock-dev libbenchmark-dev libcli11-dev libgloo-dev
  dataset-fashion-mnist
  pybind11-dev python3-dev python3-numpy python3-pytest python3-tqdm fortunes
  openmpi-bin slurmctld slurmd slurm-client munge
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install_deps: all ${#packages[@]} packages present"
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install_deps: installing ${missing[*]}"
$SUDO apt-get update -q
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "${missing[@]}"
