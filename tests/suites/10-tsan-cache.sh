#!/usr/bin/env bash
# The cache engine under ThreadSanitizer (tests/tsan/tsan_cache.c, built by
# mk/tsan.mk): 8 threads mixing gets, fills, writes, bumps and page reads
# on one small store.  Prints the binary's TAP lines, then one more that
# fails on any ThreadSanitizer report, then the plan.
#
# Environment: TSAN_ITERATIONS (operations per thread, default the
# binary's), TSAN_CC (compiler, default cc).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT" || exit 1

TMP="$(mktemp -d "${TMPDIR:-/tmp}/tsan-cache.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT
N=0

if ! make -s --no-print-directory build/tsan-cache >"$TMP/build" 2>&1; then
    echo "not ok 1 - tsan-cache: build with -fsanitize=thread"
    sed 's/^/#   /' "$TMP/build" | head -40
    echo "1..1"
    exit 1
fi

# run_once: the binary with reports on stderr; returns its exit status.
run_once() {
    TSAN_OPTIONS="halt_on_error=0 exitcode=66 second_deadlock_stack=1" \
        "$@" build/tsan-cache ${TSAN_ITERATIONS:-} >"$TMP/out" 2>"$TMP/err"
}
run_once
rc=$?
# Some kernels map memory where TSan cannot work with ASLR on: retry
# without address randomization.
if grep -q "unexpected memory mapping" "$TMP/err" && command -v setarch >/dev/null; then
    echo "# tsan-cache: retrying under setarch -R (unexpected memory mapping)"
    run_once setarch "$(uname -m)" -R
    rc=$?
fi

cat "$TMP/out"
N=$(grep -cE '^(not )?ok ' "$TMP/out")
reports=$(grep -c 'WARNING: ThreadSanitizer' "$TMP/err")
N=$((N + 1))
if [ "$reports" -eq 0 ] && { [ "$rc" -eq 0 ] || [ "$rc" -eq 1 ]; }; then
    echo "ok $N - tsan-cache: no ThreadSanitizer report"
else
    echo "not ok $N - tsan-cache: no ThreadSanitizer report ($reports reports, exit status $rc)"
    head -60 "$TMP/err" | sed 's/^/#   /'
fi
echo "1..$N"
[ "$rc" -eq 0 ] && [ "$reports" -eq 0 ]
