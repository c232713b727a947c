#!/usr/bin/env bash
# Credentials end to end: credential_process, container credentials and
# IMDSv2 (a fake metadata server), refresh before expiry, the "no
# credentials" message, TLS verification and ca_bundle, the services
# section's endpoint, malformed and oversized answers, a dead endpoint
# (tests/faults/creds_check.py); profiles of odd config and credentials
# files resolved by the extension and by botocore, compared
# (tests/trust/profile_oracle.py); assume-role, web identity and SSO
# (fake STS, SSO portal and OIDC on loopback, tests/faults/fake_aws.py)
# resolved by the extension and by botocore, compared
# (tests/trust/role_oracle.py), and over time in one session: one STS call
# for 51 statements, refreshes, the rotated token file, interrupt()
# (tests/faults/role_refresh.py); IAM Identity Center's own cases against
# botocore (tests/faults/sso_check.py: the token cache written back byte
# for byte, both sides of the refresh window, config errors). One TAP
# stream.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT" || exit 1
mkdir -p .test-tmp
OUT=.test-tmp/creds21.$$
rc=0
python3 tests/faults/creds_check.py "$@" >"$OUT.1" || rc=1
python3 tests/trust/profile_oracle.py >"$OUT.2" || rc=1
python3 tests/trust/role_oracle.py >"$OUT.3" || rc=1
python3 tests/faults/role_refresh.py >"$OUT.4" || rc=1
python3 tests/faults/sso_check.py >"$OUT.5" || rc=1
cat "$OUT.1" "$OUT.2" "$OUT.3" "$OUT.4" "$OUT.5" | awk '
  /^1\.\./ { next }
  /^(not )?ok [0-9]+/ { n++; sub(/ok [0-9]+/, "ok " n) }
  { print }
  END { print "1.." n }'
rm -f "$OUT.1" "$OUT.2" "$OUT.3" "$OUT.4" "$OUT.5"
exit $rc
