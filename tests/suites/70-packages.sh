#!/usr/bin/env bash
# The packages as users get them (docs/packages.md): `make deb` built and
# extracted into a scratch root (dpkg-deb -x), its control fields, its file
# list, its Depends (dpkg-shlibdeps and the objdump fallback agree), lintian
# where installed; the packaged extension loads in sqlite3 without
# LD_LIBRARY_PATH and reads the e-commerce table; a C program built from
# the packaged dyndb.pc runs; `make dist`'s tarball holds what git tracks
# and builds with make, unpacked in a scratch folder; there, `pip install .`
# with Debian's /usr/bin/python3 (--no-build-isolation --no-index) into a
# scratch --target and into a venv (--system-site-packages), then a report
# through sqlite_dynamodb.load() with the sqlite3 module and with pandas
# (where installed); one version everywhere.  Each part is a SKIP line,
# with the reason, where dpkg-deb or Debian's python3 (with setuptools,
# wheel and pip) is absent.  TAP lines.
#
# Needs AWS_ENDPOINT_URL_DYNAMODB (tests/harness/run-all.sh sets it).  The
# builds go to their own folders under .test-tmp/, never build/; they are
# plain builds whatever SANITIZE says (packages are built so), and under
# SANITIZE=1 the suite is one SKIP line (the same packages again).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT" || exit 1
: "${AWS_ENDPOINT_URL_DYNAMODB:?run from tests/harness/run-all.sh}"

N=0
if [ "${SANITIZE:-}" = 1 ]; then
    # its builds are plain whatever SANITIZE says: the run without it has
    # tested the very same packages
    echo "ok 1 - packages # SKIP SANITIZE=1: the packages are built plain, as in the run without it"
    echo "1..1"
    exit 0
fi
ok() { N=$((N + 1)); echo "ok $N - packages: $*"; }
not_ok() { N=$((N + 1)); echo "not ok $N - packages: $*"; }
skip() { N=$((N + 1)); echo "ok $N - packages: $1 # SKIP $2"; }
# check NAME COMMAND...: ok/not ok as the command succeeds; its output
# (in $LOG) shown under a failure
check() {
    local name="$1"; shift
    if "$@" >"$LOG" 2>&1; then ok "$name"; else not_ok "$name"; show "$LOG"; fi
}
show() { tail -n "${2:-30}" "$1" | sed 's/^/#   /'; }

mkdir -p .test-tmp
TMP="$(mktemp -d "$ROOT/.test-tmp/packages.XXXXXX")"
TABLE="Packages070_$$"
trap 'python3 tests/harness/fixtures.py drop "$TABLE" >/dev/null 2>&1; rm -rf "$TMP"' EXIT
LOG="$TMP/log"
CC="${CC:-cc}"
PY=/usr/bin/python3
# plain builds of our own, whatever the calling make was asked
MAKE_ARGS=(-s --no-print-directory -j2 SANITIZE= "CFLAGS=-O2 -g" LDFLAGS=)
unset LD_PRELOAD ASAN_OPTIONS
VERSION="$(make -s --no-print-directory version)"
echo "# version (make version, from api/dyndb.h): $VERSION"

if ! python3 tests/harness/fixtures.py ecommerce "$TABLE" >"$LOG" 2>&1; then
    not_ok "the e-commerce example loaded into $TABLE"
    show "$LOG"
    echo "1..$N"
    exit 1
fi
# the report every package runs: orders by status, GSI2's one Query
REPORT_SQL="SELECT json_extract(item, '\$.status'), count(*), sum(json_extract(item, '\$.total')) FROM shop WHERE Type = 'ORDER' GROUP BY 1 ORDER BY 1;"
REPORT_EXPECTED='DELIVERED|1|18.25
PENDING|3|107.5
SHIPPED|2|1329'
VERSIONS="make:$VERSION"

# --- the Debian package -----------------------------------------------------
deb_tests() {
    local arch ma deb r lib pc f want got names1 names2
    arch="$(dpkg --print-architecture)"
    ma="$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || $CC -print-multiarch)"
    deb="$TMP/build/sqlite-dynamodb_${VERSION}_$arch.deb"
    if make "${MAKE_ARGS[@]}" BUILD="$TMP/build" deb >"$LOG" 2>&1 && [ -f "$deb" ]; then
        ok "make deb: $(basename "$deb")"
    else
        not_ok "make deb: $(basename "$deb")"
        show "$LOG"
        return
    fi
    dpkg-deb -f "$deb" >"$TMP/control"
    sed 's/^/#   /' "$TMP/control" | head -8
    field() { dpkg-deb -f "$deb" "$1"; }
    check "control: Package sqlite-dynamodb, Version $VERSION, Architecture $arch" \
        test "$(field Package) $(field Version) $(field Architecture)" = \
        "sqlite-dynamodb $VERSION $arch"
    check "control: Installed-Size (KB), Maintainer, Description" \
        bash -c '[[ "$1" =~ ^[0-9]+$ ]] && [ -n "$2" ] && [ -n "$3" ]' _ \
        "$(field Installed-Size)" "$(field Maintainer)" "$(field Description)"
    got="$(field Depends)"
    want=""
    for f in libcurl4 libcjson1 libssl3 zlib1g libsqlite3-0; do
        grep -Eq "(^|, )$f \(>= [^)]+\)" <<<"$got" || want="$want $f"
    done
    if [ -z "$want" ]; then
        ok "Depends: libcurl4, libcjson1, libssl3, zlib1g, libsqlite3-0, each with a version"
    else
        not_ok "Depends: missing or without a version:$want (Depends: $got)"
    fi
    # the objdump -p NEEDED + dpkg -S way names the same packages
    names1="$(sed 's/ ([^)]*)//g; s/, /\n/g' <<<"$got" | sort | tr '\n' ' ')"
    if make "${MAKE_ARGS[@]}" BUILD="$TMP/build" deb DEB_NO_SHLIBDEPS=1 >"$LOG" 2>&1; then
        names2="$(dpkg-deb -f "$deb" Depends | sed 's/ ([^)]*)//g; s/, /\n/g' | sort | tr '\n' ' ')"
        check "Depends without dpkg-shlibdeps (objdump NEEDED, dpkg -S): the same packages ($names1)" \
            test "$names1" = "$names2"
        [ "$names1" = "$names2" ] || echo "#   without dpkg-shlibdeps: $names2"
        make "${MAKE_ARGS[@]}" BUILD="$TMP/build" deb >"$LOG" 2>&1
    else
        not_ok "make deb DEB_NO_SHLIBDEPS=1"
        show "$LOG"
    fi

    # the files, exactly
    dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./||; s|/$||' |
        grep -v '^$' | grep -v '^usr/share/doc/sqlite-dynamodb/docs/' | sort >"$TMP/files"
    lib="usr/lib/$ma"
    printf '%s\n' usr usr/include usr/include/dyndb.h usr/lib "$lib" \
        "$lib/dynamodb.so" "$lib/libdyndb.a" "$lib/libdyndb.so" \
        "$lib/libdyndb.so.${VERSION%%.*}" "$lib/libdyndb.so.$VERSION" \
        "$lib/pkgconfig" "$lib/pkgconfig/dyndb.pc" usr/share usr/share/doc \
        usr/share/doc/sqlite-dynamodb usr/share/doc/sqlite-dynamodb/README.md.gz \
        usr/share/doc/sqlite-dynamodb/docs \
        usr/share/doc/sqlite-dynamodb/changelog.gz \
        usr/share/doc/sqlite-dynamodb/copyright usr/share/lintian \
        usr/share/lintian/overrides usr/share/lintian/overrides/sqlite-dynamodb |
        sort >"$TMP/files.want"
    if diff -u "$TMP/files.want" "$TMP/files" >"$LOG"; then
        ok "the package's files: the extension, libdyndb.so.$VERSION and its two links, libdyndb.a, dyndb.h, dyndb.pc, the docs"
    else
        not_ok "the package's files"
        show "$LOG"
    fi
    check "docs: every docs/*.md under usr/share/doc/sqlite-dynamodb/docs/" \
        test "$(dpkg-deb -c "$deb" | grep -c 'usr/share/doc/sqlite-dynamodb/docs/.*\.md')" = \
        "$(ls docs/*.md | wc -l)"

    r="$TMP/root"
    rm -rf "$r"
    dpkg-deb -x "$deb" "$r"
    check "copyright: Debian's machine-readable format, the Expat licence" \
        grep -q '^License: Expat' "$r/usr/share/doc/sqlite-dynamodb/copyright"
    check "libdyndb.so.${VERSION%%.*} -> libdyndb.so.$VERSION, libdyndb.so -> libdyndb.so.${VERSION%%.*}" \
        test "$(readlink "$r/$lib/libdyndb.so.${VERSION%%.*}") $(readlink "$r/$lib/libdyndb.so")" = \
        "libdyndb.so.$VERSION libdyndb.so.${VERSION%%.*}"
    check "libdyndb's SONAME is libdyndb.so.${VERSION%%.*}; no RUNPATH in either library" \
        bash -c "objdump -p '$r/$lib/libdyndb.so.$VERSION' | grep -q 'SONAME *libdyndb.so.${VERSION%%.*}\$' &&
                 ! objdump -p '$r/$lib/libdyndb.so.$VERSION' '$r/$lib/dynamodb.so' | grep -Eq 'RPATH|RUNPATH'"

    check "dyndb.pc: libdir \${prefix}/lib/$ma, no rpath (a folder ld.so searches)" \
        bash -c "grep -qx 'libdir=\${prefix}/lib/$ma' '$r/$lib/pkgconfig/dyndb.pc' &&
                 grep -qx 'Libs: -L\${libdir} -ldyndb' '$r/$lib/pkgconfig/dyndb.pc'"

    # the extension, by its full path, without LD_LIBRARY_PATH
    got="$(env -u LD_LIBRARY_PATH sqlite3 -batch :memory: ".load $r/$lib/dynamodb" \
        "CREATE VIRTUAL TABLE shop USING dynamodb(table=$TABLE);" \
        'SELECT dynamodb_calls() IS NULL;' "$REPORT_SQL" \
        'SELECT dynamodb_calls();' 2>&1)"
    if [ "$got" = "0
$REPORT_EXPECTED
Query GSI2" ]; then
        ok "the packaged extension loads in sqlite3 (no LD_LIBRARY_PATH) and reads $TABLE: one Query of GSI2"
    else
        not_ok "the packaged extension loads in sqlite3 and reads $TABLE"
        sed 's/^/#   got: /' <<<"$got"
    fi
    # the short name of the docs: dlopen searches /usr/lib/MULTIARCH, which
    # LD_LIBRARY_PATH stands for in the scratch root
    got="$(LD_LIBRARY_PATH="$r/$lib" sqlite3 -batch :memory: '.load dynamodb' \
        'SELECT dynamodb_version();' 2>&1)"
    check "'.load dynamodb' finds it in the library folder (LD_LIBRARY_PATH standing for /usr/lib/$ma)" \
        test "$got" = "$VERSION"
    VERSIONS="$VERSIONS deb-control:$(field Version) deb-dynamodb_version():$got"

    # a program built from the packaged dyndb.pc
    pc="$r/$lib/pkgconfig"
    cat >"$TMP/prog.c" <<'EOF'
#include <dyndb.h>
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv) {
  dyn_client *c = NULL;
  char *json = NULL;
  dyn_error err;
  dyn_code rc = dyn_client_new(NULL, &c, &err);
  if(!rc)
    rc = dyn_get_json(c, argv[1], "{\"PK\":\"USER#alice\",\"SK\":\"ORDER#o-0001\"}",
                      0, &json, &err);
  if(rc) {
    fprintf(stderr, "prog: %s: %s\n", dyn_code_name(rc), err.message);
    return 1;
  }
  printf("%s %s %s\n", dyn_version(), DYN_VERSION,
         json && strstr(json, "\"SHIPPED\"") ? "SHIPPED" : "?");
  dyn_free(json);
  dyn_client_free(c);
  return argc < 2;
}
EOF
    if PKG_CONFIG_PATH="$pc" pkg-config --define-variable=prefix="$r/usr" \
           --modversion dyndb >"$TMP/modversion" 2>"$LOG" &&
       $CC -std=c11 -Wall -Werror "$TMP/prog.c" -o "$TMP/prog" \
           $(PKG_CONFIG_PATH="$pc" pkg-config --define-variable=prefix="$r/usr" \
             --cflags --libs dyndb) >>"$LOG" 2>&1; then
        ok "a program builds with the packaged dyndb.pc (PKG_CONFIG_PATH, prefix=<scratch root>/usr)"
        got="$(LD_LIBRARY_PATH="$r/$lib" "$TMP/prog" "$TABLE" 2>&1)"
        check "it runs against the packaged libdyndb.so.${VERSION%%.*} and reads $TABLE" \
            test "$got" = "$VERSION $VERSION SHIPPED"
        [ "$got" = "$VERSION $VERSION SHIPPED" ] || echo "#   got: $got"
        check "the program links the packaged library, not another" \
            bash -c "LD_LIBRARY_PATH='$r/$lib' ldd '$TMP/prog' | grep -q '$r/$lib/libdyndb.so.${VERSION%%.*}'"
        VERSIONS="$VERSIONS dyndb.pc:$(cat "$TMP/modversion") dyn_version():${got%% *}"
    else
        not_ok "a program builds with the packaged dyndb.pc"
        show "$LOG"
    fi

    if command -v lintian >/dev/null; then
        lintian --pedantic "$deb" >"$LOG" 2>&1
        if ! grep -Eq '^[EWIP]: ' "$LOG"; then
            ok "lintian --pedantic: nothing reported"
        else
            not_ok "lintian --pedantic"
            grep -E '^[EWIP]: ' "$LOG" | head -20 | sed 's/^/#   /'
        fi
    else
        skip "lintian" "lintian is not installed (apt-get install lintian)"
    fi
}

if command -v dpkg-deb >/dev/null; then
    deb_tests
else
    skip "the Debian package" "dpkg-deb not found (not a Debian system)"
fi

# The Python package is built from the unpacked tarball when there is one
# (pip builds in the source tree: the checkout's build/ stays untouched).
SRC="$ROOT"
# --- make dist ----------------------------------------------------------------
tarball="$TMP/build/sqlite-dynamodb-$VERSION.tar.gz"
if command -v git >/dev/null && git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    if make "${MAKE_ARGS[@]}" BUILD="$TMP/build" dist >"$LOG" 2>&1 && [ -f "$tarball" ]; then
        ok "make dist: $(basename "$tarball")"
        tar tzf "$tarball" | sed "s|^sqlite-dynamodb-$VERSION/||" | sort >"$TMP/dist.files"
        check "the tarball holds every file git tracks, and nothing else" \
            diff <(git ls-files | sort) "$TMP/dist.files"
        mkdir -p "$TMP/dist"
        tar xzf "$tarball" -C "$TMP/dist"
        d="$TMP/dist/sqlite-dynamodb-$VERSION"
        if (cd "$d" && make -s --no-print-directory -j2 SANITIZE= WERROR= >"$LOG" 2>&1) &&
           [ "$(sqlite3 -batch :memory: ".load $d/build/dynamodb" 'SELECT dynamodb_version();' 2>&1)" = "$VERSION" ]; then
            ok "the tarball, unpacked in a scratch folder, builds with make; its extension says $VERSION"
            SRC="$d"
        else
            not_ok "the tarball, unpacked in a scratch folder, builds with make"
            show "$LOG"
        fi
    else
        not_ok "make dist"
        show "$LOG"
    fi
else
    skip "make dist" "not a git checkout"
fi


# --- the Python package -----------------------------------------------------
py_tests() {
    local t="$TMP/py" v="$TMP/venv" got
    if (cd "$SRC" && "$PY" -m pip install --no-build-isolation --no-index \
           --no-cache-dir --disable-pip-version-check --target "$t" .) >"$LOG" 2>&1; then
        ok "$PY -m pip install --no-build-isolation --no-index --target <tmp> ."
    else
        not_ok "$PY -m pip install --no-build-isolation --no-index --target <tmp> ."
        show "$LOG"
        return
    fi
    (cd "$t" && find sqlite_dynamodb -name __pycache__ -prune -o -type f -print | sort) >"$TMP/pyfiles"
    check "it installs sqlite_dynamodb/__init__.py, _version.py and dynamodb.so" \
        test "$(tr '\n' ' ' <"$TMP/pyfiles")" = \
        "sqlite_dynamodb/__init__.py sqlite_dynamodb/_version.py sqlite_dynamodb/dynamodb.so "
    cat >"$TMP/report.py" <<'EOF'
import sqlite3
import sys

import sqlite_dynamodb

table, sql = sys.argv[1], sys.argv[2]
conn = sqlite3.connect(":memory:")
sqlite_dynamodb.load(conn)
try:  # load() turned extension loading off again
    conn.load_extension(sqlite_dynamodb.loadable_path())
    print("loading still enabled")
except sqlite3.OperationalError as e:
    print("after load():", e)
conn.execute("CREATE VIRTUAL TABLE shop USING dynamodb(table=%s)" % table)
conn.execute("SELECT dynamodb_calls()")
for row in conn.execute(sql):
    print("|".join(str(v) for v in row))
print(conn.execute("SELECT dynamodb_calls()").fetchone()[0])
print("versions:", sqlite_dynamodb.__version__,
      conn.execute("SELECT dynamodb_version()").fetchone()[0])
if len(sys.argv) > 3:
    import pandas
    df = pandas.read_sql("SELECT json_extract(item, '$.status') AS status, "
                         "json_extract(item, '$.total') AS total FROM shop "
                         "WHERE Type = 'ORDER'", conn)
    print(df.groupby("status")["total"].agg(["count", "sum"]).to_csv(header=False).strip())
EOF
    got="$(cd "$TMP" && env -u LD_LIBRARY_PATH PYTHONPATH="$t" "$PY" report.py "$TABLE" "$REPORT_SQL" 2>&1)"
    if [ "$got" = "after load(): not authorized
$REPORT_EXPECTED
Query GSI2
versions: $VERSION $VERSION" ]; then
        ok "sqlite_dynamodb.load(conn) with the sqlite3 module: the report, one Query of GSI2, loading off again"
    else
        not_ok "sqlite_dynamodb.load(conn) with the sqlite3 module"
        sed 's/^/#   got: /' <<<"$got"
    fi
    VERSIONS="$VERSIONS python:$(sed -n 's/^versions: \([^ ]*\) .*/\1/p' <<<"$got")"
    VERSIONS="$VERSIONS python-dynamodb_version():$(sed -n 's/^versions: [^ ]* //p' <<<"$got")"
    VERSIONS="$VERSIONS pip:$(sed -n 's/^Version: //p' "$t"/sqlite_dynamodb-*.dist-info/METADATA)"
    # the way docs/python.md says: a venv that sees Debian's packages
    # (setuptools, wheel, pip, pandas), pip install . in it
    if "$PY" -m venv --system-site-packages --without-pip "$v" >"$LOG" 2>&1 &&
       (cd "$SRC" && "$v/bin/python3" -m pip install --no-build-isolation \
            --no-index --no-cache-dir --disable-pip-version-check .) >>"$LOG" 2>&1; then
        got="$(cd "$TMP" && env -u PYTHONPATH "$v/bin/python3" report.py "$TABLE" "$REPORT_SQL" 2>&1 | sed -n 2,5p)"
        check "in a venv (--system-site-packages): pip install ., the same report" \
            test "$got" = "$REPORT_EXPECTED
Query GSI2"
        [ "$got" = "$REPORT_EXPECTED
Query GSI2" ] || sed 's/^/#   got: /' <<<"$got"
        check "the venv's module is the venv's, under lib/python3.*/site-packages" \
            bash -c "cd '$TMP' && '$v/bin/python3' -c 'import sqlite_dynamodb; print(sqlite_dynamodb.loadable_path())' | grep -q '^$v/lib/python3[.0-9]*/site-packages/sqlite_dynamodb/dynamodb\$'"
    else
        not_ok "a venv (--system-site-packages --without-pip) and pip install . in it"
        show "$LOG"
    fi
    if "$PY" -c 'import pandas' 2>/dev/null; then
        got="$(cd "$TMP" && PYTHONPATH="$t" "$PY" report.py "$TABLE" "$REPORT_SQL" pandas 2>&1 | tail -n 3)"
        check "the same report with pandas.read_sql" test "$got" = \
            "DELIVERED,1,18.25
PENDING,3,107.5
SHIPPED,2,1329.0" || sed 's/^/#   pandas: /' <<<"$got"
    else
        skip "the report with pandas" "$PY has no pandas (apt-get install python3-pandas)"
    fi
}

if [ ! -x "$PY" ]; then
    skip "the Python package" "no Debian $PY"
elif ! "$PY" -c 'import setuptools, wheel' 2>/dev/null ||
     ! "$PY" -m pip --version >/dev/null 2>&1; then
    skip "the Python package" "$PY lacks setuptools, wheel or pip (python3-setuptools python3-wheel python3-pip: tools/install-deps.sh)"
elif ! "$PY" -c 'import sqlite3; sqlite3.connect(":memory:").enable_load_extension(True)' 2>/dev/null; then
    skip "the Python package" "$PY's sqlite3 cannot load extensions"
else
    py_tests
fi

# --- one version ------------------------------------------------------------
echo "# versions: $VERSIONS"
bad=""
for v in $VERSIONS; do [ "${v#*:}" = "$VERSION" ] || bad="$bad $v"; done
num="$(sed -n 's/^#define DYN_VERSION_NUMBER *\([0-9]*\).*/\1/p' api/dyndb.h)"
IFS=. read -r maj min pat <<<"$VERSION"
[ "$num" = $((maj * 10000 + min * 100 + pat)) ] || bad="$bad DYN_VERSION_NUMBER:$num"
if [ -z "$bad" ]; then
    ok "one version, $VERSION, in all $(wc -w <<<"$VERSIONS") places and DYN_VERSION_NUMBER $num"
else
    not_ok "versions that differ from $VERSION:$bad"
fi

echo "1..$N"
