#!/usr/bin/env bash
# Self-test of the test infrastructure (SQL runner verdicts, seed 000 access
# patterns). TAP lines; see test/selftest/run.py.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
exec python3 "$ROOT/test/selftest/run.py" "$@"
