#!/usr/bin/env bash
# The README a newcomer reads and `make shell`: the README's first session
# run through make shell's script and compared with what the README shows,
# make shell on a pseudo-terminal (its server stopped however the shell
# ends), and the pages (length, licence, links, every former README
# section's home).  TAP lines; see tests/docs/readme_check.py.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
exec python3 "$ROOT/tests/docs/readme_check.py" "$@"
