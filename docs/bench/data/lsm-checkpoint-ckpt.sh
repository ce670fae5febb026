#!/bin/bash
# Checkpoint behind the batches: inserts with M = 64 at 2^26..2^28 keys, A/B of the checkpoint copy's slice size (GPKV_LSM_CHECKPOINT_CHUNK_MB), two rounds.
set -u
cd "$(dirname "$0")"
mkdir -p /tmp/bin && for f in *.gz; do gunzip -c $f > /tmp/bin/${f%.gz}; chmod +x /tmp/bin/${f%.gz}; done
export LD_LIBRARY_PATH=$PWD/../lib OMP_WAIT_POLICY=passive
cd /tmp/bin
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader > $OUT/device.txt
for round in 1 2; do
  for chunk in ${CHUNKS:-0 64}; do
    for keys in ${KEYS:-67108864 134217728 268435456}; do
      echo "=== round $round chunk ${chunk}MB M=${M:-64} insert $keys" >> $OUT/ckpt.txt
      GPKV_LSM_CHECKPOINT_CHUNK_MB=$chunk timeout 200 ./gpkv bench --suite ordered --lsm-batch 1048576 --lsm-log-batches ${M:-64} --insert-min 20 --insert-max 20 --batch 1048576 --threads 16 --insert-keys $keys --systems ${SYSTEMS:-gpkv-gpu-dev} --table-sizes 20 --workloads insert 2>&1 | grep -E "^  insert|after inserts" | sed 's/gpu-seconds-fences.*gpu-seconds-sync/ sync/; s/gpu-seconds-registration-wait [0-9.]* //' >> $OUT/ckpt.txt
      rm -f /dev/shm/gpkv-bench*
    done
  done
done
