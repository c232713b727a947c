#!/usr/bin/env bash
# make demo: install what is missing, build, start DynamoDB Local on a free
# loopback port, load seed 000's e-commerce example into table Store, run
# its 15 access patterns in the sqlite3 shell (tools/demo.sql) with the
# DynamoDB call each costs, and stop the server.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
make --no-print-directory
. tests/harness/lib.sh
ensure_boto3_python "$ROOT" || true
STATE="$ROOT/.test-tmp/demo"
mkdir -p "$STATE"
URL=$(tests/harness/ddblocal.sh start "$STATE")
trap 'tests/harness/ddblocal.sh stop "$STATE" >/dev/null 2>&1 || true' EXIT
# DynamoDB Local accepts any credentials; never use a real profile here.
unset AWS_PROFILE
export AWS_ACCESS_KEY_ID=demo AWS_SECRET_ACCESS_KEY=demo AWS_REGION=us-east-1
export AWS_ENDPOINT_URL_DYNAMODB="$URL"
echo "demo: DynamoDB Local at $URL; loading seed 000 into table Store"
python3 tests/harness/fixtures.py seed000 Store
echo "demo: sqlite3 < tools/demo.sql"
sqlite3 -batch :memory: < tools/demo.sql
