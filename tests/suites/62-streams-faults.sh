#!/usr/bin/env bash
# coherence=streams under the faults of a stream (tests/faults/
# streams_faults.py through tests/faults/streams_proxy.py in front of
# DynamoDB Local): expired iterators, LimitExceededException (and
# max_staleness while throttled), TrimmedDataAccessException, a shard that
# ends, the stream disabled and enabled again.  TAP output.
set -u
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT" || exit 1
: "${AWS_ENDPOINT_URL_DYNAMODB:?run from tests/harness/run-all.sh}"
export AWS_EC2_METADATA_DISABLED=true
. tests/faults/streams_env.sh "streams faults"
coproc PROXY { exec python3 tests/faults/streams_proxy.py --upstream "$AWS_ENDPOINT_URL_DYNAMODB"; }
read -r port <&"${PROXY[0]}"
trap 'kill "$PROXY_PID" 2>/dev/null' EXIT
out=$(python3 tests/faults/streams_faults.py "$port" 2>&1)
status=$?
plan=$(printf '%s\n' "$out" | sed -n 's/^1\.\.\([0-9]*\)$/\1/p')
printf '%s\n' "$out" | grep -v '^1\.\.[0-9]*$'
n=${plan:-0}
if [ "$status" != 0 ] || [ -z "$plan" ]; then
  n=$((n + 1)); echo "not ok $n - streams faults: the driver failed (status $status)"
fi
echo "1..$n"
