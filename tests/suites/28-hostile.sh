#!/usr/bin/env bash
# A broken or hostile endpoint (README: Trust model, "A broken or hostile
# endpoint").  TAP lines.  tests/trust/hostile_check.py drives the sqlite3
# shell through tests/trust/hostile_proxy.py (tests/faults/proxy.py in
# front of DynamoDB Local, with the answers of a lying server):
#   * pages that cost more than any DynamoDB page (60 MB, 1.9 M items, 96 MB
#     decoded) on 1 and 4 segments: an error naming the bound, and the
#     shell's peak RSS within the README's (a page past 32 MB of text,
#     chunked or not: one page's text and 2 MB a segment)
#   * LastEvaluatedKeys that never end, or that no correct server sends:
#     an error in bounded requests; a correct server's reads pass
#   * ListTables pages that never end (dynamodb_tables): an error in
#     bounded requests
#   * server error text with escape sequences and 100 KB: escaped and cut
#   * a negative or inconsistent Count; a BatchGetItem answer with keys not
#     asked for: errors, never a count
#   * a byte that is no UTF-8 in an answer (GetItem, Query, Scan,
#     BatchGetItem, UpdateItem): retried, never a row or a cache entry
#   * a clock an hour behind the server's: one retry, then right first time
# Loopback only: the proxy listens on 127.0.0.1 and forwards to
# AWS_ENDPOINT_URL_DYNAMODB.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT" || exit 1
: "${AWS_ENDPOINT_URL_DYNAMODB:?run from tests/harness/run-all.sh}"
export AWS_EC2_METADATA_DISABLED=true
TABLE=Hostile028
TMP="$ROOT/.test-tmp/hostile"
mkdir -p "$TMP"

if ! python3 tests/trust/oracle.py setup "$TABLE" >"$TMP/setup.log" 2>&1; then
  echo "not ok 1 - hostile: setup of $TABLE"
  sed 's/^/#   /' "$TMP/setup.log"
  echo "1..1"
  exit 1
fi
# SANITIZE=1 (mk/sanitize.mk): the shell loads an ASan library
. tests/harness/sanitize.sh
san_export
timeout 1500 python3 tests/trust/hostile_check.py "$TABLE"
