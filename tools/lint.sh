#!/usr/bin/env bash
# make lint: formatting (clang-format --dry-run), banned functions, SQLite
# printf formats, snake_case names in client/ and cache/ (tools/names.py),
# cppcheck, file cycles (tools/cycles.py), the symbols dynamodb.so
# exports, ARCHITECTURE.md's file map against the tree (tools/filemap.py);
# then, for information only, the functions over 80 lines
# (tools/funclen.py).  Exits non-zero
# on any finding.  --tap: one TAP line a check, its findings as comments
# (tests/suites/05-lint.sh runs it so inside make test).  --format
# (make format): clang-format -i on the files the first check checks.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
TAP=0
[ "${1:-}" = --tap ] && TAP=1
rc=0
n=0
SRC=$(git ls-files 'client/*.[ch]' 'cache/*.[ch]' 'ext/*.[ch]' 'tests/unit/*.[ch]' 'bench/*.[ch]' 'examples/*.[ch]' 'api/*.[ch]' 'tests/fuzz/*.[ch]')
if [ "${1:-}" = --format ]; then
  exec clang-format -i $SRC
fi

# check NAME CMD...: run one check; it fails when CMD exits non-zero.
check() {
  local name="$1" out status
  shift
  n=$((n + 1))
  if [ $TAP = 1 ]; then
    out=$("$@" 2>&1)
    status=$?
    if [ $status = 0 ]; then
      echo "ok $n - lint: $name"
    else
      echo "not ok $n - lint: $name"
      printf '%s\n' "$out" | sed 's/^/# /'
      rc=1
    fi
  else
    echo "lint: $name"
    "$@" || rc=1
  fi
}

clang_format() { clang-format --dry-run --Werror $SRC; }

# Unbounded or thread-unsafe functions, banned as in curl's checksrc; calls
# in code only, comments and strings blanked (tools/banned.py), so a call on
# a line that also holds a comment is caught.
banned() {
  tools/banned.py --selftest >/dev/null || { tools/banned.py --selftest; return 1; }
  tools/banned.py $SRC || { echo "lint: banned function used (see above)"; return 1; }
}

# SQLite's printf has no %z: it would read the argument as a string.
printf_z() {
  if grep -nE '(sqlite3_mprintf|sqlite3_str_appendf|sqlite3_snprintf|dd_error)\(.*%z' $SRC; then
    echo "lint: %z in an SQLite printf (use %lld and a cast)"
    return 1
  fi
}

# One identifier style a folder: client/ and cache/ in snake_case
# (tools/names.py; ext/ keeps SQLite's style).
names() {
  tools/names.py --selftest >/dev/null || { tools/names.py --selftest; return 1; }
  tools/names.py $(git ls-files 'client/*.[ch]' 'cache/*.[ch]') ||
    { echo "lint: a name not in snake_case in client/ or cache/ (see above)"; return 1; }
}

run_cppcheck() {
  command -v cppcheck >/dev/null || { echo "cppcheck not installed"; return 1; }
  cppcheck --quiet --error-exitcode=1 --enable=warning,portability \
    --inline-suppr --suppress=missingIncludeSystem \
    -I client -I cache -I ext -I api client cache ext api
}

# No file cycles, no layer calling one above it, in the objects of the last
# build (the Makefile's lint target builds them first).
cycles() {
  tools/cycles.py --selftest >/dev/null || { tools/cycles.py --selftest; return 1; }
  tools/cycles.py "${BUILD:-build}"
}

# The extension exports its entry point and nothing else (ext/dynamodb.map):
# its internals must bind to its own copies, never to another library's.
exports() {
  local so="${BUILD:-build}/dynamodb.so" extra
  [ -f "$so" ] || { echo "$so not built"; return 1; }
  extra=$(nm -D --defined-only "$so" | awk '{ print $NF }' |
          grep -vx 'sqlite3_dynamodb_init')
  [ -z "$extra" ] || { echo "$so exports more than its entry point:"; echo "$extra" | head; return 1; }
}

# ARCHITECTURE.md names every file of client/, cache/, ext/ and api/, and
# only files that are there (tools/filemap.py).
filemap() {
  tools/filemap.py --selftest >/dev/null || { tools/filemap.py --selftest; return 1; }
  tools/filemap.py
}

check "clang-format" clang_format
check "banned functions" banned
check "SQLite printf formats" printf_z
check "snake_case names" names
check "cppcheck" run_cppcheck
check "file cycles" cycles
check "exported symbols" exports
check "file map" filemap
# Informational, never a failure: the functions over 80 lines.
long=$(tools/funclen.py 80)
if [ $TAP = 1 ]; then
  printf '%s\n' "$long" | grep . | sed 's/^/# lint: long function: /'
else
  echo "lint: functions over 80 lines (informational): $(printf '%s\n' "$long" | grep -c .)"
  printf '%s\n' "$long" | grep . | sed 's/^/  /'
fi
if [ $TAP = 1 ]; then
  echo "1..$n"
  exit 0
fi
[ $rc = 0 ] && echo "lint: clean"
exit $rc
