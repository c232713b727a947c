#!/usr/bin/env bash
# Self-test of the test infrastructure (SQL runner verdicts, the e-commerce
# example's access patterns). TAP lines; see tests/harness/selftest/run.py.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
exec python3 "$ROOT/tests/harness/selftest/run.py" "$@"
