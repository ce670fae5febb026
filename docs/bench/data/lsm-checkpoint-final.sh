#!/bin/bash
# Checkpoint behind the batches, final numbers: inserts with M = 64 at 2^24..2^28 keys (slices of 64 MB), M = 1 beside, the slice size at 2^28, queries and open with M = 64.
set -u
cd "$(dirname "$0")"
mkdir -p /tmp/bin && for f in *.gz; do gunzip -c $f > /tmp/bin/${f%.gz}; chmod +x /tmp/bin/${f%.gz}; done
export LD_LIBRARY_PATH=$PWD/../lib OMP_WAIT_POLICY=passive
cd /tmp/bin
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader > $OUT/device.txt
B="./gpkv bench --suite ordered --lsm-batch 1048576 --insert-min 20 --insert-max 20 --batch 1048576 --threads 16"
run() {  # M keys systems workloads sizes chunk
  echo "=== M=$1 insert-keys=$2 systems=$3 workloads=$4 sizes=$5 chunk=${6}MB" >> $OUT/bench.txt
  GPKV_LSM_CHECKPOINT_CHUNK_MB=$6 timeout 300 $B --lsm-log-batches $1 --insert-keys $2 --systems $3 --table-sizes $5 --ops 4194304 --workloads $4 --json-file $OUT/bench-M$1-$2-$4-$5-c$6.json >> $OUT/bench.txt 2>&1
  echo "rc=$?" >> $OUT/bench.txt
  rm -f /dev/shm/gpkv-bench*
}
run 64 67108864 gpkv-gpu-dev,gpkv-gpu insert 20 64
run 1 67108864 gpkv-gpu-dev insert 20 64
run 64 16777216 gpkv-gpu-dev insert 20 64
run 64 134217728 gpkv-gpu-dev insert 20 64
for c in 64 16 256; do run 64 268435456 gpkv-gpu-dev insert 20 $c; done
run 64 16777216 gpkv-gpu-dev get,count,range 24,26 64
