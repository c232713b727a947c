#!/usr/bin/env bash
# The progress line: shown on stderr only when it is a terminal, after
# DYNAMODB_PROGRESS_AFTER seconds (0 here, so that a short scan shows it),
# cleared before the result; never with progress=off or without a terminal.
# `script` gives sqlite3 a terminal.  TAP output.
set -u
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT" || exit 1
: "${AWS_ENDPOINT_URL_DYNAMODB:?run from tests/harness/run-all.sh}"
n=0
ok() { n=$((n + 1)); echo "ok $n - progress: $1"; }
notok() { n=$((n + 1)); echo "not ok $n - progress: $1"; shift; for l in "$@"; do echo "#   $l"; done; }

python3 tests/harness/fixtures.py bulk Prog040 600 1000 >/dev/null || { echo "not ok 1 - progress: fixtures"; exit 0; }
EXT="${DDB_EXT:-build/dynamodb}"
run_tty() { # $1: vtab options; output of sqlite3 under a terminal, with escapes visible
  DYNAMODB_PROGRESS_AFTER=0 script -qec "${SQLITE3:-sqlite3} :memory: '.load $EXT' \
    'CREATE VIRTUAL TABLE t USING dynamodb(table=Prog040, query_ttl=0$1)' \
    'SELECT count(*) FROM t'" /dev/null 2>&1 | cat -v
}

out=$(run_tty "")
if echo "$out" | grep -q 'items, [0-9]* pages, .* RCU' && echo "$out" | grep -q '\^\[\[K600'; then
  ok "a line on a terminal, cleared before the result"
else
  notok "a line on a terminal, cleared before the result" "$out"
fi

out=$(run_tty ", progress=off")
if echo "$out" | grep -q 'pages'; then
  notok "progress=off shows nothing" "$out"
else
  ok "progress=off shows nothing"
fi

out=$(DYNAMODB_PROGRESS_AFTER=0 "${SQLITE3:-sqlite3}" :memory: ".load $EXT" \
  "CREATE VIRTUAL TABLE t USING dynamodb(table=Prog040, query_ttl=0)" \
  "SELECT count(*) FROM t" 2>&1)
if [ "$out" = "600" ]; then
  ok "nothing when stderr is not a terminal"
else
  notok "nothing when stderr is not a terminal" "$out"
fi
python3 tests/harness/fixtures.py drop Prog040 >/dev/null 2>&1
echo "1..$n"
