#!/bin/bash
# A/B of LSM GPU binaries (BINS, default gpkv_old gpkv): tests of the new one, then inserts (M = 64) at KEYS, ROUNDS rounds, per-batch latencies, and queries at 2^24.
set -u
cd "$(dirname "$0")"
mkdir -p /tmp/bin && for f in *.gz; do gunzip -c $f > /tmp/bin/${f%.gz}; chmod +x /tmp/bin/${f%.gz}; done
export LD_LIBRARY_PATH=$PWD/../lib OMP_WAIT_POLICY=passive
cd /tmp/bin
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader > $OUT/device.txt
: > $OUT/tests.txt
for t in ${TESTS:-lsm_gpu_oracle_test lsm_cross_backend_test}; do
  start=$(date +%s)
  timeout 200 ./$t --gtest_brief=1 > /tmp/$t.log 2>&1; echo "== $t rc=$? $(( $(date +%s) - start ))s" >> $OUT/tests.txt
  grep -E "PASSED|FAILED|Failure|Expected|Which is|error" /tmp/$t.log | head -30 >> $OUT/tests.txt
done
for round in $(seq 1 ${ROUNDS:-2}); do
  for b in ${BINS:-gpkv_old gpkv}; do
    for keys in ${KEYS:-16777216 67108864 134217728}; do
      echo "=== round $round $b insert $keys ${ENVS:-} $(date +%T)" >> $OUT/ab.txt
      env ${ENVS:-} GPKV_BENCH_BATCH_US=1 timeout 200 ./$b bench --suite ordered --lsm-batch 1048576 --lsm-log-batches 64 --insert-min 20 --insert-max 20 --batch 1048576 --threads 16 --insert-keys $keys --systems gpkv-gpu-dev --table-sizes 20 --workloads insert > /tmp/out.txt 2>&1
      grep -E "^  insert|after inserts" /tmp/out.txt | sed 's/gpu-pageable.*gpu-seconds-sort/ sort/; s/gpu-seconds-persist.*//' >> $OUT/ab.txt
      grep "batch-us" /tmp/out.txt | cut -c1-400 >> $OUT/ab.txt
      rm -f /dev/shm/gpkv-bench*
    done
    if [ "$round" = 1 ] && [ -z "${NOQ:-}" ]; then
      echo "=== round $round $b queries 2^24 $(date +%T)" >> $OUT/ab.txt
      timeout 200 ./$b bench --suite ordered --lsm-batch 1048576 --lsm-log-batches 64 --batch 1048576 --threads 16 --systems gpkv-gpu-dev --table-sizes 24 --ops 4194304 --workloads get,count,range 2>&1 | grep -E "^ +(get|count|range|open) " >> $OUT/ab.txt
      rm -f /dev/shm/gpkv-bench*
    fi
  done
done
echo "done $(date +%T)" >> $OUT/ab.txt
