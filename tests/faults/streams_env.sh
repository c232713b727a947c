# Sourced by tests/suites/61-streams.sh and 62-streams-faults.sh: the
# reading processes' python3 (one that can load extensions: Debian's) in
# READER_PY, ASan's runtime first under SANITIZE=1, the extension in
# DDB_EXT.  $1: the suite's name, for its skip line (then it exits).
READER_PY=/usr/bin/python3
if ! "$READER_PY" -c 'import sqlite3; sqlite3.connect(":memory:").enable_load_extension(True)' 2>/dev/null; then
  echo "ok 1 - $1 # SKIP $READER_PY cannot load extensions"; echo "1..1"; exit 0
fi
if [ "${SANITIZE:-}" = 1 ]; then
  LD_PRELOAD="$(${CC:-cc} -print-file-name=libasan.so)${LD_PRELOAD:+ $LD_PRELOAD}"
  ASAN_OPTIONS="detect_leaks=0:handle_segv=0"
  export LD_PRELOAD ASAN_OPTIONS
fi
export READER_PY DDB_EXT="${DDB_EXT:-$ROOT/build/dynamodb}"
