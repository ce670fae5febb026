#!/usr/bin/python3
"""Draw the headline plots of docs/bench/README.md from benchmark JSON.

    /usr/bin/python3 scripts/plot-bench.py [--spec docs/bench/data/plots.json]
                                           [--out docs/bench/img]

The spec names, for every table family and backend (a panel row), the JSON
files to read (the benchmark's `--json=FILE` output: a report object with
"results", or one object per line as the gpu and slab suites write), the
workload, the key count that holds the batch-size plot and the batch size
that holds the table-size plot, the systems and the machine; a setting
NAME_batch or NAME_keys applies to one of the two plots only. For every family it writes
OUT/<family>.png: four panels (GPU and CPU, each against batch size and
against table size), one line per system, millions of operations per second
on a log scale. Redraw after the numbers change: edit the spec's file lists
and run the script again. Needs Debian's python3-matplotlib.
"""

import argparse
import json
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The gpu suite's modes, as the systems they are in a plot.
GPU_MODE_SYSTEM = {
    "cpu": "gpkv, CPU backend (same machine)",
    "naive": "naive GPU hash table",
}


def load_records(path):
    """Every measurement of one JSON file as dicts with system, workload,
    keys, batch and mops."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    try:
        docs = [json.loads(text)]
    except json.JSONDecodeError:
        docs = [json.loads(line) for line in text.splitlines() if line.startswith("{")]
    records = []
    for doc in docs:
        if "results" in doc:  # a report: foundation, ycsb, sweep, ordered
            keys = doc.get("config", {}).get("keys")
            for result in doc["results"]:
                if result.get("error") or "mops" not in result:
                    continue
                workload = result.get("workload", "")
                if result.get("distribution") not in (None, "", "new"):
                    workload += " " + result["distribution"]
                records.append({
                    "source": result.get("source"),
                    "system": result["system"],
                    "workload": workload,
                    "keys": result.get("keys", result.get("table_keys", keys)),
                    "batch": result.get("batch_size", result.get("batch")),
                    "mops": result["mops"],
                    "key_size": result.get("key_size", 8),
                    "value_size": result.get("value_size", 8),
                })
        elif doc.get("kind") == "table":  # the gpu suite
            mode = doc.get("mode", "")
            records.append({
                "system": GPU_MODE_SYSTEM.get(mode, "gpkv, GPU " + mode),
                "workload": doc["workload"],
                "keys": doc["keys"],
                "batch": doc["batch"],
                "mops": doc["mops"],
            })
        elif doc.get("kind") == "slab" and doc.get("workload"):  # the slab suite
            workload, batch = doc["workload"], doc["batch"]
            if workload == "build (one batch)":
                workload = "build"
            target = doc.get("target_utilisation") or None  # 0: the persistent peer
            records.append({
                "system": doc["system"] + ("" if doc.get("memory", "device") == "device"
                                           else " (host batches)"),
                "workload": workload,
                "keys": doc["keys"],
                "batch": batch,
                "mops": doc["gops"] * 1000.0,
                "utilisation": target,
            })
    return records


def power_label(value):
    exponent = math.log2(value)
    return f"2^{exponent:.0f}" if exponent == int(exponent) else f"{value:g}"


def setting(panel, name, along):
    """A panel's setting for one axis: NAME_batch / NAME_keys, else NAME."""
    return panel.get(name + "_" + along, panel.get(name))


def draw_panel(axis, panel, along, base):
    """One panel: the panel's workload against `along` ("batch" or "keys"),
    the other axis held at the panel's value; one line per system."""
    records = []
    for name in setting(panel, "files", along):
        path = os.path.join(base, name)
        if os.path.exists(path):
            records += load_records(path)
        else:
            print(f"plot-bench: {path}: no such file, left out", file=sys.stderr)
    fixed = "keys" if along == "batch" else "batch"
    workload = setting(panel, "workload", along)
    wanted = setting(panel, fixed, along)
    source = setting(panel, "source", along)
    sizes = (panel.get("key_size", 8), panel.get("value_size", 8))
    rows = [r for r in records if r["workload"] == workload and r[along] and r["mops"] > 0
            and (r.get("key_size", 8), r.get("value_size", 8)) == sizes]
    if "utilisation" in panel:
        rows = [r for r in rows if r.get("utilisation") in (None, panel["utilisation"])]
    if wanted is not None:
        rows = [r for r in rows if r[fixed] == wanted]
    if source is not None:
        rows = [r for r in rows if r.get("source") == source]
    systems = setting(panel, "systems", along) or sorted({r["system"] for r in rows})
    drawn = 0
    values = [r["mops"] for r in rows if r["system"] in systems]
    for system in systems:
        points = sorted((r[along], r["mops"]) for r in rows if r["system"] == system)
        if not points:
            continue
        xs, ys = zip(*points)
        axis.plot(xs, ys, marker="o", label=system)
        drawn += 1
    axis.set_xscale("log", base=2)
    axis.set_yscale("log")
    axis.grid(True, which="both", alpha=0.3)
    axis.set_xlabel("operations per batch" if along == "batch" else "keys in the table")
    axis.set_ylabel("M ops/s")
    held = ""
    if wanted is not None:
        held = (f", {power_label(wanted)} keys" if fixed == "keys"
                else f", batches of {power_label(wanted)}")
    axis.set_title(f"{panel['backend']}: {workload}{held}\n{setting(panel, 'machine', along)}",
                   fontsize=9)
    if drawn:
        # At least a decade either side, so that a small difference does not
        # look like a large one; plain numbers on the axis.
        axis.set_ylim(min(values) / 3, max(values) * 3)
        plain = matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}")
        axis.yaxis.set_major_formatter(plain)
        axis.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        axis.legend(fontsize=7)
        axis.xaxis.set_major_formatter(
            matplotlib.ticker.FuncFormatter(lambda v, _: power_label(v) if v > 0 else ""))
    else:
        axis.text(0.5, 0.5, "not measured", ha="center", va="center", transform=axis.transAxes)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", default=os.path.join(ROOT, "docs/bench/data/plots.json"))
    parser.add_argument("--out", default=os.path.join(ROOT, "docs/bench/img"))
    args = parser.parse_args()
    with open(args.spec, encoding="utf-8") as f:
        spec = json.load(f)
    base = os.path.dirname(os.path.abspath(args.spec))
    os.makedirs(args.out, exist_ok=True)
    for family in spec["families"]:
        figure, axes = plt.subplots(2, 2, figsize=(12, 8.5))
        for row, panel in enumerate(family["panels"]):
            draw_panel(axes[row][0], panel, "batch", base)
            draw_panel(axes[row][1], panel, "keys", base)
        figure.suptitle(family["title"], fontsize=12)
        figure.tight_layout()
        path = os.path.join(args.out, family["name"] + ".png")
        figure.savefig(path, dpi=90)
        plt.close(figure)
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
