#!/usr/bin/env bash
# Cache isolation and lifetime (docs/trust-model.md, "Cache isolation and
# lifetime"). TAP lines.
#  - tests/trust/cache_principals.py: a second DynamoDB Local WITHOUT
#    -sharedDb (one database per access key and region, started here on a
#    free loopback port and stopped by PID), then in one sqlite3 process
#    and in the C API (tests/trust/api_principals.c): profiles A and B with
#    their own table of one name, a wrong secret, another region, and
#    http://localhost:PORT/ for http://127.0.0.1:PORT.
#  - tests/trust/lifetime.py: the cache and counters outlive the last
#    connection (Debian's /usr/bin/python3 sqlite3: close, connect again).
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT" || exit 1
: "${AWS_ENDPOINT_URL_DYNAMODB:?run from tests/harness/run-all.sh}"
mkdir -p .test-tmp/trust
# With SANITIZE=1 (make test SANITIZE=1) build/libddb.a and the extension
# are built with ASan and UBSan: the C driver is linked with them too, and
# Debian's python3 gets the ASan runtime preloaded (leak checks off: the
# interpreter's own allocations), as sqlite3 does (mk/sanitize.mk).
# (tests/harness/sanitize.sh).
. tests/harness/sanitize.sh
API_PRINCIPALS="$ROOT/.test-tmp/trust/api_principals"
build_driver "$API_PRINCIPALS" tests/trust/api_principals.c
export API_PRINCIPALS
OUT=.test-tmp/trust/out.$$
rc=0
python3 tests/trust/cache_principals.py >"$OUT.1" || rc=1
PY=/usr/bin/python3
if "$PY" -c 'import sqlite3; sqlite3.connect(":memory:").enable_load_extension(True)' 2>/dev/null; then
  "${SAN_ENV[@]}" "$PY" tests/trust/lifetime.py >"$OUT.2" || rc=1
else
  echo "ok 1 - lifetime: # SKIP $PY cannot load SQLite extensions" >"$OUT.2"
fi
# one TAP stream: renumber, one plan at the end
cat "$OUT.1" "$OUT.2" | awk '
  /^1\.\./ { next }
  /^(not )?ok [0-9]+/ { n++; sub(/ok [0-9]+/, "ok " n) }
  { print }
  END { print "1.." n }'
rm -f "$OUT.1" "$OUT.2"
exit $rc
