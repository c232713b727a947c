#!/usr/bin/env bash
# tests/harness/redis.sh -- a Redis server for the tests of the shared cache
# tier, as tests/harness/ddblocal.sh is DynamoDB Local:
#
#   tests/harness/redis.sh start [--tls] [--password PW] [--port N] STATEDIR
#       start Debian's redis-server on a free loopback port (127.0.0.1
#       only, no persistence, 64 MB, allkeys-lru), wait until it answers
#       PING, write STATEDIR/pid, STATEDIR/port, STATEDIR/url, STATEDIR/redis.log
#       and print its URL: redis://127.0.0.1:PORT (--tls: rediss://, a self-signed
#       CA and certificate in STATEDIR/ca.pem, STATEDIR/cert.pem; the
#       plain port is then closed; --port: that port, e.g. to start a
#       stopped server again where its clients look for it)
#   tests/harness/redis.sh stop STATEDIR
#       kill the server by its PID (TERM, then KILL), nothing else
#   tests/harness/redis.sh have
#       exit 0 when redis-server and redis-cli are installed
#
# tools/install-deps.sh installs them (the packages redis-server and
# redis-tools); the package's own service is never used.
set -euo pipefail

START_TIMEOUT="${REDIS_START_TIMEOUT:-20}"

die() { echo "redis.sh: $*" >&2; exit 1; }

usage() {
    sed -n '2,19p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

free_port() {
    python3 - <<'EOF'
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])
s.close()
EOF
}

# A CA and a server certificate for 127.0.0.1, signed by it, in $1.
make_certs() {
    local d="$1"
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=test ca" \
        -keyout "$d/ca.key" -out "$d/ca.pem" >/dev/null 2>&1 \
        || die "openssl: cannot make the CA"
    openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" \
        -keyout "$d/key.pem" -out "$d/cert.csr" >/dev/null 2>&1 \
        || die "openssl: cannot make the key"
    printf 'subjectAltName=IP:127.0.0.1\n' >"$d/ext.cnf"
    openssl x509 -req -in "$d/cert.csr" -CA "$d/ca.pem" -CAkey "$d/ca.key" \
        -CAcreateserial -days 2 -extfile "$d/ext.cnf" -out "$d/cert.pem" \
        >/dev/null 2>&1 || die "openssl: cannot sign the certificate"
}

cmd_start() {
    local tls=0 password="" want_port=""
    while [ $# -gt 0 ]; do
        case "$1" in
            --tls) tls=1; shift ;;
            --password) [ $# -ge 2 ] || usage; password="$2"; shift 2 ;;
            --port) [ $# -ge 2 ] || usage; want_port="$2"; shift 2 ;;
            -*) usage ;;
            *) break ;;
        esac
    done
    [ $# -eq 1 ] || usage
    local state="$1"
    command -v redis-server >/dev/null 2>&1 \
        || die "redis-server missing: run tools/install-deps.sh"
    mkdir -p "$state"
    state="$(cd "$state" && pwd)"
    if [ -f "$state/pid" ] && kill -0 "$(cat "$state/pid")" 2>/dev/null; then
        die "a server is already running for $state (pid $(cat "$state/pid"))"
    fi
    rm -f "$state/pid" "$state/port"
    [ $tls = 1 ] && make_certs "$state"

    local attempt port pid args
    for attempt in 1 2 3; do
        port="${want_port:-$(free_port)}"
        args=(--bind 127.0.0.1 --save "" --appendonly no --dir "$state"
              --maxmemory 64mb --maxmemory-policy allkeys-lru
              --daemonize no --logfile "$state/redis.log")
        if [ $tls = 1 ]; then
            args+=(--port 0 --tls-port "$port" --tls-cert-file "$state/cert.pem"
                   --tls-key-file "$state/key.pem" --tls-ca-cert-file "$state/ca.pem"
                   --tls-auth-clients no)
        else
            args+=(--port "$port")
        fi
        [ -n "$password" ] && args+=(--requirepass "$password")
        redis-server "${args[@]}" </dev/null >/dev/null 2>&1 &
        pid=$!
        echo "$pid" >"$state/pid"
        echo "$port" >"$state/port"
        local deadline=$((SECONDS + START_TIMEOUT)) up=0 cli
        cli=(redis-cli -h 127.0.0.1 -p "$port")
        [ $tls = 1 ] && cli+=(--tls --cacert "$state/ca.pem")
        [ -n "$password" ] && cli+=(--no-auth-warning -a "$password")
        while [ $SECONDS -lt $deadline ]; do
            kill -0 "$pid" 2>/dev/null || break
            if [ "$("${cli[@]}" PING 2>/dev/null)" = PONG ]; then up=1; break; fi
            sleep 0.1
        done
        if [ $up = 1 ]; then
            if [ $tls = 1 ]; then echo "rediss://127.0.0.1:$port" >"$state/url"
            else echo "redis://127.0.0.1:$port" >"$state/url"; fi
            cat "$state/url"
            return 0
        fi
        if kill -0 "$pid" 2>/dev/null; then
            echo "redis.sh: server (pid $pid) did not answer within ${START_TIMEOUT}s" >&2
            tail -n 20 "$state/redis.log" >&2 2>/dev/null || true
            cmd_stop "$state" >/dev/null 2>&1 || true
            exit 1
        fi
        if grep -qi "address already in use" "$state/redis.log" 2>/dev/null; then
            rm -f "$state/pid" "$state/port"
            continue
        fi
        tail -n 20 "$state/redis.log" >&2 2>/dev/null || true
        rm -f "$state/pid" "$state/port"
        die "redis-server exited during startup"
    done
    die "could not start after 3 attempts"
}

cmd_stop() {
    [ $# -eq 1 ] || usage
    local state="$1" pid i
    [ -f "$state/pid" ] || return 0
    pid="$(cat "$state/pid")"
    case "$pid" in ''|*[!0-9]*) die "bad pid file $state/pid" ;; esac
    if kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid" 2>/dev/null || true
        for i in $(seq 1 50); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -f "$state/pid"
}

[ $# -ge 1 ] || usage
sub="$1"; shift
case "$sub" in
    start) cmd_start "$@" ;;
    stop) cmd_stop "$@" ;;
    have) command -v redis-server >/dev/null 2>&1 && command -v redis-cli >/dev/null 2>&1 ;;
    *) usage ;;
esac
