#!/usr/bin/env bash
# SigV4: the Authorization header the extension sends (signed by
# client/sigv4.c) against botocore's for the same request bytes and a fixed
# clock: session token, non-ASCII bodies, a non-default port.  TAP lines; see
# tests/faults/sigv4_check.py.  (AWS's published vectors are in the unit
# tests, tests/unit/test_sigv4.c.)
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT" || exit 1
exec python3 tests/faults/sigv4_check.py "$@"
