#!/usr/bin/env python3
"""ARCHITECTURE.md's file map against the tree (make lint).

Each of the sections "## client/: ...", "## cache/: ...", "## ext/: ..." and
"## api/: ..." names the files of its folder in backquotes, bare (`read.c`)
or with a path (`cache/read.c`).  Every file git knows in the folder must be
named in its section, and every bare name a section gives (a word ending in
.c, .h, .md or .map) must be a file of the folder (or, with a path, a file of
the tree).  Prints one line a difference; exits 1 when there is one.

  tools/filemap.py [ARCHITECTURE.md]
  tools/filemap.py --selftest
"""
import os
import re
import subprocess
import sys

FOLDERS = ("client", "cache", "ext", "api")
NAME_RE = re.compile(r"`([A-Za-z0-9_./-]+\.(?:c|h|md|map|in))`")


def sections(text):
    """{folder: the text of its section} for the FOLDERS' '## f/:' headings."""
    out = {}
    cur = None
    for line in text.splitlines():
        m = re.match(r"## ([a-z]+)/:", line)
        if m:
            cur = m.group(1) if m.group(1) in FOLDERS else None
            if cur:
                out[cur] = ""
            continue
        if line.startswith("## "):
            cur = None
        elif cur:
            out[cur] += line + "\n"
    return out


def check(text, files):
    """The differences between the map in text and files (paths, as git
    ls-files gives them), one message each."""
    errs = []
    secs = sections(text)
    for f in FOLDERS:
        if f not in secs:
            errs.append("no section '## %s/:' in the file map" % f)
            continue
        named = set()
        for n in NAME_RE.findall(secs[f]):
            path = n if "/" in n else f + "/" + n
            if path not in files:
                if "/" not in n:
                    errs.append("%s: the map names %s, which is not in the tree"
                                % (f, path))
                continue
            named.add(path)
        for path in sorted(files):
            if path.startswith(f + "/") and path.count("/") == 1 \
                    and path not in named:
                errs.append("%s: %s is not in the file map" % (f, path))
    return errs


def selftest():
    text = ("## client/: x\n* `a.c`: one. `cache/b.c` too.\n"
            "## cache/: y\n* `b.c`, `gone.c`\n## ext/: z\n* `e.c`\n"
            "## api/: w\n* `d.h`\n## Other\n`c.c`\n")
    files = {"client/a.c", "client/new.c", "cache/b.c", "ext/e.c",
             "api/d.h"}
    got = check(text, files)
    want = ["client: client/new.c is not in the file map",
            "cache: the map names cache/gone.c, which is not in the tree"]
    if got != want:
        print("selftest failed: %r" % got)
        return 1
    if check(text.replace("`gone.c`", "`new.c`").replace(
            "`a.c`", "`a.c`, `new.c`"), files) != [
            "cache: the map names cache/new.c, which is not in the tree"]:
        print("selftest failed on the second map")
        return 1
    print("selftest: ok")
    return 0


def main(argv):
    if argv[1:] == ["--selftest"]:
        return selftest()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = argv[1] if len(argv) > 1 else os.path.join(root, "ARCHITECTURE.md")
    files = set(subprocess.run(["git", "ls-files"] + list(FOLDERS), cwd=root,
                               capture_output=True, text=True,
                               check=True).stdout.split())
    with open(path, encoding="utf-8") as fh:
        errs = check(fh.read(), files)
    for e in errs:
        print("filemap: " + e)
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
