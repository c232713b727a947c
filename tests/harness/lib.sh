# Sourced by tests/harness/run-all.sh and tests/harness/run-sql.sh. Not executable on its own.

# Make sure `python3` on PATH can import boto3 (fixtures.py and the tests'
# ".shell python3 tests/harness/fixtures.py ..." need it). On a machine where the first
# python3 (e.g. pyenv's) lacks boto3 but Debian's /usr/bin/python3 has it
# (apt package python3-boto3), put a shim directory first on PATH.
ensure_boto3_python() {
    local root="$1"
    if python3 -c 'import boto3' >/dev/null 2>&1; then
        return 0
    fi
    local p
    for p in /usr/bin/python3 /usr/local/bin/python3; do
        if [ -x "$p" ] && "$p" -c 'import boto3' >/dev/null 2>&1; then
            local shim="$root/.test-tmp/pyshim"
            mkdir -p "$shim"
            ln -sf "$p" "$shim/python3"
            export PATH="$shim:$PATH"
            return 0
        fi
    done
    echo "# warning: no python3 with boto3 found (apt-get install python3-boto3)" >&2
    return 1
}

# Default credentials for DynamoDB Local; never a real profile.
set_test_aws_env() {
    unset AWS_PROFILE
    export AWS_ACCESS_KEY_ID="${AWS_ACCESS_KEY_ID:-test}"
    export AWS_SECRET_ACCESS_KEY="${AWS_SECRET_ACCESS_KEY:-test}"
    export AWS_REGION="${AWS_REGION:-us-east-1}"
    export AWS_DEFAULT_REGION="${AWS_DEFAULT_REGION:-$AWS_REGION}"
}
