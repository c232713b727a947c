#!/usr/bin/env bash
# make lint: formatting (clang-format --dry-run), banned functions, cppcheck.
# Exits non-zero on any finding.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
rc=0
SRC=$(git ls-files 'client/*.[ch]' 'cache/*.[ch]' 'ext/*.[ch]' 'tests/unit/*.[ch]' 'bench/*.[ch]' 'examples/*.[ch]' 'api/*.[ch]')

echo "lint: clang-format"
if ! clang-format --dry-run --Werror $SRC; then rc=1; fi

# Unbounded or thread-unsafe functions, banned as in curl's checksrc.
echo "lint: banned functions"
BANNED='\b(atoi|atol|strcpy|strcat|sprintf|vsprintf|strtok|gets|strncpy|localtime|gmtime|rand)\s*\('
if grep -nE "$BANNED" $SRC | grep -v '^\S*:\s*\*\|/\*.*\*/' ; then
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
