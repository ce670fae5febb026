#!/bin/bash
# Final LSM insert runs: an nsys profile of one 2^26 insert run, then ROUNDS rounds of gpkv_old / gpkv inserts at KEYS (M = 64), then gpkv at 2^27 and queries with open (M = 64).
set -u
cd "$(dirname "$0")"
mkdir -p /tmp/bin && for f in *.gz; do gunzip -c $f > /tmp/bin/${f%.gz}; chmod +x /tmp/bin/${f%.gz}; done
export LD_LIBRARY_PATH=$PWD/../lib OMP_WAIT_POLICY=passive
cd /tmp/bin
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader > $OUT/device.txt
B="bench --suite ordered --lsm-batch 1048576 --lsm-log-batches 64 --insert-min 20 --insert-max 20 --batch 1048576 --threads 16 --systems gpkv-gpu-dev --table-sizes 20 --workloads insert"
NSYS=$(ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -1)
if [ -n "${PROFILE:-1}" ] && [ -n "$NSYS" ]; then
  timeout 200 $NSYS profile -o /tmp/prof --force-overwrite true ./gpkv $B --insert-keys 67108864 > $OUT/nsys-run.txt 2>&1
  timeout 200 $NSYS stats --report cuda_gpu_kern_sum,cuda_gpu_mem_time_sum,cuda_api_sum --format csv /tmp/prof.nsys-rep > $OUT/nsys.txt 2>&1
  rm -f /dev/shm/gpkv-bench*
else
  echo "no nsys ($NSYS)" > $OUT/nsys.txt
fi
for round in $(seq 1 ${ROUNDS:-3}); do
  for b in ${BINS:-gpkv_old gpkv}; do
    for keys in ${KEYS:-16777216 33554432 67108864}; do
      echo "=== round $round $b insert $keys $(date +%T)" >> $OUT/runs.txt
      timeout 200 ./$b $B --insert-keys $keys > /tmp/out.txt 2>&1
      cat /tmp/out.txt >> $OUT/full.txt
      grep -E "^  insert|after inserts|target" /tmp/out.txt | sed 's/gpu-pageable.*gpu-seconds-sort/ sort/; s/gpu-seconds-checksum.*//' >> $OUT/runs.txt
      rm -f /dev/shm/gpkv-bench*
    done
  done
done
echo "=== gpkv insert 134217728 $(date +%T)" >> $OUT/runs.txt
timeout 200 ./gpkv $B --insert-keys 134217728 > /tmp/out.txt 2>&1; cat /tmp/out.txt >> $OUT/full.txt
grep -E "^  insert|after inserts|target" /tmp/out.txt | sed 's/gpu-pageable.*gpu-seconds-sort/ sort/; s/gpu-seconds-checksum.*//' >> $OUT/runs.txt
rm -f /dev/shm/gpkv-bench*
echo "=== gpkv queries 2^24, 2^26 $(date +%T)" >> $OUT/runs.txt
timeout 300 ./gpkv bench --suite ordered --lsm-batch 1048576 --lsm-log-batches 64 --batch 1048576 --threads 16 --systems gpkv-gpu-dev --table-sizes 24,26 --ops 4194304 --workloads get,count,range > /tmp/out.txt 2>&1; cat /tmp/out.txt >> $OUT/full.txt
grep -E "^ +(get|count|range|open) |target" /tmp/out.txt >> $OUT/runs.txt
rm -f /dev/shm/gpkv-bench*
echo "done $(date +%T)" >> $OUT/runs.txt
