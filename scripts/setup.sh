#!/usr/bin/env bash
# Installs the Debian packages attnsim needs, only those missing.
# Idempotent: runs `apt-get update` only when something has to be installed.
set -euo pipefail

packages=(
  build-essential cmake
  libboost-program-options-dev
  libyaml-cpp-dev
  libhdf5-dev
  libgtest-dev googletest
  nlohmann-json3-dev
  libbenchmark-dev
  python3-h5py python3-matplotlib python3-numpy python3-pandas python3-pytest python3-yaml
  pybind11-dev python3-dev
  libopenmpi-dev openmpi-bin
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "setup.sh: installing ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
