# Sourced by tests/suites/61-streams.sh and 62-streams-faults.sh: the
# reading processes' python3 (one that can load extensions: Debian's) in
# READER_PY, ASan's runtime for them under SANITIZE=1, the extension in
# DDB_EXT.  $1: the suite's name, for its skip line (then it exits).
READER_PY=/usr/bin/python3
if ! "$READER_PY" -c 'import sqlite3; sqlite3.connect(":memory:").enable_load_extension(True)' 2>/dev/null; then
  echo "ok 1 - $1 # SKIP $READER_PY cannot load extensions"; echo "1..1"; exit 0
fi
# ASan's runtime goes only to the processes that load the extension
# (READER_PRELOAD: streams_check.py's readers, the suite's sqlite3), never
# to node, curl or the servers
READER_PRELOAD=
if [ "${SANITIZE:-}" = 1 ]; then
  READER_PRELOAD="$(${CC:-cc} -print-file-name=libasan.so)"
  ASAN_OPTIONS="detect_leaks=0:handle_segv=0"
  export ASAN_OPTIONS
fi
export READER_PRELOAD
export READER_PY DDB_EXT="${DDB_EXT:-$ROOT/build/dynamodb}"
