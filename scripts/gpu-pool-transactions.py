#!/usr/bin/python3
"""Pool transactions per operation from an Nsight Compute CSV.

`gpkv-bench --suite gpu` wraps the timed part of each point in the NVTX ranges
"gpkv-timed" / "<mode> <workload> batch <n> ops <m>". Run it under

  ncu --nvtx --nvtx-include "gpkv-timed/" --csv --page raw --print-units base \
      --metrics lts__t_sectors_aperture_sysmem_op_read.sum,\
lts__t_sectors_aperture_sysmem_op_write.sum,lts__t_sectors_aperture_sysmem_op_atom.sum,\
lts__t_sectors_aperture_sysmem_op_red.sum,lts__t_requests_aperture_sysmem.sum \
      --log-file ncu.csv ./gpkv-bench --suite gpu ...

and this script sums, per range, the L2's 32-byte sectors to system memory
(the pool mapping: the only system memory the kernels touch) read, written
and atomically updated, and divides by the range's operations.
Usage: gpu-pool-transactions.py ncu.csv [--markdown]
"""
import csv
import re
import sys

METRICS = {
    "read": "lts__t_sectors_aperture_sysmem_op_read.sum",
    "write": "lts__t_sectors_aperture_sysmem_op_write.sum",
    "atom": "lts__t_sectors_aperture_sysmem_op_atom.sum",
    "red": "lts__t_sectors_aperture_sysmem_op_red.sum",
    "requests": "lts__t_requests_aperture_sysmem.sum",
}


def number(text):
    text = text.replace(",", "").strip()
    return float(text) if text else 0.0


def main():
    path = sys.argv[1]
    markdown = "--markdown" in sys.argv
    with open(path, newline="") as f:
        lines = [line for line in f if not line.startswith("==")]
    reader = csv.DictReader(lines)
    nvtx_column = next(c for c in reader.fieldnames if c.startswith("thread Domain:Push/Pop"))
    totals = {}
    order = []
    for row in reader:
        if not row.get("ID", "").strip().isdigit():
            continue  # the units row
        label = None
        for part in re.split(r"[|:]", row[nvtx_column]):
            if re.search(r" batch \d+ ops \d+$", part):
                label = part.strip()
        if label is None:
            continue
        if label not in totals:
            totals[label] = {k: 0.0 for k in METRICS}
            totals[label]["kernels"] = 0
            order.append(label)
        for key, metric in METRICS.items():
            totals[label][key] += number(row.get(metric, ""))
        totals[label]["kernels"] += 1
    header = ["range", "kernels", "read/op", "write/op", "atomic/op", "sectors/op", "requests/op"]
    if markdown:
        print("| " + " | ".join(header) + " |")
        print("|---|" + "---:|" * (len(header) - 1))
    else:
        print("  ".join(header))
    for label in order:
        t = totals[label]
        ops = int(re.search(r" ops (\d+)$", label).group(1))
        atom = t["atom"] + t["red"]
        cells = [label.rsplit(" ops ", 1)[0], str(t["kernels"]),
                 f"{t['read'] / ops:.2f}", f"{t['write'] / ops:.2f}", f"{atom / ops:.2f}",
                 f"{(t['read'] + t['write'] + atom) / ops:.2f}", f"{t['requests'] / ops:.2f}"]
        print(("| " + " | ".join(cells) + " |") if markdown else "  ".join(cells))


if __name__ == "__main__":
    main()
