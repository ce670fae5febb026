#!/bin/bash
# A/B of LSM GPU binaries: gpkv_base gpkv_merge gpkv_carry, two rounds, inserts and queries with M = 64.
set -u
cd "$(dirname "$0")"
mkdir -p /tmp/bin && for f in *.gz; do gunzip -c $f > /tmp/bin/${f%.gz}; chmod +x /tmp/bin/${f%.gz}; done
export LD_LIBRARY_PATH=$PWD/../lib OMP_WAIT_POLICY=passive
cd /tmp/bin
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader > $OUT/device.txt
: > $OUT/tests.txt
for t in lsm_gpu_oracle_test lsm_cross_backend_test; do
  timeout 200 ./$t --gtest_brief=1 > /tmp/$t.log 2>&1; echo "== $t rc=$?" >> $OUT/tests.txt
  grep -E "PASSED|FAILED|Failure" /tmp/$t.log | head >> $OUT/tests.txt
done
for round in 1 2; do
  for b in ${BINS:-gpkv_base gpkv_merge gpkv_carry}; do
    for keys in 67108864 134217728; do
      echo "=== round $round $b insert $keys" >> $OUT/ab.txt
      timeout 200 ./$b bench --suite ordered --lsm-batch 1048576 --lsm-log-batches 64 --insert-min 20 --insert-max 20 --batch 1048576 --threads 16 --insert-keys $keys --systems gpkv-gpu-dev --table-sizes 20 --workloads insert 2>&1 | grep -E "^  insert|after inserts" | sed 's/gpu-pageable.*gpu-seconds-sort/ sort/; s/gpu-seconds-persist.*//' >> $OUT/ab.txt
      rm -f /dev/shm/gpkv-bench*
    done
    echo "=== round $round $b queries 2^24" >> $OUT/ab.txt
    timeout 200 ./$b bench --suite ordered --lsm-batch 1048576 --lsm-log-batches 64 --batch 1048576 --threads 16 --systems gpkv-gpu-dev --table-sizes 24 --ops 4194304 --workloads get,count,range 2>&1 | grep -E "^ +(get|count|range|open) |after|at 2" | sed 's/gpu-batches.*//' >> $OUT/ab.txt
    rm -f /dev/shm/gpkv-bench*
  done
done
