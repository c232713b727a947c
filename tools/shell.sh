#!/usr/bin/env bash
# make shell: the sqlite3 shell on the e-commerce example, to try things.
#
#   1. starts DynamoDB Local on a free loopback port (tests/harness/
#      ddblocal.sh, as the tests do), its state in .test-tmp/shell.XXXXXX/;
#   2. loads examples/ecommerce/store.json into table Store
#      (examples/load.py);
#   3. runs sqlite3 with examples/ecommerce/shell.sql as its -init file:
#      the extension loaded and the virtual table `shop` over Store;
#   4. stops that server (by its PID) when the shell exits, however it
#      exits; Ctrl-C interrupts a statement and leaves the server be.
#
# The shell and the loader, and only they, get dummy credentials, a region
# and AWS_ENDPOINT_URL_DYNAMODB pointing at that server, with the AWS
# variables that could send them elsewhere (AWS_PROFILE, a session token)
# removed and AWS_EC2_METADATA_DISABLED=true: nothing of this reaches AWS.
# Arguments go to sqlite3 (e.g. a database file; default: in memory).
# SQLITE3 names another sqlite3 binary.  Built by `make shell`, which
# builds the extension first.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
[ -f build/dynamodb.so ] || {
    echo "shell: build/dynamodb.so missing: run 'make shell'" >&2; exit 1; }
. tests/harness/lib.sh
ensure_boto3_python "$ROOT" || true
mkdir -p .test-tmp
STATE="$(mktemp -d "$ROOT/.test-tmp/shell.XXXXXX")"
stop() {
    trap '' HUP INT TERM    # a second signal must not cut the cleanup short
    tests/harness/ddblocal.sh stop "$STATE" >/dev/null 2>&1 || true
    rm -rf "$STATE"
}
trap stop EXIT
trap 'exit 129' HUP
trap 'exit 143' TERM
# The server in a session of its own: the terminal's signals (Ctrl-C to
# interrupt a statement, which the JVM would take as an order to exit)
# never reach it; stop() ends it.
URL="$(setsid tests/harness/ddblocal.sh start "$STATE")"

# DynamoDB Local accepts any credentials; never a real profile here.
local_aws() {
    env -u AWS_PROFILE -u AWS_DEFAULT_PROFILE -u AWS_SESSION_TOKEN \
        -u AWS_ENDPOINT_URL \
        AWS_ACCESS_KEY_ID=shell AWS_SECRET_ACCESS_KEY=shell \
        AWS_REGION=us-east-1 AWS_DEFAULT_REGION=us-east-1 \
        AWS_ENDPOINT_URL_DYNAMODB="$URL" AWS_EC2_METADATA_DISABLED=true "$@"
}
local_aws python3 examples/load.py examples/ecommerce/store.json Store
if [ -t 0 ]; then
    echo "shell: DynamoDB Local at $URL (pid $(cat "$STATE/pid")), the" \
         "e-commerce example in table Store, as virtual table shop;" \
         ".quit stops the server" >&2
fi
set +e
# On a terminal, sqlite3 runs as a job of its own (job control): Ctrl-C
# then reaches the shell alone, which stops the running statement, and
# not make or this script.
[ -t 0 ] && set -m
local_aws "${SQLITE3:-sqlite3}" -init examples/ecommerce/shell.sql "$@"
rc=$?
# sqlite3 exits 1 when any statement failed, in an interactive session
# too: a mistyped statement, its error on the screen, then .quit or
# Ctrl-D is no failure of `make shell` (make would add "Error 1").  Piped
# input keeps the status (a script's error is its caller's business).
if [ -t 0 ] && [ "$rc" = 1 ]; then
    rc=0
fi
exit $rc
