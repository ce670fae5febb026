#!/bin/bash
# Run 33: the write pipeline's copies in one after another (new) against main (base), two rounds each, one H100.
cd "$(dirname "$0")"
for b in gpkv_base gpkv_new; do [ -f $b.gz ] && gunzip -f $b.gz; chmod +x $b; done
export LD_LIBRARY_PATH=$PWD/../lib
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for r in 1 2; do for b in gpkv_base gpkv_new; do
  ./$b bench --suite gpu --modes host --no-calibration --keys 16M --dir /dev/shm > $OUT/run33-$b-r$r.txt 2>&1; echo "== $b round $r rc $?"
  grep -E "(engine cuda|mirror) (pageable|registered|device) (A) batch (1048576|4194304) x1" $OUT/run33-$b-r$r.txt
done; done
