# Sourced by the suites that run on a real redis-server (tests/suites/60,
# 63 and 64): their TAP lines and what a missing redis-server means,
# written once.  Not executable on its own.
#
#   tap RC NAME [DETAIL]
#                  one TAP line, numbered on from N (RC 0: ok); DETAIL's
#                  first 30 lines as comments when it failed
#   relay          a TAP driver's lines (stdin) numbered on from ours, its
#                  plan dropped, anything else passed through
#   need_redis PREFIX SUITE
#                  return when redis-server and redis-cli are installed;
#                  else exit: in CI (CI=true) with a failing line named
#                  PREFIX, since tools/install-deps.sh installs them there,
#                  and elsewhere with a skip line naming SUITE, so that the
#                  suite never passes without running

N=0
tap() {
  N=$((N + 1))
  if [ "$1" = 0 ]; then echo "ok $N - $2"; else
    echo "not ok $N - $2"
    [ -n "${3:-}" ] && printf '%s\n' "$3" | head -n 30 | sed 's/^/#   /'
  fi
}

relay() {
  local line
  while IFS= read -r line; do
    case "$line" in
      "ok "*) N=$((N + 1)); echo "ok $N - ${line#ok * - }" ;;
      "not ok "*) N=$((N + 1)); echo "not ok $N - ${line#not ok * - }" ;;
      "1.."*) ;;
      *) echo "$line" ;;
    esac
  done
}

need_redis() {
  tests/harness/redis.sh have && return 0
  if [ "${CI:-}" = true ]; then
    tap 1 "$1: redis-server and redis-cli installed (tools/install-deps.sh)"
    echo "1..$N"
    exit 1
  fi
  echo "# skip $2: redis-server not installed; tools/install-deps.sh (make test, make check) installs it (1 tests)"
  exit 0
}
