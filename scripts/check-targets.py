#!/usr/bin/env python3
"""Checks gpkv-bench results against the goals in docs/bench/targets.json.

    scripts/check-targets.py RESULT.json [RESULT.json ...]
        [--targets docs/bench/targets.json] [--suite SUITE] [--id ID]

Each RESULT is what `gpkv-bench --json` (or --json=FILE) wrote: one JSON
report (suites foundation, ycsb, sweep, ordered) or one JSON object per line
(suites gpu and slab). Prints every goal of the suites given (all by
default) as met, missed or not measured, with the values it read, and exits
1 when a measured goal is missed, 2 on a usage error, else 0.

A goal (docs/bench/targets.json, "goals"):
  id, description, suite, machine   what it is and where it applies
  rows      which rows it reads: field -> wanted value; a value is a
            string / number / bool (equal), or {"in": [...]}, {"not": v},
            {"prefix": "..."}, {"min": x}, {"max": x}
  field     the number each row gives (e.g. "mops")
  over      optional: divide by a peer row of the same run: {"rows": {...},
            "same": [fields equal to the row's], "field": ..., "scale": s}
            (the peer's field times s; s defaults to 1)
  minus     optional: subtract a peer row's field instead of dividing, with
            the same keys as "over"
  slack     optional: {"field": f, "plus": x} or {"ratio": [f, g], "plus": x}:
            the row's f (or f / g) plus x is added to the value before the
            comparison (a measurement's own precision)
  closest   optional: {"per": [fields], "prefer": {...}, "field": f, "to": x,
            "within": d}: of each group of rows equal in "per", only the row
            that matches "prefer", else the one whose f is nearest x (at
            most d away)
  pick      "each" (every row must pass; the default) or "best" (the
            largest value must pass)
  op, threshold   ">=", ">", "<=" or "<" and the number compared with

Rows: a report's "results" are rows of kind "result", its "ratios" rows of
kind "ratio", and its load-factor probes (sections.load_factor_before_first_
resize) rows of kind "load_factor_probe" with "system"; JSON lines are rows
as they are, of the suite their kind belongs to.
"""

import argparse
import json
import operator
import os
import sys

OPS = {">=": operator.ge, ">": operator.gt, "<=": operator.le, "<": operator.lt}

# The suite of each kind of JSON line (gpkv-bench --suite gpu / slab / btree).
LINE_SUITES = {
    "link": "gpu",
    "load_factor": "gpu",
    "table": "gpu",
    "open": "gpu",
    "host": "gpu",
    "slab": "slab",
    "slab_alloc": "slab",
    "btree": "btree",
}

DEFAULT_TARGETS = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "docs", "bench", "targets.json"
)


def report_rows(report):
    """The rows of one JSON report (CPU suites)."""
    suite = report.get("suite", "")
    rows = []
    for result in report.get("results", []):
        rows.append(dict(result, kind="result", suite=suite))
    for ratio in report.get("ratios", []):
        rows.append(dict(ratio, kind="ratio", suite=suite))
    probes = report.get("sections", {}).get("load_factor_before_first_resize")
    if isinstance(probes, dict):
        for system in ("gpkv", "libcuckoo"):
            if isinstance(probes.get(system), dict):
                row = dict(probes[system], kind="load_factor_probe", suite=suite, system=system)
                for name in ("expected_keys", "key_size", "value_size"):
                    row[name] = probes.get(name)
                rows.append(row)
    return rows


def read_rows(path):
    """Every row of one result file; raises ValueError when it is not JSON."""
    with open(path, encoding="utf-8") as file:
        text = file.read()
    try:
        whole = json.loads(text)
    except json.JSONDecodeError:
        whole = None
    if isinstance(whole, dict) and "results" in whole:
        return report_rows(whole)
    rows = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            raise ValueError(f"{path}:{number}: not JSON ({error})") from None
        if not isinstance(row, dict):
            raise ValueError(f"{path}:{number}: not a JSON object")
        row.setdefault("suite", LINE_SUITES.get(row.get("kind"), ""))
        rows.append(row)
    return rows


def matches(value, wanted):
    if isinstance(wanted, dict):
        if "in" in wanted:
            return value in wanted["in"]
        if "not" in wanted:
            return value != wanted["not"]
        if "prefix" in wanted:
            return isinstance(value, str) and value.startswith(wanted["prefix"])
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        if ok and "min" in wanted:
            ok = value >= wanted["min"]
        if ok and "max" in wanted:
            ok = value <= wanted["max"]
        return ok
    return value == wanted


def select(rows, suite, wanted):
    return [
        row
        for row in rows
        if row.get("suite") == suite and all(matches(row.get(k), v) for k, v in wanted.items())
    ]


def number(row, field):
    value = row.get(field)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def describe(row, fields):
    return ", ".join(f"{name} {row[name]}" for name in fields if name in row)


# The fields that name a row in the printed values.
NAMING = ("system", "mode", "table", "memory", "workload", "distribution", "batch_size",
          "batch", "callers", "keys", "key_size", "value_size", "utilisation", "name")


def closest(rows, spec):
    """Per group of rows equal in spec["per"]: the row that matches
    spec["prefer"], else the one whose spec["field"] lies nearest
    spec["to"], within spec["within"]; groups with neither give nothing."""
    groups = {}
    for row in rows:
        groups.setdefault(tuple(repr(row.get(name)) for name in spec.get("per", [])), []).append(row)
    chosen = []
    for group in groups.values():
        preferred = [r for r in group
                     if all(matches(r.get(k), v) for k, v in spec.get("prefer", {}).items())]
        if spec.get("prefer") and preferred:
            chosen.append(preferred[0])
            continue
        near = [(abs(number(r, spec["field"]) - spec["to"]), i, r)
                for i, r in enumerate(group) if number(r, spec["field"]) is not None]
        near = [n for n in near if n[0] <= spec["within"]]
        if near:
            chosen.append(min(near)[2])
    return chosen


def evaluate(goal, rows):
    """(verdict, lines): verdict is "met", "missed" or "not measured"."""
    suite = goal["suite"]
    field = goal["field"]
    peer_spec = goal.get("over") or goal.get("minus")
    values = []  # (value, text)
    candidates = select(rows, suite, goal.get("rows", {}))
    if "closest" in goal:
        candidates = closest(candidates, goal["closest"])
    for row in candidates:
        value = number(row, field)
        if value is None:
            continue
        text = f"{field} {value:g}"
        if peer_spec is not None:
            wanted = dict(peer_spec.get("rows", {}))
            for name in peer_spec.get("same", []):
                wanted[name] = row.get(name)
            peers = [p for p in select(rows, suite, wanted) if p is not row]
            peer_field = peer_spec.get("field", field)
            peer_values = [number(p, peer_field) for p in peers]
            peer_values = [v for v in peer_values if v is not None]
            if not peer_values:
                continue
            peer = peer_values[0] * peer_spec.get("scale", 1.0)
            if goal.get("over") is not None:
                if peer <= 0:
                    continue
                text += f" / {peer:g} = {value / peer:.3g}"
                value /= peer
            else:
                text += f" - {peer:g} = {value - peer:.3g}"
                value -= peer
        slack = goal.get("slack")
        if slack is not None:
            if "ratio" in slack:
                top, bottom = (number(row, name) for name in slack["ratio"])
                extra = top / bottom if top is not None and bottom else None
            else:
                extra = number(row, slack["field"])
            if extra is None:
                continue
            extra += slack.get("plus", 0.0)
            text += f" (+ {extra:.3g} slack)"
            value += extra
        values.append((value, f"{describe(row, NAMING)}: {text}"))
    if not values:
        return "not measured", []
    compare = OPS[goal["op"]]
    threshold = goal["threshold"]
    if goal.get("pick", "each") == "best":
        best = max(values, key=lambda v: v[0])
        return ("met" if compare(best[0], threshold) else "missed"), ["best: " + best[1]]
    lines = []
    met = True
    for value, text in values:
        passed = compare(value, threshold)
        met &= passed
        lines.append(text + ("" if passed else "  <- missed"))
    return ("met" if met else "missed"), lines


def main(argv):
    parser = argparse.ArgumentParser(
        description="Check gpkv-bench --json results against docs/bench/targets.json."
    )
    parser.add_argument("results", nargs="+", help="files written by gpkv-bench --json")
    parser.add_argument("--targets", default=DEFAULT_TARGETS, help="the goals (JSON)")
    parser.add_argument("--suite", action="append", help="only the goals of this suite")
    parser.add_argument("--id", action="append", help="only this goal")
    args = parser.parse_args(argv)
    try:
        with open(args.targets, encoding="utf-8") as file:
            goals = json.load(file)["goals"]
        rows = []
        for path in args.results:
            rows.extend(read_rows(path))
    except (OSError, ValueError, KeyError) as error:
        print(f"check-targets: {error}", file=sys.stderr)
        return 2
    for goal in goals:
        if goal.get("op") not in OPS:
            print(f"check-targets: goal {goal.get('id')}: op must be one of {list(OPS)}",
                  file=sys.stderr)
            return 2
    counts = {"met": 0, "missed": 0, "not measured": 0}
    for goal in goals:
        if args.suite and goal["suite"] not in args.suite:
            continue
        if args.id and goal["id"] not in args.id:
            continue
        verdict, lines = evaluate(goal, rows)
        counts[verdict] += 1
        print(f"{verdict:12}  {goal['id']}: {goal['description']} "
              f"[{goal['field']}{' ratio' if 'over' in goal else ''} {goal['op']} "
              f"{goal['threshold']:g}; {goal['machine']}]")
        for line in lines:
            print(f"              {line}")
    print(f"\n{counts['met']} met, {counts['missed']} missed, "
          f"{counts['not measured']} not measured")
    return 1 if counts["missed"] > 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
