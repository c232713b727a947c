#!/usr/bin/env bash
# tools/deb.sh -- the .deb from a staged install, with dpkg-deb alone (no
# debhelper, no network).  Called by `make deb` (mk/deb.mk), which first
# runs `make install DESTDIR=STAGE PREFIX=/usr` with Debian's paths.
#
#   tools/deb.sh STAGE VERSION ARCH OUT.deb
#
# What it adds to STAGE before packing it:
#   - the binaries stripped as dh_strip does (--strip-unneeded, without
#     .comment and .note; the archive --strip-debug);
#   - usr/share/doc/sqlite-dynamodb/: copyright (Debian's machine-readable
#     format, from LICENSE), changelog.gz (a native package: the version
#     is the project's, no Debian revision, so not changelog.Debian.gz),
#     README.md and docs/*.md
#     (gzip -9n when over 4 KB, as dh_compress);
#   - DEBIAN/control: Depends computed from what the binaries link
#     (dpkg-shlibdeps where installed, else the packages owning their
#     NEEDED libraries, at the versions installed here: DEB_NO_SHLIBDEPS=1
#     forces that way), plus libsqlite3-0 (>= 3.38.0), which the extension
#     does not link (it calls SQLite through the pointers SQLite hands it)
#     but needs (sqlite3_vtab_in, sqlite3_vtab_rhs_value); Installed-Size;
#   - DEBIAN/shlibs and DEBIAN/triggers (ldconfig) for libdyndb.so.MAJOR,
#     DEBIAN/md5sums.
# Files are root's in the package (dpkg-deb --root-owner-group).  The
# package's maintainer is DEB_MAINTAINER (default: the project's).
set -euo pipefail

die() { echo "deb: ERROR: $*" >&2; exit 1; }
[ $# -eq 4 ] || die "usage: tools/deb.sh STAGE VERSION ARCH OUT.deb"
STAGE="$1" VERSION="$2" ARCH="$3" OUT="$4"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PKG=sqlite-dynamodb
MULTIARCH="${DEB_MULTIARCH:-$(${CC:-cc} -print-multiarch)}"
MAINTAINER="${DEB_MAINTAINER:-sqlite-dynamodb maintainers <maintainers@users.noreply.a-seed-60d0233b.example>}"
DOC="$STAGE/usr/share/doc/$PKG"
command -v dpkg-deb >/dev/null || die "dpkg-deb not found: install dpkg (Debian's)"
[ -d "$STAGE/usr" ] || die "no staged install in '$STAGE' (run make deb)"

# --- binaries, stripped ---------------------------------------------------
mapfile -t SHARED < <(find "$STAGE" -type f -name '*.so*' | sort)
for f in "${SHARED[@]}"; do
    strip --remove-section=.comment --remove-section=.note \
        --strip-unneeded "$f"
    chmod 644 "$f" # Debian's mode for a shared object
done
while IFS= read -r f; do
    strip --strip-debug --remove-section=.comment --remove-section=.note \
        --enable-deterministic-archives "$f"
done < <(find "$STAGE" -type f -name '*.a')

# --- docs -----------------------------------------------------------------
mkdir -p "$DOC/docs"
YEAR="$(sed -n 's/^Copyright (c) \([0-9]*\) .*/\1/p' "$ROOT/LICENSE")"
HOLDER="$(sed -n 's/^Copyright (c) [0-9]* \(.*\)/\1/p' "$ROOT/LICENSE")"
{
    echo "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/"
    echo "Upstream-Name: $PKG"
    echo
    echo "Files: *"
    echo "Copyright: $YEAR $HOLDER"
    echo "License: Expat"
    echo
    echo "License: Expat"
    # the licence's text after its copyright line, each line indented and
    # each empty line written " ." (the format's continuation lines)
    sed -n '/^Permission is hereby granted/,$p' "$ROOT/LICENSE" |
        sed -e 's/^$/./' -e 's/^/ /'
} >"$DOC/copyright"
DATE="$(git -C "$ROOT" log -1 --format=%aD 2>/dev/null || date -R)"
{
    echo "$PKG ($VERSION) unstable; urgency=medium"
    echo
    echo "  * Built from the source tree by make deb (tools/deb.sh)."
    echo
    echo " -- $MAINTAINER  $DATE"
} | gzip -9n >"$DOC/changelog.gz"
cp "$ROOT/README.md" "$DOC/README.md"
cp "$ROOT"/docs/*.md "$DOC/docs/"
find "$DOC" -type f -name '*.md' -size +4k -exec gzip -9n {} +
find "$STAGE" -type d -exec chmod 755 {} +
find "$DOC" -type f -exec chmod 644 {} +

# --- Depends ----------------------------------------------------------------
# shlibdeps_depends FILE...: the Depends line of dpkg-shlibdeps
shlibdeps_depends() {
    local tmp out
    tmp="$(mktemp -d)"
    mkdir -p "$tmp/debian"
    printf 'Source: %s\n\nPackage: %s\nArchitecture: any\n' "$PKG" "$PKG" \
        >"$tmp/debian/control"
    # -l: libdyndb.so.MAJOR is the package's own; the others are Debian's
    out="$(cd "$tmp" && dpkg-shlibdeps -O -l"$STAGE/usr/lib" "$@" 2>&1)" ||
        { rm -rf "$tmp"; die "dpkg-shlibdeps: $out"; }
    rm -rf "$tmp"
    sed -n 's/^shlibs:Depends=//p' <<<"$out"
}
# needed_depends FILE...: each NEEDED library (objdump -p) found by
# ldconfig, the package owning it (dpkg -S), at least at its installed
# version (the upstream part)
needed_depends() {
    local lib path pkg ver seen=" " out=""
    for lib in $(objdump -p "$@" | awk '/NEEDED/ {print $2}' | sort -u); do
        path="$(ldconfig -p | awk -v l="$lib" -v m="/$MULTIARCH/" \
            '$1 == l && index($NF, m) {print $NF; exit}')"
        [ -n "$path" ] || die "$lib (NEEDED) not found by ldconfig"
        pkg="$(dpkg -S "$(readlink -f "$path")" 2>/dev/null | head -n1 | cut -d: -f1)" ||
            true
        [ -n "$pkg" ] || pkg="$(dpkg -S "$path" 2>/dev/null | head -n1 | cut -d: -f1)"
        [ -n "$pkg" ] || die "no Debian package owns $path ($lib)"
        case "$seen" in *" $pkg "*) continue ;; esac
        seen="$seen$pkg "
        ver="$(dpkg-query -W -f='${Version}' "$pkg:$ARCH" 2>/dev/null ||
            dpkg-query -W -f='${Version}' "$pkg")"
        ver="${ver%-*}"
        out="$out${out:+, }$pkg (>= $ver)"
    done
    echo "$out"
}
BINARIES=()
for f in "${SHARED[@]}"; do [ -L "$f" ] || BINARIES+=("$f"); done
if [ "${DEB_NO_SHLIBDEPS:-0}" != 1 ] && command -v dpkg-shlibdeps >/dev/null; then
    DEPENDS="$(shlibdeps_depends "${BINARIES[@]}")"
else
    DEPENDS="$(needed_depends "${BINARIES[@]}")"
fi
[ -n "$DEPENDS" ] || die "no Depends computed for ${BINARIES[*]}"
DEPENDS="$DEPENDS, libsqlite3-0 (>= 3.38.0)"

# --- DEBIAN/ ----------------------------------------------------------------
MAJOR="${VERSION%%.*}"
mkdir -p "$STAGE/DEBIAN"
SIZE="$(du -k -s --apparent-size --exclude=DEBIAN "$STAGE" | cut -f1)"
cat >"$STAGE/DEBIAN/control" <<EOF
Package: $PKG
Version: $VERSION
Architecture: $ARCH
Maintainer: $MAINTAINER
Installed-Size: $SIZE
Depends: $DEPENDS
Recommends: sqlite3
Section: database
Priority: optional
Multi-Arch: same
Description: SQLite virtual table and cache over Amazon DynamoDB
 Plain SQL over Amazon DynamoDB from the sqlite3 shell, Python or any
 SQLite program: a virtual table that turns each WHERE into the cheapest
 correct DynamoDB call (GetItem, Query, BatchGetItem or a paginated Scan),
 with a cache in the process in the manner of DAX.
 .
 This package holds the loadable extension (".load dynamodb" in the
 sqlite3 shell), the C library libdyndb with its header and pkg-config
 file, and the documentation.
EOF
echo "libdyndb $MAJOR $PKG (>= $VERSION)" >"$STAGE/DEBIAN/shlibs"
echo "activate-noawait ldconfig" >"$STAGE/DEBIAN/triggers"
(cd "$STAGE" && find . -path ./DEBIAN -prune -o -type f -print | sed 's|^\./||' |
    LC_ALL=C sort | xargs md5sum) >"$STAGE/DEBIAN/md5sums"
chmod 644 "$STAGE"/DEBIAN/*

dpkg-deb --root-owner-group -Zxz --build "$STAGE" "$OUT" >/dev/null
echo "deb: $OUT"
