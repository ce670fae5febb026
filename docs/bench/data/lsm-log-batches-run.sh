#!/bin/bash
# LSM log batches (M): GPU tests, then inserts with M = 1 and M = 64, then queries and open with M = 64.
set -u
cd "$(dirname "$0")"
mkdir -p /tmp/bin && for f in *.gz; do gunzip -c $f > /tmp/bin/${f%.gz}; chmod +x /tmp/bin/${f%.gz}; done
export LD_LIBRARY_PATH=$PWD/../lib OMP_WAIT_POLICY=passive
cd /tmp/bin
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader > $OUT/device.txt
: > $OUT/tests.txt
for t in ${TESTS:-lsm_gpu_oracle_test lsm_cross_backend_test}; do
  [ -x ./$t ] || continue
  start=$(date +%s)
  timeout ${TEST_TIMEOUT:-200} ./$t --gtest_brief=1 > /tmp/$t.log 2>&1
  rc=$?
  echo "== $t rc=$rc $(( $(date +%s) - start ))s" >> $OUT/tests.txt
  grep -E "PASSED|FAILED|SKIPPED|tests ran|Failure|error|Expected|Which is" /tmp/$t.log | head -40 >> $OUT/tests.txt
done
B="./gpkv bench --suite ordered --lsm-batch 1048576 --insert-min 20 --insert-max 20 --batch 1048576 --threads 16"
RUNS=${RUNS:-"1 67108864 insert 20;64 67108864 insert 20;64 134217728 insert 20;16 67108864 insert 20;1 16777216 get,count,range 24,26;64 16777216 get,count,range 24,26"}
IFS=';' read -ra SPECS <<< "$RUNS"
for spec in "${SPECS[@]}"; do
  set -- $spec
  echo "=== M=$1 insert-keys=$2 workloads=$3 sizes=$4" >> $OUT/bench.txt
  timeout 300 $B --lsm-log-batches $1 --insert-keys $2 --systems ${SYSTEMS:-gpkv-gpu-dev,gpkv-gpu} --table-sizes $4 --ops 4194304 --workloads $3 --json-file $OUT/bench-M$1-$2-$3.json >> $OUT/bench.txt 2>&1
  echo "rc=$?" >> $OUT/bench.txt
  rm -f /dev/shm/gpkv-bench*
done
