#!/usr/bin/env python3
"""Functions longer than a bound, longest first (the aim: every function
outside tests under about 80 lines, an entry point an outline of phases).

    tools/funclen.py [LINES] [FILE...]

LINES defaults to 80; the files to client/, cache/, ext/ and api/'s *.c.
Prints "LINES FILE FUNCTION" for each function with more lines than the
bound, from the line of its opening brace to its closing one.  A
function is a top-level '{' on a line with ')' that is not a control
statement; strings, character literals and one-line comments are blanked
before braces are counted.  Informational: make lint prints it and never
fails on it.  Exits 0.
"""
import glob
import re
import sys


def functions(path):
    """(lines, name) of each function of path."""
    lines = open(path, encoding="utf-8", errors="replace").read().split("\n")
    out = []
    depth, start, sig = 0, None, ""
    for i, line in enumerate(lines):
        s = re.sub(r'"(\\.|[^"\\])*"', '""', line)
        s = re.sub(r"'(\\.|[^'\\])*'", "''", s)
        s = re.sub(r"/\*.*?\*/", "", s)
        if (depth == 0 and s.rstrip().endswith("{") and ")" in s and
                not s.lstrip().startswith(("if", "for", "while", "switch"))):
            start = i
            k = i
            while (k > 0 and lines[k - 1].strip() and
                   not lines[k - 1].rstrip().endswith((";", "}", "*/"))):
                k -= 1
            sig = " ".join(lines[k:i + 1])
        depth += s.count("{") - s.count("}")
        if depth == 0 and start is not None and "}" in s:
            names = re.findall(r"(\w+)\s*\(", sig)
            out.append((i - start + 1, names[0] if names else "?"))
            start = None
    return out


def main(argv):
    bound = int(argv[1]) if len(argv) > 1 else 80
    files = argv[2:] or sorted(
        glob.glob("client/*.c") + glob.glob("cache/*.c") +
        glob.glob("ext/*.c") + glob.glob("api/*.c"))
    found = []
    for f in files:
        for n, name in functions(f):
            if n > bound:
                found.append((n, f, name))
    for n, f, name in sorted(found, reverse=True):
        print(n, f, name)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
