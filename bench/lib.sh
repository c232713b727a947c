# bench/lib.sh -- sourced by the bench scripts (ROOT set, the working
# directory ROOT): what each of them begins with.
#
#   bench_env           the test AWS environment of tests/harness/lib.sh
#                       (keys "test", us-east-1, no profile) and no
#                       instance metadata: a bench talks to loopback only
#   bench_work NAME     WORK, a new folder .test-tmp/NAME.XXXXXX, and an
#                       EXIT trap that stops the DynamoDB Local started in
#                       WORK/ddb (if any) and removes WORK (kept, and
#                       named on stderr, when BENCH_KEEP is set to 1)

bench_env() {
    . "$ROOT/tests/harness/lib.sh"
    set_test_aws_env
    export AWS_EC2_METADATA_DISABLED=true
}

bench_work() {
    mkdir -p "$ROOT/.test-tmp"
    WORK="$(mktemp -d "$ROOT/.test-tmp/$1.XXXXXX")"
    trap bench_cleanup EXIT
}

# The EXIT trap of bench_work.
bench_cleanup() {
    "$ROOT/tests/harness/ddblocal.sh" stop "$WORK/ddb" >/dev/null 2>&1 || true
    if [ "${BENCH_KEEP:-}" = 1 ]; then
        echo "# kept: $WORK" >&2
    else
        rm -rf "$WORK"
    fi
}
