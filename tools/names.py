#!/usr/bin/env python3
"""One identifier style a folder (make lint, tools/lint.sh): client/ and
cache/ are snake_case, as curl and memcached; ext/ keeps SQLite's style
(pCur, zName, nKey) and is not checked.

    tools/names.py FILE...     print FILE:LINE: NAME for each identifier
                               in code in camelCase or SQLite's Hungarian
                               (a lower-case head, then a capital: bStop,
                               nQCap, aJob), exit 1 if there is any
    tools/names.py --selftest  check the checker on known lines

Comments and literals are blanked first (tools/banned.py's blank), so
"#fI" in a format string or kDate in a comment are not names.  The
libraries' own names are allowed: cJSON's (cJSON_*).
"""
import os
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ in tools/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from banned import blank  # noqa: E402

NAME = re.compile(r"(?<![A-Za-z0-9_])([a-z][a-z0-9]*[A-Z][A-Za-z0-9_]*)")
ALLOWED = re.compile(r"^cJSON")


def findings(src):
    """(line, name) for each identifier of src not in snake_case."""
    code = blank(src)
    for m in NAME.finditer(code):
        if not ALLOWED.match(m.group(1)):
            yield code.count("\n", 0, m.start()) + 1, m.group(1)


def selftest():
    cases = [
        ("int bStop = 0;\n", [(1, "bStop")]),
        ("int n_held; /* nHeld */\n", []),
        ('ddb_buf_addf(b, "#f%d", i); cJSON_Delete(x);\n', []),
        ("s->nQCap = 2;\nx.aJob[i] = 0;\n", [(1, "nQCap"), (2, "aJob")]),
        ("HASH_FIND(hh, map, k, n, bk); EVP_MAC_CTX *m;\n", []),
    ]
    bad = 0
    for src, want in cases:
        got = list(findings(src))
        if got != want:
            print("selftest: %r: got %r, want %r" % (src, got, want))
            bad = 1
    return bad


def main(argv):
    if argv[1:] == ["--selftest"]:
        return selftest()
    bad = 0
    for path in argv[1:]:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line, name in findings(f.read()):
                print("%s:%d: %s" % (path, line, name))
                bad = 1
    return bad


if __name__ == "__main__":
    sys.exit(main(sys.argv))
