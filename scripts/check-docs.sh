#!/usr/bin/env bash
# Checks the documentation and the product text; exits non-zero on a finding.
#  (a) Dangling references in README.md, CHANGELOG.md and docs/**/*.md: a
#      relative Markdown link, or a backquoted repository path such as
#      `tables/lsm/layout.h` or `data/run.json` (relative to the page or to
#      the root; globs must match something), that names nothing; and, in
#      any text file of the repository, a cited NAME.md that it does not hold.
#  (b) Project history in product text (README.md, docs/*.md, and the sources
#      under include/ tools/ bench/ tables/ engine/ pm/ gpu/ util/ recovery/
#      format/): an issue number ("issue #5", "#14's") or "the lead".
#      docs/bench/*.md are dated records: they may name runs, not dangle.
#  (c) Raw data nobody reads: a file under docs/bench/data/ that no page of
#      docs/ (nor README.md, nor the plots' list data/plots.json) names, by
#      its name or by a pattern (`data/x-run*`, `data/x-run{1,2}-*`,
#      `data/x-run<N>-*`).
# Prints one line per finding (FILE:LINE: what). Run from anywhere:
#   bash scripts/check-docs.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
exec python3 - <<'PY'
import glob
import os
import re
import subprocess
import sys

try:
    files = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        check=True, capture_output=True, text=True).stdout.split("\n")
    files = sorted(f for f in files if f and os.path.isfile(f))
except (OSError, subprocess.CalledProcessError):
    files = sorted(os.path.relpath(os.path.join(d, n)) for d, _, ns in os.walk(".")
                   if "/build" not in d and "/.git" not in d for n in ns)
basenames = {os.path.basename(f) for f in files}
top_level = {f.split("/")[0] for f in files}

docs = [f for f in files if f in ("README.md", "CHANGELOG.md")
        or (f.startswith("docs/") and f.endswith(".md"))]
source_dirs = ("include", "tools", "bench", "tables", "engine", "pm", "gpu",
               "util", "recovery", "format")
source_ext = (".h", ".cc", ".cu", ".cuh", ".py", ".sh", ".txt", ".cmake")
sources = [f for f in files if f.split("/")[0] in source_dirs and f.endswith(source_ext)]
product = [f for f in docs if f.count("/") <= 1 and f != "CHANGELOG.md"] + sources
# Every text file may cite only documents the repository holds.
texts = [f for f in files if f.endswith(source_ext + (".md", ".in"))
         or os.path.basename(f) in ("CMakeLists.txt", "run")]
texts = [f for f in texts if f != "scripts/check-docs.sh"]

findings = []


def report(path, lineno, what):
    findings.append(f"{path}:{lineno}: {what}")


def exists(base_dir, target):
    """Whether `target` names a file or folder (globs: matches one)."""
    candidates = [os.path.normpath(os.path.join(base_dir, target))]
    if "*" in target or "?" in target:
        return any(glob.glob(c) for c in candidates)
    return any(os.path.exists(c) for c in candidates)


LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
CODE = re.compile(r"`([^`\n]+)`")
PATHLIKE = re.compile(r"^[\w.\-/*]+$")
DOC_NAME = re.compile(r"(?<![\w/.-])([A-Za-z][\w-]*\.md)\b")


def check_path_token(md, lineno, token):
    token = re.sub(r":\d+(-\d+)?$", "", token)  # file:line, file:12-40
    token = token.rstrip(".,;")
    if (not PATHLIKE.match(token) or token.startswith(("/", ".", "-"))
            or "//" in token):
        return
    here = os.path.dirname(md)
    first = token.split("/")[0]
    if "/" in token:
        if first in top_level:
            if not exists(".", token):
                report(md, lineno, f"`{token}` names no file of the repository")
        elif here and os.path.exists(os.path.join(here, first)):
            if not exists(here, token):
                report(md, lineno, f"`{token}` names no file beside {md}")
    elif "*" not in token and re.search(r"\.(md|h|cc|cu|cuh|py|sh|json|csv|txt|png|cmake)$", token):
        if not (exists(here, token) or exists(".", token) or token in basenames):
            report(md, lineno, f"`{token}` names no file of the repository")


for md in docs:
    here = os.path.dirname(md)
    fenced = False
    with open(md, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if line.lstrip().startswith("```"):
                fenced = not fenced
                continue
            if fenced:
                continue
            for target in LINK.findall(line):
                if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
                    continue
                path = target.split("#")[0]
                if path and not exists(here, path):
                    report(md, lineno, f"link ({target}) names no file")
            for code in CODE.findall(line):
                check_path_token(md, lineno, code.strip())

HISTORY = [
    (re.compile(r"\bissues?\s*#?\d+", re.I), "an issue number"),
    (re.compile(r"(?<![\w&])#\d{1,4}\b"), "an issue number"),
    (re.compile(r"\bthe lead\b(?!er)", re.I), "\"the lead\""),
]
for path in sorted(set(texts)):
    with open(path, encoding="utf-8", errors="replace") as f:
        for lineno, line in enumerate(f, 1):
            for name in DOC_NAME.findall(line):
                if name not in basenames:
                    report(path, lineno, f"cites {name}, which the repository does not hold")
            if path in product:
                for pattern, what in HISTORY:
                    match = pattern.search(line)
                    if match:
                        report(path, lineno, f"{what} in product text: {match.group(0)!r}")
                        break

import fnmatch


def expand_braces(pattern):
    match = re.search(r"\{([^{}]*)\}", pattern)
    if not match:
        return [pattern]
    head, tail = pattern[:match.start()], pattern[match.end():]
    return [out for part in match.group(1).split(",") for out in expand_braces(head + part + tail)]


data_dir = "docs/bench/data"
data_files = [f for f in files if f.startswith(data_dir + "/") and f.count("/") == 3]
patterns = set()
for page in [f for f in files if f == "README.md" or (f.startswith("docs/") and f.endswith(".md"))]:
    with open(page, encoding="utf-8") as f:
        for token in re.findall(r"data/([\w.*?\[\]{},<>\-]+)", f.read()):
            token = re.sub(r"<[^>]*>", "*", token.rstrip(".,;"))
            patterns.update(expand_braces(token))
plots = os.path.join(data_dir, "plots.json")
if os.path.exists(plots):
    with open(plots, encoding="utf-8") as f:
        patterns.update(re.findall(r'"([\w.\-]+\.(?:json|jsonl|txt))"', f.read()))
for path in data_files:
    name = os.path.basename(path)
    if name != "plots.json" and not any(fnmatch.fnmatch(name, p) for p in patterns):
        report(path, 1, "raw data that no page of docs/ names")

for finding in findings:
    print(finding)
if findings:
    print(f"check-docs: {len(findings)} finding(s)", file=sys.stderr)
    sys.exit(1)
print("check-docs: no dangling reference, no issue number in product text, no unnamed raw data")
PY
