#!/usr/bin/env bash
# The gpkv demo: installs the dependencies, builds gpkv (Release) into build/,
# creates a pool on /dev/shm (else /tmp), creates a table, loads 1M keys with
# `gpkv load`, runs a small mixed YCSB workload with gpkv-bench, and prints
# `gpkv info` of the pool. Uses the GPU when there is one (and nvcc to build
# for it), the CPU otherwise.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/install-deps.sh
if [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPKV_BUILD_TESTS=OFF -DGPKV_BUILD_BENCH=ON
cmake --build build -j"$(nproc)" --target gpkv_tool gpkv-bench
gpkv=build/gpkv
gpkv_bench=build/gpkv-bench

# tmpfs can be registered with the GPU (direct mode); any file system works.
dir=/dev/shm
if [ ! -d "$dir" ] || [ ! -w "$dir" ]; then
  dir=${TMPDIR:-/tmp}
fi
pool="$dir/gpkv-demo-$$.gpkv"
bench_pool="$dir/gpkv-demo-bench-$$.gpkv"
trap 'rm -f "$pool" "$bench_pool"' EXIT

step() { printf '\n== %s\n' "$*"; }

step "gpkv create $pool --size 1G"
"$gpkv" create "$pool" --size 1G

step "gpkv tables create $pool users --expected-keys 1M"
"$gpkv" tables create "$pool" users --expected-keys 1M
"$gpkv" tables "$pool"

step "gpkv load $pool users --count 1M --sequential"
"$gpkv" load "$pool" users --count 1M --sequential

step "gpkv put / get / del"
"$gpkv" put "$pool" users 42 4242
"$gpkv" get "$pool" users 0 42 1048575
"$gpkv" del "$pool" users 42
"$gpkv" get "$pool" users 42 || echo "(exit $?: key 42 is gone)"

step "gpkv-bench: YCSB A (50% read, 50% update) and B (95% read), zipfian, 1M keys"
"$gpkv_bench" --suite ycsb --workloads A,B --distributions zipfian \
  --keys 1M --ops 1M --threads "$(nproc)" --systems gpkv,libcuckoo \
  --backend auto --pool "$bench_pool"

step "gpkv verify $pool"
"$gpkv" verify "$pool"

step "gpkv info $pool"
"$gpkv" info "$pool"
