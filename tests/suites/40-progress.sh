#!/usr/bin/env bash
# The progress line: shown on stderr only when it is a terminal, after
# DYNAMODB_PROGRESS_AFTER seconds (0 here, so that a short scan shows it),
# cleared before the result; never with progress=off or without a terminal.
# Then the line a costly statement ends with, and max_rcu's waits.
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
# The line at a statement's end (stmt.c): on a terminal, after a
# statement over DYNAMODB_PROGRESS_AFTER seconds or 100 requests, or
# answered from a cache entry that old; never with progress=off or
# without a terminal.
run_tty_sql() { # $1: vtab options, $2..: statements; under a terminal
  local opts="$1"; shift
  local args=("'.load $EXT'" "'CREATE VIRTUAL TABLE t USING dynamodb(table=Prog040$opts)'")
  local a
  for a in "$@"; do args+=("'$a'"); done
  script -qec "${SQLITE3:-sqlite3} :memory: ${args[*]}" /dev/null 2>&1 | cat -v
}

out=$(DYNAMODB_PROGRESS_AFTER=0 run_tty_sql ", query_ttl=0" "SELECT count(*) FROM t")
if echo "$out" | grep -q '600^M$' && echo "$out" | grep -q '^dynamodb: Scan x8, [0-9.]* RCU, [0-9.]* s^M$' &&
   [ "$(echo "$out" | grep -n 'Scan x8' | cut -d: -f1)" -gt "$(echo "$out" | grep -n '600^M$' | cut -d: -f1)" ]; then
  ok "a statement over DYNAMODB_PROGRESS_AFTER ends with its line, after the result"
else
  notok "a statement over DYNAMODB_PROGRESS_AFTER ends with its line, after the result" "$out"
fi

out=$(run_tty_sql ", item_ttl=0, query_ttl=0" \
  "SELECT count(*) FROM t a JOIN t b ON b.PK = a.PK AND b.SK = a.SK WHERE a.PK = \"P#big\" AND a.SK < \"S#00150\"")
if echo "$out" | grep -q '^dynamodb: GetItem x150, Query, [0-9.]* RCU, [0-9.]* s^M$'; then
  ok "over 100 requests: the line, however short the statement"
else
  notok "over 100 requests: the line, however short the statement" "$out"
fi

out=$(DYNAMODB_PROGRESS_AFTER=0 run_tty_sql "" "SELECT count(*) FROM t" "SELECT count(*) FROM t")
if echo "$out" | grep -q '^dynamodb: answered from the cache, [0-9]* s old^M$'; then
  ok "an answer from the cache says so, with its age"
else
  notok "an answer from the cache says so, with its age" "$out"
fi

out=$(DYNAMODB_PROGRESS_AFTER=0 run_tty_sql ", query_ttl=0, progress=off" "SELECT count(*) FROM t")
out2=$(DYNAMODB_PROGRESS_AFTER=0 "${SQLITE3:-sqlite3}" :memory: ".load $EXT" \
  "CREATE VIRTUAL TABLE t USING dynamodb(table=Prog040, query_ttl=0)" \
  "SELECT count(*) FROM t" 2>&1)
if echo "$out" | grep -q 'dynamodb:' || [ "$out2" != "600" ]; then
  notok "no statement line with progress=off, nor without a terminal" "$out" "$out2"
else
  ok "no statement line with progress=off, nor without a terminal"
fi

# max_rcu: at 0.01 units a second, of the two Queries of an IN list the
# second waits (about 50 s) after the first consumed half a unit; the
# progress line, drawn again while the statement waits, says so, and a
# Ctrl-C ends the wait.  A pseudo-terminal (python's pty) types the Ctrl-C
# once the line shows: nothing is timed.
python3 tests/harness/fixtures.py lesson Prog040w >/dev/null || notok "fixtures Prog040w"
out=$(DYNAMODB_PROGRESS_AFTER=0 python3 - "${SQLITE3:-sqlite3}" "$EXT" <<'PY'
import os, pty, select, sys, time
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], [sys.argv[1], ":memory:", ".load " + sys.argv[2],
        "CREATE VIRTUAL TABLE w USING dynamodb(table=Prog040w, query_ttl=0, max_rcu=0.01)",
        "SELECT count(*) FROM w WHERE PK IN ('CUSTOMER#alice', 'CUSTOMER#bob')"])
out, sent, end = b"", False, time.time() + 60
while time.time() < end:
    r, _, _ = select.select([fd], [], [], 0.1)
    if r:
        try:
            data = os.read(fd, 4096)
        except OSError:
            break
        if not data:
            break
        out += data
    if not sent and b"waiting for max_rcu/max_wcu" in out:
        os.write(fd, b"\x03")
        sent = True
os.waitpid(pid, 0)
sys.stdout.write(out.decode(errors="replace").replace("\x1b", "^["))
PY
)
if echo "$out" | grep -q 'waiting for max_rcu/max_wcu' && echo "$out" | grep -q 'interrupted'; then
  ok "max_rcu: the progress line says the statement waits; Ctrl-C ends the wait"
else
  notok "max_rcu: the progress line says the statement waits; Ctrl-C ends the wait" "$out"
fi
python3 tests/harness/fixtures.py drop Prog040w >/dev/null 2>&1
python3 tests/harness/fixtures.py drop Prog040 >/dev/null 2>&1
echo "1..$n"
