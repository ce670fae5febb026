#!/usr/bin/env bash
# Installs the Debian packages gpkv builds, tests and benchmarks with.
# Runs apt-get update first; uses sudo only when not root. The CUDA toolkit is
# not a Debian package here: when /usr/local/cuda/bin/nvcc exists the build
# picks it up (see scripts/demo.sh and .ci/run), otherwise gpkv builds CPU-only.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config python3
  libpmem2-dev libcli11-dev libgtest-dev libcuckoo-dev libabsl-dev nlohmann-json3-dev librocksdb-dev
  liblmdb-dev
)

as_root=()
if [ "$(id -u)" -ne 0 ]; then
  as_root=(sudo)
fi

all_installed() {
  local package
  for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}\n' "$package" 2>/dev/null | grep -q '^install ok installed$' ||
      return 1
  done
}

echo "gpkv: installing build dependencies with apt-get" >&2
if ! "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q; then
  # Without a package index (offline) carry on only if nothing is missing.
  if all_installed; then
    echo "gpkv: apt-get update failed; every package is installed already, carrying on" >&2
    exit 0
  fi
  echo "gpkv: apt-get update failed and packages are missing: ${packages[*]}" >&2
  exit 1
fi
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y -q --no-install-recommends "${packages[@]}"
