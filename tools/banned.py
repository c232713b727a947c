#!/usr/bin/env python3
"""Banned C calls, as in curl's checksrc (make lint, tools/lint.sh).

    tools/banned.py FILE...     print FILE:LINE: NAME for each banned call,
                                exit 1 if there is any
    tools/banned.py --selftest  check the checker on known lines

A call is a banned name followed by "(" in code: comments and string and
character literals are blanked first (keeping line numbers), so a call on a
line that also has a comment is found, and a name inside a comment or a
string is not.  The earlier grep skipped every line holding "/* ... */".
"""
import re
import sys

BANNED = ("atoi", "atol", "atoll", "strcpy", "strcat", "sprintf", "vsprintf",
          "strtok", "gets", "strncpy", "localtime", "gmtime", "rand")
CALL = re.compile(r"(?<![A-Za-z0-9_])(%s)\s*\(" % "|".join(BANNED))


def blank(src):
    """src with comments and literals replaced by spaces (newlines kept)."""
    out = []
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        elif src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and src[j] != c and src[j] != "\n":
                j += 2 if src[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + re.sub(r"[^\n]", " ", src[i + 1:j - 1]) + c)
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def findings(src):
    """(line, name) for each banned call in the C text src."""
    code = blank(src)
    for m in CALL.finditer(code):
        yield code.count("\n", 0, m.start()) + 1, m.group(1)


def selftest():
    cases = [
        ("n = atoi(s); /* parse */\n", [(1, "atoi")]),
        ("/* atoi(s) */ x = 1;\n", []),
        ("// sprintf(buf, ...)\n", []),
        ('puts("strcpy(a, b)");\n', []),
        ("x = my_atoi(s);\n", []),
        ("char c = '\"'; strcat(a, b);\n", [(1, "strcat")]),
        ("/* a\n   b */\ngmtime (&t); // now\n", [(3, "gmtime")]),
        ('s = "\\" sprintf("; rand();\n', [(1, "rand")]),
    ]
    bad = 0
    for src, want in cases:
        got = list(findings(src))
        if got != want:
            bad += 1
            print("banned.py selftest: %r: got %r, want %r" % (src, got, want))
    print("banned.py selftest: %d of %d cases right" % (len(cases) - bad,
                                                        len(cases)))
    return 1 if bad else 0


def main(argv):
    if argv[1:] == ["--selftest"]:
        return selftest()
    rc = 0
    for path in argv[1:]:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line, name in findings(f.read()):
                print("%s:%d: %s" % (path, line, name))
                rc = 1
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv))
