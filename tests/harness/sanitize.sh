# Sourced by the suites (tests/suites/*.sh) that build a C driver or run
# python3 or sqlite3 with the extension: what SANITIZE=1 (mk/sanitize.mk)
# changes for them, written once.  Not executable on its own.
#
#   SAN_FLAGS      the compiler flags of a C driver linked with
#                  build/libddb.a: the library's sanitizers (none without
#                  SANITIZE=1)
#   SAN_ENV        `env LD_PRELOAD=... ASAN_OPTIONS=... UBSAN_OPTIONS=...`
#                  to put before one command that loads the ASan-built
#                  extension (python3, sqlite3): the ASan runtime first, as
#                  it must be, leak checks off (the interpreter's own
#                  allocations); empty without SANITIZE=1
#   san_export     the same variables exported to every later command
#   build_driver OUT SRC...
#                  compile the C driver OUT from SRC... with the C API's
#                  sources (api/*.c) and build/libddb.a (made first), warnings
#                  as errors, SAN_FLAGS; compiler output on stderr; the exit
#                  status says whether OUT was built

SAN_FLAGS=()
SAN_ENV=()
if [ "${SANITIZE:-}" = 1 ]; then
  SAN_FLAGS=(-fsanitize=address,undefined)
  SAN_ENV=(env
    "LD_PRELOAD=$(${CC:-cc} -print-file-name=libasan.so)${LD_PRELOAD:+ $LD_PRELOAD}"
    "ASAN_OPTIONS=detect_leaks=0:handle_segv=0"
    "UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1")
fi

san_export() {
  [ "${SANITIZE:-}" = 1 ] || return 0
  export "${SAN_ENV[@]:1}"
}

build_driver() {
  local out="$1"
  shift
  rm -f "$out"
  make -s --no-print-directory build/libddb.a >&2 &&
    ${CC:-cc} -Wall -Wextra -Werror "${SAN_FLAGS[@]}" -I. -Iapi -o "$out" \
      "$@" api/*.c build/libddb.a $(make -s --no-print-directory libs) >&2
}
