#!/usr/bin/env bash
# make demo: the non-interactive tour.  Builds, then runs the 15 access
# patterns of the e-commerce example (examples/ecommerce/patterns.sql)
# through tools/shell.sh, which starts DynamoDB Local on a free loopback
# port, loads the example into table Store, runs sqlite3 with the
# extension and the virtual table shop, and stops the server at the end.
# Each pattern prints its rows and the DynamoDB call it cost.  (`make
# shell` is the same setup with the shell left open.)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
make --no-print-directory
echo "demo: the e-commerce example (examples/ecommerce/README.md) in" \
     "DynamoDB Local; its 15 access patterns, each with the call it cost"
tools/shell.sh -batch :memory: <examples/ecommerce/patterns.sql
