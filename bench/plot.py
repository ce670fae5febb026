#!/usr/bin/python3
"""Draw `gpkv-bench --json` reports as PNG charts.

    /usr/bin/python3 bench/plot.py REPORT.json [REPORT.json ...] --out DIR

For every report:
  * results of several batch sizes (the sweep suite): throughput vs batch
    size, one line per system, one chart per (workload, keys, K/V sizes):
    DIR/<stem>-sweep-<workload>-<keys>-<K>x<V>.png
  * the other results: per-workload bars, one bar per system, log scale
    (RocksDB is one to two orders of magnitude below the hash tables):
    DIR/<stem>-bars-<K>x<V>.png

Every chart carries the machine, date and command of its report, as the
numbers beside it do. Needs python3-matplotlib (Debian).
"""

import argparse
import collections
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# One colour per system, stable across charts.
COLOURS = {
    "gpkv": "#1f77b4",
    "libcuckoo": "#2ca02c",
    "rocksdb": "#d62728",
    "rocksdb-nosync": "#ff9896",
}


def colour(system):
    return COLOURS.get(system, "#7f7f7f")


def caption(report):
    machine = report.get("machine", {})
    return "{} ({} cores), {}\n{}".format(
        machine.get("cpu_model", "?"),
        machine.get("cores", "?"),
        report.get("date", "?"),
        report.get("command", "?"),
    )


def systems_in(rows):
    seen = []
    for row in rows:
        if row["system"] not in seen:
            seen.append(row["system"])
    return seen


def plot_sweep(report, rows, path, title):
    fig, ax = plt.subplots(figsize=(8, 5))
    for system in systems_in(rows):
        points = sorted((r["batch_size"], r["mops"]) for r in rows if r["system"] == system)
        ax.plot([p[0] for p in points], [p[1] for p in points], marker="o",
                label=system, color=colour(system))
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("batch size (operations)")
    ax.set_ylabel("throughput (Mops/s, log)")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.text(0.01, 0.01, caption(report), fontsize=7, va="bottom")
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_bars(report, rows, path, title):
    cases = []
    for row in rows:
        case = row["workload"] if row["distribution"] in ("new", "latest") else \
            "{} {}".format(row["workload"], row["distribution"])
        if case not in cases:
            cases.append(case)
    systems = systems_in(rows)
    value = {}
    for row in rows:
        case = row["workload"] if row["distribution"] in ("new", "latest") else \
            "{} {}".format(row["workload"], row["distribution"])
        value[(case, row["system"])] = row["mops"]
    width = 0.8 / max(len(systems), 1)
    fig, ax = plt.subplots(figsize=(max(8, 1.1 * len(cases) + 2), 5))
    for i, system in enumerate(systems):
        xs = [c + (i - (len(systems) - 1) / 2) * width for c in range(len(cases))]
        ys = [value.get((case, system), 0) for case in cases]
        ax.bar(xs, ys, width, label=system, color=colour(system))
    ax.set_xticks(range(len(cases)))
    ax.set_xticklabels(cases, rotation=30, ha="right")
    ax.set_yscale("log")
    ax.set_ylabel("throughput (Mops/s, log)")
    ax.set_title(title)
    ax.grid(True, axis="y", which="both", alpha=0.3)
    ax.legend()
    fig.text(0.01, 0.01, caption(report), fontsize=7, va="bottom")
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_report(report, stem, out_dir):
    written = []
    rows = [r for r in report.get("results", []) if not r.get("error") and r["mops"] > 0]
    by_size = collections.OrderedDict()
    for row in rows:
        by_size.setdefault((row["key_size"], row["value_size"]), []).append(row)
    for (key_size, value_size), size_rows in by_size.items():
        sizes = "{}x{}".format(key_size, value_size)
        cases = collections.OrderedDict()
        for row in size_rows:
            cases.setdefault((row["workload"], row["distribution"]), []).append(row)
        swept, single = [], []
        for case_rows in cases.values():
            if len({r["batch_size"] for r in case_rows}) > 1:
                swept.append(case_rows)
            else:
                single.extend(case_rows)
        for case_rows in swept:
            workload, distribution = case_rows[0]["workload"], case_rows[0]["distribution"]
            path = os.path.join(out_dir, "{}-sweep-{}-{}-{}.png".format(
                stem, workload, distribution, sizes))
            plot_sweep(report, case_rows, path, "{} {}, {} B keys / {} B values: throughput vs "
                       "batch size".format(workload, distribution, key_size, value_size))
            written.append(path)
        if single:
            path = os.path.join(out_dir, "{}-bars-{}.png".format(stem, sizes))
            plot_bars(report, single, path, "gpkv-bench {}: {} B keys / {} B values, batch {}"
                      .format(report.get("suite", ""), key_size, value_size,
                              single[0]["batch_size"]))
            written.append(path)
    return written


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reports", nargs="+", help="JSON written by gpkv-bench --json")
    parser.add_argument("--out", default=".", help="directory for the PNG files")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for path in args.reports:
        with open(path) as f:
            report = json.load(f)
        stem = os.path.splitext(os.path.basename(path))[0]
        for written in plot_report(report, stem, args.out):
            print(written)
    return 0


if __name__ == "__main__":
    sys.exit(main())
