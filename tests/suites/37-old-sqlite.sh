#!/usr/bin/env bash
# The load refuses a SQLite older than 3.38.0 (the first with
# sqlite3_vtab_in) with one line naming both versions, instead of crashing
# on a slot its API table lacks: the sqlite3 shell runs with a
# sqlite3_libversion_number() of 3.37.2 (a one-function library preloaded),
# and then as it is.  Needs no server.  TAP lines.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT" || exit 1
EXT="${DDB_EXT:-build/dynamodb}"
TMP="$ROOT/.test-tmp/old-sqlite"
mkdir -p "$TMP"
# shellcheck source=../harness/sanitize.sh
. "$ROOT/tests/harness/sanitize.sh" # SANITIZE=1: the ASan runtime first
N=0
rc=0
# tap STATUS NAME OUTPUT: one TAP line, OUTPUT as comments when it failed.
tap() {
  N=$((N + 1))
  if [ "$1" = 0 ]; then
    echo "ok $N - old sqlite: $2"
  else
    echo "not ok $N - old sqlite: $2"
    printf '%s\n' "$3" | sed 's/^/#   /'
    rc=1
  fi
}

printf '%s\n' 'int sqlite3_libversion_number(void);' \
  'int sqlite3_libversion_number(void) { return 3037002; }' >"$TMP/old.c"
if ! ${CC:-cc} -shared -fPIC -o "$TMP/old.so" "$TMP/old.c" 2>"$TMP/cc.err"; then
  tap 1 "build the 3.37.2 version shim" "$(cat "$TMP/cc.err")"
  echo "1..$N"
  exit 1
fi
want="Error: error during initialization: dynamodb: SQLite 3.37.2 is too old: the extension needs 3.38.0 or later (sqlite3_vtab_in); load it into a newer SQLite"
# the shim after the ASan runtime where there is one (SAN_ENV's LD_PRELOAD)
old_env=(env "LD_PRELOAD=$TMP/old.so")
if [ ${#SAN_ENV[@]} -gt 0 ]; then
  old_env=("${SAN_ENV[@]}")
  old_env[1]="${old_env[1]} $TMP/old.so"
fi
out=$("${old_env[@]}" sqlite3 -batch :memory: ".load $EXT" \
  "SELECT 'loaded';" 2>&1)
status=$?
[ "$out" = "$want" ] && [ $status != 0 ] && ok=0 || ok=1
tap $ok "3.37.2 is refused at .load with one line (exit $status)" "$out"
out=$("${SAN_ENV[@]}" sqlite3 -batch :memory: ".load $EXT" "SELECT 'loaded';" 2>&1)
[ "$out" = loaded ] && ok=0 || ok=1
tap $ok "$(sqlite3 :memory: 'SELECT sqlite_version()') loads" "$out"
echo "1..$N"
exit $rc
