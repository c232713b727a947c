#!/usr/bin/env python3
"""The CSV recipe as the pages write it is the one test-sql/072_import.test
runs: the SQL block of README.md and of docs/import.md that starts with
`.import --csv --schema temp` must be, statement for statement, the
statements of examples/import/import.sql (the README's may stop before the
DROP TABLE).  Prints one line: "recipe: same in README.md, docs/import.md"
or what differs."""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def statements(text):
    """The recipe's statements: comments dropped, whitespace collapsed."""
    lines = [l for l in text.splitlines() if not l.lstrip().startswith("--")]
    out, cur = [], []
    for l in lines:
        if l.startswith("."):
            out.append(" ".join(l.split()))
            continue
        cur.append(l)
        if l.rstrip().endswith(";"):
            out.append(" ".join(" ".join(cur).split()))
            cur = []
    return [s for s in out if s]


def block(path):
    text = open(os.path.join(ROOT, path)).read()
    for m in re.finditer(r"```sql\n(.*?)```", text, re.S):
        if m.group(1).startswith(".import --csv --schema temp"):
            return statements(m.group(1))
    return None


want = statements(open(os.path.join(ROOT, "examples/import/import.sql")).read())
bad = []
for page in ("README.md", "docs/import.md"):
    got = block(page)
    if got is None:
        bad.append("%s: no recipe block" % page)
    elif got != want[: len(got)] or len(got) < len(want) - 1:
        bad.append("%s: %r != %r" % (page, got, want))
print("recipe: " + ("; ".join(bad) if bad else "same in README.md, docs/import.md"))
sys.exit(1 if bad else 0)
