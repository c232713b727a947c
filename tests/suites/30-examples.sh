#!/usr/bin/env bash
# The C library as a user gets it: `make install` into a temporary prefix,
# then examples/*.c built against the INSTALLED header and dyndb.pc
# (PKG_CONFIG_PATH), linked shared and static, and run against DynamoDB
# Local on the lesson table (examples/lesson/), their standard output
# compared with examples/*.expected.  They run without LD_LIBRARY_PATH:
# dyndb.pc gives a prefix the dynamic linker does not search as an rpath,
# and an install into one it searches runs ldconfig.  Also: only dyn_* is
# exported, the installed extension loads in sqlite3, DESTDIR staging,
# `make uninstall` leaves nothing behind, and the build's header
# dependencies (a header seen as changed rebuilds exactly the objects that
# include it).  Prints TAP lines.
#
# Needs AWS_ENDPOINT_URL_DYNAMODB (tests/harness/run-all.sh sets it) and python3
# with boto3 (tests/harness/fixtures.py).  The build goes to its own folder under
# .test-tmp/, never build/; SANITIZE is ignored (a plain build).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT" || exit 1

N=0
ok() { N=$((N + 1)); echo "ok $N - examples: $*"; }
not_ok() { N=$((N + 1)); echo "not ok $N - examples: $*"; }
# show FILE: its last lines as TAP diagnostics
show() { tail -n "${2:-30}" "$1" | sed 's/^/#   /'; }
finish() { echo "1..$N"; exit "$1"; }

if [ -z "${AWS_ENDPOINT_URL_DYNAMODB:-}" ]; then
    not_ok "AWS_ENDPOINT_URL_DYNAMODB is not set (run through tests/harness/run-all.sh)"
    finish 1
fi
mkdir -p .test-tmp
TMP="$(mktemp -d "$ROOT/.test-tmp/examples.XXXXXX")"
TABLE="Examples_$$"
cleanup() {
    python3 tests/harness/fixtures.py drop "$TABLE" >/dev/null 2>&1
    rm -rf "$TMP"
}
trap cleanup EXIT
PREFIX="$TMP/prefix"
LOG="$TMP/log"
CC="${CC:-cc}"
# a plain build of our own, whatever the calling make was asked
MAKE_ARGS=(-s --no-print-directory -j4 "BUILD=$TMP/build" SANITIZE=
           "CFLAGS=-O2 -g" LDFLAGS=)

# --- install -----------------------------------------------------------------
if make "${MAKE_ARGS[@]}" install "PREFIX=$PREFIX" >"$LOG" 2>&1; then
    ok "make install PREFIX=<tmp>"
else
    not_ok "make install PREFIX=<tmp>"
    show "$LOG"
    finish 1
fi

VERSION="$(sed -n 's/^#define DYN_VERSION *"\(.*\)"/\1/p' api/dyndb.h)"
FILES=(lib/sqlite-dynamodb/dynamodb.so "lib/libdyndb.so.$VERSION"
       lib/libdyndb.so.0 lib/libdyndb.so lib/libdyndb.a include/dyndb.h
       lib/pkgconfig/dyndb.pc)
missing=""
for f in "${FILES[@]}"; do
    [ -e "$PREFIX/$f" ] || missing="$missing $f"
done
if [ -z "$missing" ]; then
    ok "installed: ${FILES[*]}"
else
    not_ok "installed files missing:$missing"
fi

# only the public API leaves the libraries
others="$(nm -D --defined-only "$PREFIX/lib/libdyndb.so" |
          awk '$2 ~ /[TDBRVW]/ && $3 !~ /^dyn_/ {print $3}' | head)"
n_pub="$(nm -D --defined-only "$PREFIX/lib/libdyndb.so" | grep -c ' dyn_')"
n_hdr="$(grep -cE '^[a-z][a-z_ *]*\bdyn_[a-z0-9_]+\(' api/dyndb.h)"
if [ -z "$others" ] && [ "$n_pub" -eq "$n_hdr" ]; then
    ok "libdyndb.so exports the $n_hdr functions of dyndb.h and nothing else"
else
    not_ok "libdyndb.so exports $n_pub dyn_* (header: $n_hdr) and: $others"
fi
others="$(nm -g --defined-only "$PREFIX/lib/libdyndb.a" 2>/dev/null |
          awk 'NF == 3 && $3 !~ /^dyn_/ {print $3}' | head)"
if [ -z "$others" ]; then
    ok "libdyndb.a: every global symbol is dyn_*"
else
    not_ok "libdyndb.a has other global symbols: $others"
fi

export PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig"
PC_CFLAGS="$(pkg-config --cflags dyndb 2>"$LOG")"
PC_LIBS="$(pkg-config --libs dyndb 2>>"$LOG")"
# (--cflags also lists libcurl's, libcrypto's, zlib's and libcjson's, from
# Requires.private)
if [ "${PC_CFLAGS%% *}" = "-I$PREFIX/include" ] &&
   [ "$(echo $PC_LIBS)" = "-L$PREFIX/lib -Wl,-rpath,$PREFIX/lib -ldyndb" ] &&
   [ "$(pkg-config --modversion dyndb)" = "$VERSION" ] &&
   pkg-config --static --libs dyndb | grep -q -- -lcurl; then
    ok "pkg-config --cflags --libs dyndb: the prefix's, with its rpath"
else
    not_ok "pkg-config dyndb: '$PC_CFLAGS' '$PC_LIBS'"
    show "$LOG"
fi

# the installed header stands alone, in strict C11 and in C++
printf '#include <dyndb.h>\nint main(void) { return dyn_version() == 0; }\n' \
    >"$TMP/h.c"
if $CC -std=c11 -pedantic -Wall -Wextra -Werror $PC_CFLAGS -c "$TMP/h.c" \
       -o "$TMP/h.o" >"$LOG" 2>&1 &&
   { ! command -v c++ >/dev/null ||
     c++ -x c++ -Wall -Wextra -Werror $PC_CFLAGS -c "$TMP/h.c" \
         -o "$TMP/hpp.o" >>"$LOG" 2>&1; }; then
    ok "dyndb.h compiles alone (C11 -pedantic, C++)"
else
    not_ok "dyndb.h compiles alone (C11 -pedantic, C++)"
    show "$LOG"
fi

# --- the examples ------------------------------------------------------------
if python3 tests/harness/fixtures.py lesson "$TABLE" >"$LOG" 2>&1; then
    ok "the lesson example loaded into $TABLE"
else
    not_ok "the lesson example loaded into $TABLE"
    show "$LOG"
    finish 1
fi

# build NAME: examples/NAME.c, shared, with the installed pkg-config flags
build() {
    $CC -std=c11 -Wall -Wextra -Werror "examples/$1.c" -o "$TMP/$1" \
        $(pkg-config --cflags --libs dyndb) -pthread >"$LOG" 2>&1
}

# run NAME ARGS...: the example's stdout against examples/NAME.expected
run() {
    local name="$1"; shift
    if ! env -u LD_LIBRARY_PATH "$TMP/$name" "$@" \
           >"$TMP/$name.out" 2>"$TMP/$name.err"; then
        echo "#   exit status $?"
        show "$TMP/$name.err" 10
        return 1
    fi
    if [ "$name" = hello ]; then
        # the attribute order of an item is the server's: compare as JSON
        python3 -c 'import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
sys.exit(a != b)' "$TMP/$name.out" "examples/$name.expected" && return 0
    else
        diff -u "examples/$name.expected" "$TMP/$name.out" >"$TMP/$name.diff" &&
            return 0
    fi
    diff -u "examples/$name.expected" "$TMP/$name.out" | head -40 |
        sed 's/^/#   /'
    return 1
}

for ex in hello lesson threads; do
    if build "$ex"; then
        ok "examples/$ex.c builds with \$(pkg-config --cflags --libs dyndb)"
    else
        not_ok "examples/$ex.c builds with \$(pkg-config --cflags --libs dyndb)"
        show "$LOG"
        continue
    fi
    if ! readelf -d "$TMP/$ex" | grep -q 'NEEDED.*libdyndb\.so\.0'; then
        not_ok "examples/$ex is not linked to libdyndb.so.0"
        continue
    fi
    if ! readelf -d "$TMP/$ex" | grep -q "R.*PATH.*\[$PREFIX/lib\]"; then
        not_ok "examples/$ex has no rpath $PREFIX/lib"
        readelf -d "$TMP/$ex" | grep -i path | sed 's/^/#   /'
        continue
    fi
    case "$ex" in
        threads) args=("$TABLE" 8 1000) ;;
        *) args=("$TABLE") ;;
    esac
    if run "$ex" "${args[@]}"; then
        ok "examples/$ex ${args[*]}: output as examples/$ex.expected"
    else
        not_ok "examples/$ex ${args[*]}: output as examples/$ex.expected"
    fi
done

# the lesson again, linked statically: no libdyndb.so needed, and it
# leaves the table as it found it, so the output is the same
if $CC -std=c11 -Wall -Wextra -Werror examples/lesson.c -o "$TMP/lesson" \
       $PC_CFLAGS "$PREFIX/lib/libdyndb.a" $(pkg-config --libs libcurl libcjson libssl libcrypto zlib) \
       -pthread -lm >"$LOG" 2>&1 &&
   ! readelf -d "$TMP/lesson" | grep -q libdyndb &&
   run lesson "$TABLE"; then
    ok "examples/lesson linked with libdyndb.a: the same output, run twice"
else
    not_ok "examples/lesson linked with libdyndb.a: the same output, run twice"
    show "$LOG"
fi

# the two recipes of the installed dyndb.h ("** Build:" and "** Static:"),
# read from the header's text (its continuation lines joined) and run as it
# writes them, app.c being examples/hello.c: each builds a program that
# gives hello's output, the static one without libdyndb.so
recipe() {  # recipe WORD: the command dyndb.h gives after "** WORD:"
    python3 -c 'import re, sys
text = open(sys.argv[1]).read()
m = re.search(r"^\*\* " + sys.argv[2] + r":[ \t]*((?:.*\\\n)*.*)$", text, re.M)
print(re.sub(r"\\\n\*\*[ \t]*", " ", m.group(1)) if m else "")' \
        "$PREFIX/include/dyndb.h" "$1"
}
for how in Build Static; do
    cmd="$(recipe "$how")"
    case "$cmd" in
        "cc app.c "*) ;;
        *) not_ok "dyndb.h's $how recipe: not found, or not 'cc app.c ...': '$cmd'"
           continue ;;
    esac
    cmd="${cmd/app.c/examples/hello.c} -o $TMP/hello"
    rm -f "$TMP/hello"
    if sh -c "$cmd" >"$LOG" 2>&1 &&
       { [ "$how" = Build ] || ! readelf -d "$TMP/hello" | grep -q libdyndb; } &&
       run hello "$TABLE"; then
        ok "dyndb.h's $how recipe as written builds examples/hello.c: $cmd"
    else
        not_ok "dyndb.h's $how recipe as written builds examples/hello.c: $cmd"
        show "$LOG"
    fi
done

# the installed extension loads from its folder
if command -v sqlite3 >/dev/null; then
    out="$(printf '%s\n' \
        ".load $PREFIX/lib/sqlite-dynamodb/dynamodb" \
        "CREATE VIRTUAL TABLE t USING dynamodb(table=$TABLE);" \
        "SELECT count(*) FROM t WHERE PK = 'CUSTOMER#alice';" |
        sqlite3 2>&1)"
    if [ "$out" = 4 ]; then
        ok "sqlite3 .load <prefix>/lib/sqlite-dynamodb/dynamodb"
    else
        not_ok "sqlite3 .load <prefix>/lib/sqlite-dynamodb/dynamodb: $out"
    fi
fi

# --- a prefix the dynamic linker searches: ldconfig, no rpath ---------------
# (a folder of ours stands for /usr/local/lib: LDSO_DIRS names it, and a
# stand-in ldconfig records that it ran)
SYS="$TMP/sys"
printf '#!/bin/sh\necho "$@" >>"%s/ldconfig.ran"\n' "$TMP" >"$TMP/ldconfig"
chmod +x "$TMP/ldconfig"
if make "${MAKE_ARGS[@]}" install "PREFIX=$SYS" "LDSO_DIRS=$SYS/lib" \
        "LDCONFIG=$TMP/ldconfig" >"$LOG" 2>&1 &&
   [ -f "$TMP/ldconfig.ran" ] &&
   grep -qx 'Libs: -L${libdir} -ldyndb' "$SYS/lib/pkgconfig/dyndb.pc" &&
   make "${MAKE_ARGS[@]}" uninstall "PREFIX=$SYS" >>"$LOG" 2>&1; then
    ok "install into a folder ld.so searches: ldconfig runs, no rpath in dyndb.pc"
else
    not_ok "install into a folder ld.so searches: ldconfig runs, no rpath in dyndb.pc"
    show "$LOG"
    grep Libs "$SYS/lib/pkgconfig/dyndb.pc" 2>&1 | sed 's/^/#   /'
fi
rm -f "$TMP/ldconfig.ran"
if make "${MAKE_ARGS[@]}" install DESTDIR="$TMP/stage2" "PREFIX=$SYS" \
        "LDSO_DIRS=$SYS/lib" "LDCONFIG=$TMP/ldconfig" >"$LOG" 2>&1 &&
   [ -f "$TMP/stage2$SYS/lib/libdyndb.so" ] && [ ! -f "$TMP/ldconfig.ran" ]; then
    ok "install with DESTDIR: no ldconfig (the files are not in place yet)"
else
    not_ok "install with DESTDIR: no ldconfig (the files are not in place yet)"
    show "$LOG"
fi
rm -rf "$TMP/stage2"

# --- header dependencies -----------------------------------------------------
# make -W H (H taken as changed, not touched) in this suite's build: the
# objects compiled must be exactly those whose sources include H, directly
# or through other headers of ours.
SRCS="$(make -pq 2>/dev/null |
        sed -n 's/^\(CLIENT\|CACHE\|EXT\|API\)_SRC *:= *//p' | tr '\n' ' ')"
includers() {  # the sources of $SRCS that include header $1, transitively
    python3 -c '
import os, re, sys
target, srcs = os.path.normpath(sys.argv[1]), sys.argv[2:]
inc = re.compile(r"^\s*#\s*include\s+\"([^\"]+)\"", re.M)
def closure(path, seen):
    for name in inc.findall(open(path).read()):
        h = os.path.normpath(os.path.join(os.path.dirname(path), name))
        if os.path.exists(h) and h not in seen:
            seen.add(h)
            closure(h, seen)
    return seen
print(" ".join(sorted(s for s in srcs if target in closure(s, set()))))
' "$1" $SRCS
}
for h in client/sigv4.h cache/store.h api/api_int.h ext/dd_ext.h; do
    want="$(includers "$h")"
    got="$(make --no-print-directory -j4 "BUILD=$TMP/build" SANITIZE= \
             "CFLAGS=-O2 -g" LDFLAGS= -W "$h" loadable lib 2>&1 |
           sed -n 's/.* -c \([^ ]*\.c\) .*/\1/p' | sort | tr '\n' ' ')"
    if [ -n "$want" ] && [ "$(echo $got)" = "$want" ]; then
        ok "a change of $h rebuilds its $(echo $want | wc -w) includers and nothing else"
    else
        not_ok "a change of $h rebuilds '$(echo $got)'; its includers: '$want'"
    fi
done

# --- DESTDIR, uninstall ------------------------------------------------------
STAGE="$TMP/stage"
if make "${MAKE_ARGS[@]}" install DESTDIR="$STAGE" PREFIX=/opt/dyn \
        >"$LOG" 2>&1 &&
   [ -f "$STAGE/opt/dyn/include/dyndb.h" ] &&
   grep -qx 'prefix=/opt/dyn' "$STAGE/opt/dyn/lib/pkgconfig/dyndb.pc" &&
   make "${MAKE_ARGS[@]}" uninstall DESTDIR="$STAGE" PREFIX=/opt/dyn \
        >>"$LOG" 2>&1 &&
   [ -z "$(find "$STAGE" ! -type d)" ]; then
    ok "make install/uninstall DESTDIR=<stage> PREFIX=/opt/dyn"
else
    not_ok "make install/uninstall DESTDIR=<stage> PREFIX=/opt/dyn"
    show "$LOG"
    find "$STAGE" ! -type d | sed 's/^/#   left: /'
fi

if make "${MAKE_ARGS[@]}" uninstall "PREFIX=$PREFIX" >"$LOG" 2>&1 &&
   [ -z "$(find "$PREFIX" ! -type d)" ] &&
   [ ! -e "$PREFIX/lib/sqlite-dynamodb" ]; then
    ok "make uninstall removes every installed file"
else
    not_ok "make uninstall removes every installed file"
    show "$LOG"
    find "$PREFIX" ! -type d | sed 's/^/#   left: /'
fi

finish 0
