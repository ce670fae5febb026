#!/bin/bash
# Reserve A/B: gpkv (no reserve) vs gpkv_r with GPKV_LSM_GPU_RESERVE=R (R x M x b entries reserved in the memory pool at open), inserts M = 64.
set -u
cd "$(dirname "$0")"
mkdir -p /tmp/bin && for f in *.gz; do gunzip -c $f > /tmp/bin/${f%.gz}; chmod +x /tmp/bin/${f%.gz}; done
export LD_LIBRARY_PATH=$PWD/../lib OMP_WAIT_POLICY=passive
cd /tmp/bin
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader > $OUT/device.txt
B="bench --suite ordered --lsm-batch 1048576 --lsm-log-batches 64 --insert-min 20 --insert-max 20 --batch 1048576 --threads 16 --systems gpkv-gpu-dev --table-sizes 20 --workloads insert"
for round in 1 2; do
  for cfg in ${CFGS:-gpkv:0 gpkv_r:2 gpkv_r:4}; do
    b=${cfg%%:*}; r=${cfg##*:}
    for keys in ${KEYS:-16777216 67108864}; do
      echo "=== round $round $b reserve=$r insert $keys $(date +%T)" >> $OUT/runs.txt
      GPKV_LSM_GPU_RESERVE=$r timeout 200 ./$b $B --insert-keys $keys > /tmp/out.txt 2>&1
      grep -E "^  insert|after inserts|open \(" /tmp/out.txt | sed 's/gpu-pageable.*gpu-seconds-sort/ sort/; s/gpu-seconds-checksum.*//; s/.*after inserts.*gpu-checkpoints/  ckpt/' >> $OUT/runs.txt
      rm -f /dev/shm/gpkv-bench*
    done
  done
done
echo "done $(date +%T)" >> $OUT/runs.txt
