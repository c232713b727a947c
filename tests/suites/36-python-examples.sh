#!/usr/bin/env bash
# examples/python/ as docs/python.md says to run them: Debian's
# /usr/bin/python3 (its sqlite3 module can load extensions) on the
# e-commerce example; each program's standard output against its
# examples/python/*.expected.  report.py also runs the way the page shows
# it, from `make shell` (tools/shell.sh) with `.shell`.  pandas_report.py
# runs where that python has pandas (python3-pandas), and is a SKIP line
# where it has not.  TAP lines.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT" || exit 1
: "${AWS_ENDPOINT_URL_DYNAMODB:?run from tests/harness/run-all.sh}"
PY=/usr/bin/python3
N=0
ok() { N=$((N + 1)); echo "ok $N - python examples: $*"; }
not_ok() { N=$((N + 1)); echo "not ok $N - python examples: $*"; }
if ! "$PY" -c 'import sqlite3; sqlite3.connect(":memory:").enable_load_extension(True)' 2>/dev/null; then
    echo "ok 1 - python examples: # SKIP $PY cannot load SQLite extensions"
    echo "1..1"
    exit 0
fi
# an ASan-built extension (make test SANITIZE=1) needs the ASan runtime
# first in python too, as tests/suites/50-python.sh does
. tests/harness/sanitize.sh
san_export
TABLE="PyEx036_$$"
TMP="$(mktemp -d "$ROOT/.test-tmp/pyex.XXXXXX")"
trap 'python3 tests/harness/fixtures.py drop "$TABLE" >/dev/null 2>&1; rm -rf "$TMP"' EXIT
if ! python3 tests/harness/fixtures.py ecommerce "$TABLE" >"$TMP/log" 2>&1; then
    not_ok "the e-commerce example loaded into $TABLE"
    sed 's/^/#   /' "$TMP/log"
    echo "1..$N"
    exit 1
fi

# compare NAME OUTFILE: OUTFILE against examples/python/NAME.expected
compare() {
    if diff -u "examples/python/$1.expected" "$2" >"$TMP/diff"; then
        return 0
    fi
    head -40 "$TMP/diff" | sed 's/^/#   /'
    return 1
}

for ex in report transactions; do
    if "$PY" "examples/python/$ex.py" "$TABLE" >"$TMP/$ex.out" 2>"$TMP/$ex.err" &&
       [ ! -s "$TMP/$ex.err" ] && compare "$ex" "$TMP/$ex.out"; then
        ok "$PY examples/python/$ex.py: output as $ex.expected"
    else
        not_ok "$PY examples/python/$ex.py: output as $ex.expected"
        sed 's/^/#   stderr: /' "$TMP/$ex.err" | head -10
    fi
done

# transactions.py leaves the table as it found it
got="$(python3 tests/harness/fixtures.py get "$TABLE" PK=CATEGORY#books SK=PRODUCT#ulysses 2>&1)"
n="$(python3 tests/harness/fixtures.py count "$TABLE" 2>&1)"
if [ "$got" = "(no item)" ] && [ "$n" = 21 ]; then
    ok "transactions.py leaves the table as it found it (21 items)"
else
    not_ok "transactions.py leaves the table as it found it: $got; $n items"
fi

if "$PY" -c 'import pandas' 2>/dev/null; then
    if "$PY" examples/python/pandas_report.py "$TABLE" >"$TMP/pd.out" 2>"$TMP/pd.err" &&
       compare pandas_report "$TMP/pd.out"; then
        ok "$PY examples/python/pandas_report.py: output as pandas_report.expected"
    else
        not_ok "$PY examples/python/pandas_report.py: output as pandas_report.expected"
        sed 's/^/#   stderr: /' "$TMP/pd.err" | head -10
    fi
else
    ok "examples/python/pandas_report.py # SKIP $PY has no pandas (apt-get install python3-pandas)"
fi

# from make shell, as docs/python.md shows: .shell hands the program the
# shell's endpoint and credentials (its own DynamoDB Local, table Store)
printf '.shell %s examples/python/report.py\n' "$PY" |
    tools/shell.sh >"$TMP/shell.out" 2>"$TMP/shell.err"
if compare report "$TMP/shell.out"; then
    ok "make shell: .shell $PY examples/python/report.py"
else
    not_ok "make shell: .shell $PY examples/python/report.py"
    sed 's/^/#   stderr: /' "$TMP/shell.err" | head -10
fi
echo "1..$N"
