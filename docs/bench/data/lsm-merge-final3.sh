#!/bin/bash
# Final LSM runs: LSM GPU tests and db_test, then ROUNDS rounds of inserts (M = 64) at KEYS for each CFGS entry (binary:reserve, empty = the default), then 2^27 and queries with open.
set -u
cd "$(dirname "$0")"
mkdir -p /tmp/bin && for f in *.gz; do gunzip -c $f > /tmp/bin/${f%.gz}; chmod +x /tmp/bin/${f%.gz}; done
export LD_LIBRARY_PATH=$PWD/../lib OMP_WAIT_POLICY=passive
cd /tmp/bin
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader > $OUT/device.txt
: > $OUT/tests.txt
for t in ${TESTS:-lsm_gpu_oracle_test lsm_cross_backend_test db_test}; do
  start=$(date +%s)
  timeout 200 ./$t --gtest_brief=1 > /tmp/$t.log 2>&1; echo "== $t rc=$? $(( $(date +%s) - start ))s" >> $OUT/tests.txt
  grep -E "PASSED|FAILED|Failure|Expected|Which is|error" /tmp/$t.log | head -30 >> $OUT/tests.txt
done
B="bench --suite ordered --lsm-batch 1048576 --lsm-log-batches 64 --insert-min 20 --insert-max 20 --batch 1048576 --threads 16 --systems gpkv-gpu-dev --table-sizes 20 --workloads insert"
for round in $(seq 1 ${ROUNDS:-3}); do
  for cfg in ${CFGS:-gpkv: gpkv:0}; do
    b=${cfg%%:*}; r=${cfg##*:}
    for keys in ${KEYS:-16777216 33554432 67108864}; do
      echo "=== round $round $b reserve=${r:-default} insert $keys $(date +%T)" >> $OUT/runs.txt
      env ${r:+GPKV_LSM_GPU_RESERVE=$r} timeout 200 ./$b $B --insert-keys $keys > /tmp/out.txt 2>&1
      cat /tmp/out.txt >> $OUT/full.txt
      grep -E "^  insert|after inserts" /tmp/out.txt | sed 's/gpu-pageable.*gpu-seconds-sort/ sort/; s/gpu-seconds-checksum.*//; s/.*after inserts.*gpu-checkpoints/  checkpoints/' >> $OUT/runs.txt
      rm -f /dev/shm/gpkv-bench*
    done
  done
done
echo "=== gpkv insert 134217728 $(date +%T)" >> $OUT/runs.txt
timeout 200 ./gpkv $B --insert-keys 134217728 > /tmp/out.txt 2>&1; cat /tmp/out.txt >> $OUT/full.txt
grep -E "^  insert|after inserts" /tmp/out.txt | sed 's/gpu-pageable.*gpu-seconds-sort/ sort/; s/gpu-seconds-checksum.*//; s/.*after inserts.*gpu-checkpoints/  checkpoints/' >> $OUT/runs.txt
rm -f /dev/shm/gpkv-bench*
echo "=== gpkv queries 2^24, 2^26 $(date +%T)" >> $OUT/runs.txt
timeout 300 ./gpkv bench --suite ordered --lsm-batch 1048576 --lsm-log-batches 64 --batch 1048576 --threads 16 --systems gpkv-gpu-dev --table-sizes 24,26 --ops 4194304 --workloads get,count,range > /tmp/out.txt 2>&1; cat /tmp/out.txt >> $OUT/full.txt
grep -E "^ +(get|count|range|open) |target" /tmp/out.txt >> $OUT/runs.txt
rm -f /dev/shm/gpkv-bench*
echo "done $(date +%T)" >> $OUT/runs.txt
