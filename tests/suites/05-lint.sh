#!/usr/bin/env bash
# make lint inside make test, so that CI holds every commit to it: one TAP
# line a check (clang-format, banned functions, SQLite printf formats,
# cppcheck, file cycles), a failing one with what it found.  The cycle
# check reads the objects of the build the runner made.
set -u
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT" || exit 1
exec tools/lint.sh --tap
