#!/usr/bin/env bash
# make bench-cpu: the CPU goals in one table.  Runs, one after another,
# make bench-decode (bench/decode_instr.sh: Scan pages decoded against
# simdjson), make bench-warm (bench/warm_instr.sh: warm lookups against a
# native SQLite table) and make bench-request (bench/request_instr.sh: a
# cold GetItem against a bare libcurl loop),
# each counting instructions under callgrind with its floor in the same
# run, then bench/cpu_table.py: each workload's RESULT line beside its
# floor and goal, with the load average at the start and the end, and
# bench-scale's newest client CPU an item for the extension, boto3 and the
# JS SDK when a run of it exists (make bench runs bench-scale first).
# Only prints; nothing is asserted.  Each part's whole output is kept in
# build/bench-cpu/.  A part that fails is named and the others still run;
# the exit status is then 1.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
OUT="$ROOT/build/bench-cpu"
mkdir -p "$OUT"
load_start="$(cut -d' ' -f1-3 /proc/loadavg)"
status=0
outs=()
for part in bench-decode bench-warm bench-request; do
    echo "bench-cpu: make $part" >&2
    if ! make --no-print-directory "$part" >"$OUT/$part.out" 2>"$OUT/$part.err"; then
        echo "bench-cpu: make $part failed; its output: $OUT/$part.err" >&2
        status=1
    fi
    outs+=("$OUT/$part.out")
done
python3 bench/cpu_table.py --load-start "$load_start" \
    --scale "$ROOT/build/bench-scale/latest/results.json" "${outs[@]}" \
    | tee "$OUT/table.md" || status=1
exit $status
