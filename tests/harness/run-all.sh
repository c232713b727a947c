#!/usr/bin/env bash
# Run every test suite against one DynamoDB Local, and the SQL tests against
# dynalite too; this is what `make test` calls.
#
# 1. Starts DynamoDB Local (tests/harness/ddblocal.sh, in-memory, free loopback port,
#    state under .test-tmp/) and stops it on exit whatever happens; or, with
#    DDB_ENDPOINT=http://host:port, uses that already running server instead.
#    Exports AWS_ENDPOINT_URL_DYNAMODB and test credentials (test/test,
#    us-east-1; AWS_PROFILE unset).
# 2. Runs, in order:
#        build/unit-tests            (C binary, TAP lines)
#        tests/harness/run-sql.sh             (test-sql/*.test)
#        tests/harness/run-sql.sh on dynalite (the same files on a second,
#                                     independent server, started here with
#                                     tests/harness/dynalite.sh and stopped by
#                                     PID; its tests named "dynalite: ...";
#                                     files whose "-- requires:" dynalite
#                                     lacks are skipped, each with a
#                                     "# skip" line)
#        python3 tests/diff/run.py    (differential test)
#        tests/suites/*.sh            (sorted)
#    A runner that is missing (or a suite that is not executable) is a
#    failure, not a skip.  RUN_ALL_QUICK=1 (make check) runs the unit and
#    SQL tests on DynamoDB Local only, for the edit-test loop's speed
#    (RUN_ALL_DYNALITE=1 adds the SQL tests on dynalite).
#    Arguments given to run-all.sh are passed to tests/harness/run-sql.sh only.
# 3. Counts lines starting with "ok " / "not ok " in their output, and the
#    tests of the "# skip FILE on SERVER: ... (N tests)" lines. A runner
#    that dies from a signal, times out, or exits non-zero without printing
#    any "not ok" line counts as one more failure, named after it.
# 4. Ends with "N passed, N failed, N skipped"; exit status 1 if anything
#    failed or if no test ran at all.
#
# Environment: SANITIZE (passed through untouched), RUN_ALL_QUICK, DDB_ENDPOINT, DDB_HEAP
# (JVM heap for DynamoDB Local, e.g. 1g), RUN_ALL_DYNALITE (1: the SQL tests
# on dynalite too, the default unless RUN_ALL_QUICK=1; 0: not), SUITE_TIMEOUT
# (seconds per runner, default 1800), plus those of tests/harness/run-sql.sh
# (see tests/README.md).
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT" || exit 1
. "$ROOT/tests/harness/lib.sh"

set_test_aws_env
ensure_boto3_python "$ROOT" || true
mkdir -p .test-tmp

PASSED=0
FAILED=0
SKIPPED=0
STATE=""
DSTATE=""
LOGDIR="$(mktemp -d "$ROOT/.test-tmp/run-all.XXXXXX")"

cleanup() {
    if [ -n "$DSTATE" ]; then
        "$ROOT/tests/harness/dynalite.sh" stop "$DSTATE" >/dev/null 2>&1 || true
        rm -rf "$DSTATE"
    fi
    if [ -n "$STATE" ]; then
        "$ROOT/tests/harness/ddblocal.sh" stop "$STATE" >/dev/null 2>&1 || true
        rm -rf "$STATE"
    fi
    rm -rf "$LOGDIR"
}
trap cleanup EXIT
trap 'echo "# run-all: interrupted"; exit 130' INT
trap 'echo "# run-all: terminated"; exit 143' TERM HUP

fail_line() {   # one synthetic failure
    echo "not ok - $*"
    FAILED=$((FAILED + 1))
}

# run_suite NAME CMD...: run a sub-runner, tee its output, count its results.
run_suite() {
    local name="$1"; shift
    local log="$LOGDIR/out"
    echo "# === $name ==="
    timeout --kill-after=10 "${SUITE_TIMEOUT:-1800}" "$@" </dev/null 2>&1 | tee "$log"
    local rc=${PIPESTATUS[0]}
    local ok notok skipped
    ok=$(grep -c '^ok ' "$log")
    notok=$(grep -c '^not ok ' "$log")
    skipped=$(sed -n 's/^# skip .* (\([0-9][0-9]*\) tests\{0,1\})$/\1/p' "$log" |
        awk '{ n += $1 } END { print n + 0 }')
    PASSED=$((PASSED + ok))
    FAILED=$((FAILED + notok))
    SKIPPED=$((SKIPPED + skipped))
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        fail_line "$name: timed out after ${SUITE_TIMEOUT:-1800}s"
    elif [ "$rc" -gt 128 ]; then
        fail_line "$name: crashed (exit status $rc, signal $((rc - 128)))"
    elif [ "$rc" -ne 0 ] && [ "$notok" -eq 0 ]; then
        fail_line "$name: exited with status $rc without reporting a failing test"
    fi
}

# --- DynamoDB Local ---------------------------------------------------------
DDB_UP=1
if [ -n "${DDB_ENDPOINT:-}" ]; then
    export AWS_ENDPOINT_URL_DYNAMODB="$DDB_ENDPOINT"
    echo "# using DynamoDB at $AWS_ENDPOINT_URL_DYNAMODB (DDB_ENDPOINT)"
else
    # install does nothing (and says nothing) when the pinned jar and java
    # are there; the jar's path is ddblocal.sh's alone to know
    "$ROOT/tests/harness/ddblocal.sh" install 2>&1 | sed 's/^/# /'
    STATE="$(mktemp -d "$ROOT/.test-tmp/ddblocal.XXXXXX")"
    if url="$("$ROOT/tests/harness/ddblocal.sh" start ${DDB_HEAP:+--heap "$DDB_HEAP"} "$STATE" 2>"$STATE/start.err")"; then
        export AWS_ENDPOINT_URL_DYNAMODB="$url"
        echo "# DynamoDB Local $(sed -n 's/^Version:[[:space:]]*//p' "$STATE/ddblocal.log") at $url (pid $(cat "$STATE/pid"))"
    else
        sed 's/^/# /' "$STATE/start.err"
        fail_line "run-all: DynamoDB Local did not start"
        DDB_UP=0
    fi
fi

# --- suites -----------------------------------------------------------------
# need NAME: a runner that should be here and is not is a failure, not a skip
# (a renamed or unbuilt runner must not turn the suite green).
need() {
    [ -e "$1" ] && return 0
    fail_line "$1: missing"
    return 1
}
if need build/unit-tests; then
    run_suite build/unit-tests build/unit-tests
fi
# the SQL tests on dynalite: a test must hold on any correct server
run_sql_dynalite() {
    local url
    if ! "$ROOT/tests/harness/dynalite.sh" install 2>&1 | sed 's/^/# /'; then
        fail_line "run-all: dynalite is not installed (tests/harness/dynalite.sh install)"
        return
    fi
    DSTATE="$(mktemp -d "$ROOT/.test-tmp/dynalite.XXXXXX")"
    if url="$("$ROOT/tests/harness/dynalite.sh" start "$DSTATE" 2>"$DSTATE/start.err")"; then
        echo "# dynalite at $url (pid $(cat "$DSTATE/pid"))"
        run_suite "tests/harness/run-sql.sh on dynalite" env \
            AWS_ENDPOINT_URL_DYNAMODB="$url" SQL_TEST_SERVER=dynalite \
            SQL_TEST_LACKS="$("$ROOT/tests/harness/dynalite.sh" lacks)" \
            tests/harness/run-sql.sh "$@"
    else
        sed 's/^/# /' "$DSTATE/start.err"
        fail_line "run-all: dynalite did not start"
    fi
    "$ROOT/tests/harness/dynalite.sh" stop "$DSTATE" >/dev/null 2>&1 || true
    rm -rf "$DSTATE"
    DSTATE=""
}

if [ "$DDB_UP" = 1 ]; then
    if need tests/harness/run-sql.sh; then
        run_suite tests/harness/run-sql.sh tests/harness/run-sql.sh "$@"
    fi
    if [ "${RUN_ALL_DYNALITE:-$([ "${RUN_ALL_QUICK:-}" = 1 ] && echo 0 || echo 1)}" = 1 ] &&
        need tests/harness/dynalite.sh; then
        run_sql_dynalite "$@"
    fi
    if [ "${RUN_ALL_QUICK:-}" != 1 ]; then
        if need tests/diff/run.py; then
            run_suite tests/diff/run.py python3 tests/diff/run.py
        fi
        for s in tests/suites/*.sh; do
            [ -f "$s" ] || continue
            if [ ! -x "$s" ]; then
                fail_line "$s: not executable"
                continue
            fi
            run_suite "$s" "$s"
        done
    fi
else
    echo "# skipping the suites that need DynamoDB"
fi

echo "$PASSED passed, $FAILED failed, $SKIPPED skipped"
if [ "$FAILED" -gt 0 ] || [ "$PASSED" -eq 0 ]; then
    exit 1
fi
exit 0
