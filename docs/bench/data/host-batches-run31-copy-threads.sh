#!/bin/bash
# Pageable 2^20 gets through the engine with 8, 12 and 16 staging copy threads, two rounds.
set -u
cd "$(dirname "$0")"
mkdir -p /tmp/bin && gunzip -c gpkv.gz > /tmp/bin/gpkv && chmod +x /tmp/bin/gpkv
export LD_LIBRARY_PATH=$PWD/../lib
cd /tmp/bin
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader > $OUT/device.txt
nproc >> $OUT/device.txt
for round in 1 2; do
  for t in 8 16 12; do
    echo "=== round $round GPKV_COPY_THREADS=$t" >> $OUT/copy.txt
    GPKV_COPY_THREADS=$t timeout 150 ./gpkv bench --suite sweep --workloads C A --distributions uniform --sweep-min 20 --sweep-max 20 --backend cuda --threads 16 --keys 16777216 --systems gpkv >> $OUT/copy.txt 2>&1
    echo "rc=$?" >> $OUT/copy.txt
    rm -f /dev/shm/gpkv-bench*
  done
done
grep -E "^=== |^ +[CA] .*gpkv|rc=" $OUT/copy.txt
