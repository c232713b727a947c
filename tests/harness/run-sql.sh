#!/usr/bin/env bash
# Run the SQL tests in test-sql/*.test through the sqlite3 shell.
# Thin wrapper around tests/harness/run_sql.py; see that file (or tests/README.md)
# for the test-file format and the error-message normalization.
#
#   tests/harness/run-sql.sh                        # all test-sql/*.test
#   tests/harness/run-sql.sh test-sql/foo.test      # some files
#   tests/harness/run-sql.sh 'pattern 1'            # report only tests whose name matches
#   tests/harness/run-sql.sh --show foo.test        # also print each test's actual output
#
# Needs AWS_ENDPOINT_URL_DYNAMODB (tests/harness/run-all.sh starts DynamoDB Local and
# sets it); credentials default to test/test, region us-east-1.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
. "$ROOT/tests/harness/lib.sh"
set_test_aws_env
ensure_boto3_python "$ROOT" || true
exec python3 "$ROOT/tests/harness/run_sql.py" "$@"
