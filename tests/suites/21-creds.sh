#!/usr/bin/env bash
# Credentials end to end: credential_process, container credentials and
# IMDSv2 (a fake metadata server), refresh before expiry, the "no
# credentials" message, TLS verification and ca_bundle, the services
# section's endpoint, malformed and oversized answers, a dead endpoint.
# TAP lines; see tests/faults/creds_check.py.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT" || exit 1
exec python3 tests/faults/creds_check.py "$@"
