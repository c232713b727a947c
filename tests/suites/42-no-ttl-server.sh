#!/usr/bin/env bash
# A server without DescribeTimeToLive (tests/faults/proxy.py answers it
# UnknownOperationException, as a server that lacks the operation does):
# dynamodb_tables shows NULL TTL columns and its other columns as ever;
# ttl=hide hides nothing there, and the table reads.  Every other request
# goes through to DynamoDB Local.  TAP output.
set -u
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT" || exit 1
: "${AWS_ENDPOINT_URL_DYNAMODB:?run from tests/harness/run-all.sh}"
export AWS_EC2_METADATA_DISABLED=true
n=0
ok() { n=$((n + 1)); echo "ok $n - no DescribeTimeToLive: $1"; }
notok() { n=$((n + 1)); echo "not ok $n - no DescribeTimeToLive: $1"; shift; for l in "$@"; do echo "#   $l"; done; }
EXT="${DDB_EXT:-build/dynamodb}"

python3 tests/harness/fixtures.py lesson NoTtl042 >/dev/null ||
  { echo "not ok 1 - no DescribeTimeToLive: fixtures"; echo "1..1"; exit 0; }
python3 tests/harness/fixtures.py put NoTtl042 PK=T SK=old exp:N=1000 >/dev/null
coproc PROXY { exec python3 tests/faults/proxy.py --upstream "$AWS_ENDPOINT_URL_DYNAMODB"; }
read -r port <&"${PROXY[0]}"
trap 'kill "$PROXY_PID" 2>/dev/null; python3 tests/harness/fixtures.py drop NoTtl042 >/dev/null 2>&1' EXIT
python3 - "$port" <<'PY'
import json, sys, urllib.request
req = urllib.request.Request(
    "http://127.0.0.1:%s/__control" % sys.argv[1], method="POST",
    data=json.dumps({"fault": "unknownop", "mode": "always",
                     "ops": ["DescribeTimeToLive"]}).encode())
urllib.request.urlopen(req).read()
PY

out=$(AWS_ENDPOINT_URL_DYNAMODB="http://127.0.0.1:$port" "${SQLITE3:-sqlite3}" :memory: ".load $EXT" \
  "SELECT name, partition_key, ttl_attribute IS NULL, ttl_status IS NULL FROM dynamodb_tables WHERE name = 'NoTtl042'" \
  "SELECT dynamodb_calls()" 2>&1)
want="NoTtl042|PK|1|1
DescribeTable, DescribeTimeToLive"
if [ "$out" = "$want" ]; then
  ok "dynamodb_tables: NULL TTL columns, the rest as ever"
else
  notok "dynamodb_tables: NULL TTL columns, the rest as ever" "$out"
fi

out=$(AWS_ENDPOINT_URL_DYNAMODB="http://127.0.0.1:$port" "${SQLITE3:-sqlite3}" :memory: ".load $EXT" \
  "CREATE VIRTUAL TABLE h USING dynamodb(table=NoTtl042, ttl=hide)" \
  "SELECT SK FROM h WHERE PK = 'T'" "SELECT count(*) FROM h" 2>&1)
want="old
7"
if [ "$out" = "$want" ]; then
  ok "ttl=hide hides nothing where the server has no TTL"
else
  notok "ttl=hide hides nothing where the server has no TTL" "$out"
fi

stats=$(python3 - "$port" <<'PY'
import json, sys, urllib.request
s = json.load(urllib.request.urlopen("http://127.0.0.1:%s/__stats" % sys.argv[1]))
print(s["faults"].get("DescribeTimeToLive", 0))
PY
)
if [ "$stats" = "2" ]; then
  ok "each asked DescribeTimeToLive once, and got UnknownOperationException"
else
  notok "each asked DescribeTimeToLive once, and got UnknownOperationException" "faults: $stats"
fi
echo "1..$n"
