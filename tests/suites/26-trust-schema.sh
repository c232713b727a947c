#!/usr/bin/env bash
# Untrusted database files stay offline: reading the schema of a file whose
# CREATE VIRTUAL TABLE names an attacker's endpoint and a profile with a
# credential_process makes no connection and runs nothing; DROP TABLE works;
# the stored description, dynamodb_refresh(). TAP lines; see
# tests/trust/schema_check.py.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT" || exit 1
exec python3 tests/trust/schema_check.py "$@"
