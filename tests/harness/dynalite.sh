#!/usr/bin/env bash
# dynalite helper for the test suite: a second, independent implementation
# of DynamoDB's API (node; npm package dynalite, pinned below), which the
# SQL tests also run against (tests/harness/run-all.sh, tools/test-dynalite.sh).
#
#   tests/harness/dynalite.sh install
#       Make sure dynalite is in .deps/dynalite/ (npm install from the
#       registry, quietly, only when missing; needs node and npm).
#
#   tests/harness/dynalite.sh start STATEDIR
#       Start an in-memory dynalite on a free loopback port (127.0.0.1 only),
#       in the background. Writes STATEDIR/pid, STATEDIR/port,
#       STATEDIR/dynalite.log; waits until it answers ListTables (up to
#       DYNALITE_START_TIMEOUT, 30 s), then prints http://127.0.0.1:PORT
#
#   tests/harness/dynalite.sh stop STATEDIR
#       Stop the server whose PID is in STATEDIR/pid (TERM, then KILL).
#
#   tests/harness/dynalite.sh lacks
#       Print the features of "-- requires:" (tests/README.md) that dynalite
#       lacks, for SQL_TEST_LACKS: the SQL test files that need one are
#       skipped on dynalite, each with a "# skip" line.
set -euo pipefail

PKG="dynalite@4.0.0"
# dynalite 4.0.0 has no TransactWriteItems (nor TransactGetItems), no
# UpdateTimeToLive (its DescribeTimeToLive always says DISABLED), and
# ignores a table's StreamSpecification; it refuses a table's ARN as
# TableName (ValidationException: its pattern is a name's) and a GSI key
# of several attributes (November 2025: "multikey")
LACKS="transactions ttl streams table_arn multikey"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DIR="$ROOT/.deps/dynalite"
CLI="$DIR/node_modules/dynalite/cli.js"
START_TIMEOUT="${DYNALITE_START_TIMEOUT:-30}"

die() { echo "dynalite: $*" >&2; exit 1; }

usage() {
    sed -n '2,22p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

installed() {
    [ -f "$CLI" ] && grep -q '"version": "4.0.0"' "$DIR/node_modules/dynalite/package.json"
}

cmd_install() {
    installed && return 0
    command -v npm >/dev/null 2>&1 || die "npm not found (needed to install $PKG)"
    mkdir -p "$DIR"
    echo "dynalite: installing $PKG into $DIR" >&2
    (cd "$DIR" && npm install --silent --no-audit --no-fund --save-exact "$PKG" \
        >npm.log 2>&1) || { tail -n 30 "$DIR/npm.log" >&2; die "npm install $PKG failed"; }
    installed || die "npm install $PKG left no $CLI"
}

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# Exit 0 once the server answers a ListTables call with HTTP 200.
probe() {
    curl -s -o /dev/null -w '%{http_code}' --max-time 2 -X POST \
        -H 'Content-Type: application/x-amz-json-1.0' \
        -H 'X-Amz-Target: DynamoDB_20120810.ListTables' \
        -H 'X-Amz-Date: 20240101T000000Z' \
        -H 'Authorization: AWS4-HMAC-SHA256 Credential=test/20240101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0' \
        --data '{}' "http://127.0.0.1:$1/" 2>/dev/null | grep -q '^200$'
}

cmd_start() {
    [ $# -eq 1 ] || usage
    local state="$1" attempt port pid
    installed || die "$PKG missing: run 'tests/harness/dynalite.sh install' first"
    command -v node >/dev/null 2>&1 || die "node not found"
    mkdir -p "$state"
    state="$(cd "$state" && pwd)"
    if [ -f "$state/pid" ] && kill -0 "$(cat "$state/pid")" 2>/dev/null; then
        die "a server is already running for $state (pid $(cat "$state/pid"))"
    fi
    rm -f "$state/pid" "$state/port"
    for attempt in 1 2 3; do
        port="$(free_port)"
        # exec: $! is node's own PID
        (exec node "$CLI" --host 127.0.0.1 --port "$port" \
            </dev/null >"$state/dynalite.log" 2>&1) &
        pid=$!
        echo "$pid" >"$state/pid"
        echo "$port" >"$state/port"
        local deadline=$((SECONDS + START_TIMEOUT))
        while [ $SECONDS -lt $deadline ] && kill -0 "$pid" 2>/dev/null; do
            if probe "$port"; then
                echo "http://127.0.0.1:$port"
                return 0
            fi
            sleep 0.1
        done
        if kill -0 "$pid" 2>/dev/null; then
            tail -n 20 "$state/dynalite.log" >&2
            cmd_stop "$state" >/dev/null 2>&1 || true
            die "server (pid $pid, port $port) did not answer within ${START_TIMEOUT}s"
        fi
        rm -f "$state/pid" "$state/port"
        grep -q EADDRINUSE "$state/dynalite.log" 2>/dev/null && continue
        tail -n 20 "$state/dynalite.log" >&2
        die "server exited during startup"
    done
    die "could not start after 3 attempts"
}

cmd_stop() {
    [ $# -eq 1 ] || usage
    local state="$1" pid i
    [ -f "$state/pid" ] || { echo "dynalite: no $state/pid, nothing to stop" >&2; return 0; }
    pid="$(cat "$state/pid")"
    case "$pid" in ''|*[!0-9]*) die "bad pid file $state/pid" ;; esac
    if kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid" 2>/dev/null || true
        for i in $(seq 1 50); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        if kill -0 "$pid" 2>/dev/null; then
            echo "dynalite: pid $pid ignored TERM, sending KILL" >&2
            kill -KILL "$pid" 2>/dev/null || true
        fi
    fi
    rm -f "$state/pid"
}

[ $# -ge 1 ] || usage
sub="$1"; shift
case "$sub" in
    install) [ $# -eq 0 ] || usage; cmd_install ;;
    start) cmd_start "$@" ;;
    stop) cmd_stop "$@" ;;
    lacks) [ $# -eq 0 ] || usage; echo "$LACKS" ;;
    *) usage ;;
esac
