#!/usr/bin/env bash
# A short libFuzzer pass (FUZZ_SECONDS, default 5, per harness) over the
# harnesses of tests/fuzz/: the response parsers, the AttributeValue <-> JSON
# converters, the option parser and the expression builder.  `make fuzz`
# runs them longer (mk/fuzz.mk).  TAP lines; a crash, leak or UB report is
# a failure, its input kept in build/fuzz/.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT" || exit 1
SECS="${FUZZ_SECONDS:-5}"
FUZZERS="response json options read_body"
if ! command -v clang >/dev/null 2>&1; then
    echo "1..0 # SKIP clang not installed"
    exit 0
fi
if ! make --no-print-directory -s fuzz-build >.test-tmp/fuzz-build.log 2>&1; then
    echo "not ok 1 - fuzz: the harnesses build (make fuzz-build)"
    sed 's/^/#   /' .test-tmp/fuzz-build.log | tail -30
    echo "1..1"
    exit 1
fi
n=0
for f in $FUZZERS; do
    n=$((n + 1))
    mkdir -p "build/fuzz/corpus/$f"
    log="build/fuzz/$f.suite.log"
    if build/fuzz/fuzz_$f -max_total_time="$SECS" -artifact_prefix=build/fuzz/ \
         -print_final_stats=1 "build/fuzz/corpus/$f" "tests/fuzz/corpus/$f" \
         >"$log" 2>&1; then
        runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
        echo "ok $n - fuzz: $f, ${runs:-?} inputs in ${SECS}s, no crash, leak or UB"
    else
        echo "not ok $n - fuzz: $f"
        grep -E 'ERROR|SUMMARY|Test unit written|runtime error' "$log" | head -20 | sed 's/^/#   /'
    fi
done
echo "1..$n"
