#!/usr/bin/env bash
# make lint: formatting (clang-format --dry-run), banned functions, cppcheck.
# Exits non-zero on any finding.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
rc=0
SRC=$(git ls-files 'client/*.[ch]' 'cache/*.[ch]' 'ext/*.[ch]' 'tests/unit/*.[ch]' 'bench/*.[ch]' 'examples/*.[ch]' 'api/*.[ch]' 'tests/fuzz/*.[ch]')

echo "lint: clang-format"
if ! clang-format --dry-run --Werror $SRC; then rc=1; fi

# Unbounded or thread-unsafe functions, banned as in curl's checksrc; calls
# in code only, comments and strings blanked (tools/banned.py), so a call on
# a line that also holds a comment is caught.
echo "lint: banned functions"
tools/banned.py --selftest >/dev/null || { tools/banned.py --selftest; rc=1; }
if ! tools/banned.py $SRC; then
  echo "lint: banned function used (see above)"; rc=1
fi

# SQLite's printf has no %z: it would read the argument as a string.
echo "lint: SQLite printf formats"
if grep -nE '(sqlite3_mprintf|sqlite3_str_appendf|sqlite3_snprintf|dd_error)\(.*%z' $SRC; then
  echo "lint: %z in an SQLite printf (use %lld and a cast)"; rc=1
fi

echo "lint: cppcheck"
if command -v cppcheck >/dev/null; then
  cppcheck --quiet --error-exitcode=1 --enable=warning,portability \
    --inline-suppr --suppress=missingIncludeSystem \
    -I client -I cache -I ext client cache ext || rc=1
fi
[ $rc = 0 ] && echo "lint: clean"
exit $rc
