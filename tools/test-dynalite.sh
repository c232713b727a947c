#!/usr/bin/env bash
# Run the SQL tests against dynalite, a second, independent implementation
# of DynamoDB's API (npm package, pinned in tests/harness/dynalite.sh),
# instead of AWS's DynamoDB Local: the part of `make test` that
# tests/harness/run-all.sh runs on dynalite, alone, after building the
# extension.  Arguments go to tests/harness/run-sql.sh (files or name
# filters).  The files that need what dynalite lacks (TransactWriteItems:
# "-- requires: transactions") are skipped, each with a "# skip" line.
# Last run: 180 passed, 0 failed, 23 skipped (see docs/development.md, "Tests").
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT" || exit 1
. "$ROOT/tests/harness/lib.sh"
set_test_aws_env
export AWS_EC2_METADATA_DISABLED=true
tests/harness/dynalite.sh install || exit 1
make --no-print-directory loadable >/dev/null || exit 1
mkdir -p .test-tmp
STATE="$(mktemp -d "$ROOT/.test-tmp/dynalite.XXXXXX")"
trap 'tests/harness/dynalite.sh stop "$STATE" >/dev/null 2>&1; rm -rf "$STATE"' EXIT
URL="$(tests/harness/dynalite.sh start "$STATE")" || exit 1
echo "# dynalite at $URL (pid $(cat "$STATE/pid"))"
AWS_ENDPOINT_URL_DYNAMODB="$URL" SQL_TEST_SERVER=dynalite \
    SQL_TEST_LACKS="$(tests/harness/dynalite.sh lacks)" \
    tests/harness/run-sql.sh "$@" | tee "$STATE/out"
rc=${PIPESTATUS[0]}
echo "# dynalite: $(grep -c '^ok ' "$STATE/out") passed, $(grep -c '^not ok ' "$STATE/out") failed," \
    "$(sed -n 's/^# skip .* (\([0-9][0-9]*\) tests\{0,1\})$/\1/p' "$STATE/out" | awk '{ n += $1 } END { print n + 0 }') skipped"
exit "$rc"
