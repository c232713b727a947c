#!/usr/bin/env bash
# A server without TransactWriteItems (tests/faults/proxy.py answers it
# UnknownOperationException with no message, as dynalite does; every other
# request goes through): a failed COMMIT says "the server has no
# TransactWriteItems" on every path (before, a COMMIT of more
# than 100 writes, and one whose BatchWriteItem calls went, said only
# "UnknownOperationException: (no message)"), and what it says was written
# is what boto3 finds.  Holds on dynalite too (there the server itself
# refuses).  TAP output.
set -u
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT" || exit 1
: "${AWS_ENDPOINT_URL_DYNAMODB:?run from tests/harness/run-all.sh}"
export AWS_EC2_METADATA_DISABLED=true
n=0
ok() { n=$((n + 1)); echo "ok $n - no TransactWriteItems: $1"; }
notok() { n=$((n + 1)); echo "not ok $n - no TransactWriteItems: $1"; shift; for l in "$@"; do echo "#   $l"; done; }
EXT="${DDB_EXT:-build/dynamodb}"
TABLE=NoTx057

python3 tests/txn/check.py create "$TABLE" >/dev/null ||
  { echo "not ok 1 - no TransactWriteItems: setup of $TABLE"; echo "1..1"; exit 0; }
coproc PROXY { exec python3 tests/faults/proxy.py --upstream "$AWS_ENDPOINT_URL_DYNAMODB"; }
read -r port <&"${PROXY[0]}"
trap 'kill "$PROXY_PID" 2>/dev/null; python3 tests/harness/fixtures.py drop "$TABLE" >/dev/null 2>&1' EXIT
python3 - "$port" <<'PY'
import json, sys, urllib.request
req = urllib.request.Request(
    "http://127.0.0.1:%s/__control" % sys.argv[1], method="POST",
    data=json.dumps({"fault": "unknownop", "mode": "always",
                     "ops": ["TransactWriteItems"]}).encode())
urllib.request.urlopen(req).read()
PY

# run SQL...: the statements in a fresh shell on the proxied table t (whose
# first COMMIT of several writes finds out the server's lack)
run() {
  { echo ".load $EXT"
    printf '%s;\n' \
      "CREATE VIRTUAL TABLE t USING dynamodb(table=$TABLE, endpoint='http://127.0.0.1:$port', progress=off)" \
      "CREATE TEMP TABLE src(v)" \
      "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 199) INSERT INTO src SELECT i FROM n" \
      "$@"
  } | "${SQLITE3:-sqlite3}" :memory: 2>&1
}
# commit SQL...: the statements in one BEGIN ... COMMIT of run
commit() { run "BEGIN" "$@" "COMMIT"; }
count() { python3 tests/txn/check.py part "$TABLE" "$1" | grep -c .; }
NO="the server has no TransactWriteItems (UnknownOperationException)"

# 150 INSERTs: cut into calls, the first one sent alone finds the lack
out=$(commit "INSERT INTO t(PK, SK) SELECT 'A', printf('%03d', v) FROM src WHERE v < 150")
got=$(count A)
if [ "$out" = "Runtime error near line 7: dynamodb: COMMIT: nothing written: $NO" ] &&
   [ "$got" = 0 ]; then
  ok "a COMMIT of 150 INSERTs: nothing written, the server has no TransactWriteItems"
else
  notok "a COMMIT of 150 INSERTs: nothing written, the server has no TransactWriteItems" \
    "$out" "boto3 finds $got of partition A"
fi

# once the lack is known (a first COMMIT of 2 writes failed), 120
# REPLACEs (BatchWriteItem, which the server has) and 2 INSERTs (a
# TransactWriteItems) go at once: the transaction cannot be applied; the
# batches that started before its failure are.  The TransactWriteItems is
# the plan's first call, which the proxy refuses at once, so whether any
# batch started first is a race between the worker threads (write_calls=1:
# none ever does): either some went ("failed part way") or none ("nothing
# written"), and what the error says must be what boto3 finds
out=$(run "BEGIN" "INSERT INTO t(PK, SK) VALUES ('C0', '1'), ('C0', '2')" "COMMIT" \
          "BEGIN" \
          "INSERT OR REPLACE INTO t(PK, SK) SELECT 'B', printf('%03d', v) FROM src WHERE v < 120" \
          "INSERT INTO t(PK, SK) VALUES ('C', '1'), ('C', '2')" "COMMIT" | tail -n 1)
b=$(count B)
c=$(count C)
# the writes it says were applied ("writes 3-52 applied", "write 7
# applied"; the calls go 8 at a time, so which of them went before the
# failure varies), against what boto3 finds
said=$(printf '%s\n' "$out" | grep -oE 'writes? [0-9]+(-[0-9]+)? applied' |
       awk '{ split($2, r, "-"); n += (r[2] == "" ? 1 : r[2] - r[1] + 1) } END { print n + 0 }')
case "$out" in
  *"COMMIT failed part way"*"writes 1-2 not applied (PK='C', SK='1'; PK='C', SK='2')"*"(TransactWriteItems): $NO")
    [ "$b" -gt 0 ] && good=1 || good=0 ;;
  *": COMMIT: nothing written: $NO") [ "$b" = 0 ] && good=1 || good=0 ;;
  *) good=0 ;;
esac
if [ "$good" = 1 ] && [ "$said" = "$b" ] && [ "$c" = 0 ]; then
  ok "a COMMIT of 120 REPLACEs and 2 INSERTs: $b REPLACEs applied, the INSERTs not, as said: the server has no TransactWriteItems"
else
  notok "a COMMIT of 120 REPLACEs and 2 INSERTs: REPLACEs applied, the INSERTs not, as said: the server has no TransactWriteItems" \
    "$out" "it says $said applied; boto3 finds $b of partition B, $c of C"
fi

# 2 INSERTs: one TransactWriteItems (this path said it before)
out=$(commit "INSERT INTO t(PK, SK) VALUES ('D', '1'), ('D', '2')")
got=$(count D)
case "$out" in
  *"COMMIT: nothing written: the server has no TransactWriteItems (UnknownOperationException), which a transaction of 2 writes needs") good=1 ;;
  *) good=0 ;;
esac
if [ "$good" = 1 ] && [ "$got" = 0 ]; then
  ok "a COMMIT of 2 INSERTs: nothing written, the server has no TransactWriteItems"
else
  notok "a COMMIT of 2 INSERTs: nothing written, the server has no TransactWriteItems" \
    "$out" "boto3 finds $got of partition D"
fi
echo "1..$n"
