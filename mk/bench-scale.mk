# make bench-scale: the side-by-side benchmark of reads at scale
# (bench/scale/): the extension in the sqlite3 shell against boto3 and the
# AWS SDK for JavaScript v3, on ~100,000 items in its own DynamoDB Local,
# every client through a proxy adding 20 ms to every request: full Scans
# (count(*) and items; the peers with 8 parallel segments), a Query of a
# 10,000-item partition, 2,000 GetItems cold, the same keys batched, and
# warm.  Then the same without the proxy as the time budget allows.
# Prints one table of wall times and ratios (extension / best peer), and
# every measurement's CPU and peak RSS; asserts nothing.  See
# bench/scale/README.md.
#
#   make bench-scale                    everything (about 12-15 minutes)
#   make bench-scale-profile            callgrind of workloads 2 and 5
#   make bench-keys                     2,000 keys at 20 ms in a small table
#                                       of its own: the join, keys =, boto3
#                                       batch_get_item (about 2 minutes; the
#                                       same shapes are in bench-scale)
#   BENCH_REPS, BENCH_SCAN_REPS, BENCH_GET_REPS, BENCH_BUDGET,
#   BENCH_DELAY_MS, BENCH_PEER_SEGMENTS: see run.sh

#   make bench-writes                   the bulk writes side by side
#                                       (bench/scale/writes.py: a 10,000-row
#                                       INSERT alone and in a transaction, a
#                                       1,000-row UPDATE and DELETE; about 12
#                                       minutes); BENCH_WRITE_REPS

.PHONY: bench-scale bench-scale-profile bench-keys bench-writes
bench-scale: deps
	$(MAKE) --no-print-directory loadable
	bench/scale/run.sh

bench-scale-profile: deps
	$(MAKE) --no-print-directory loadable
	bench/scale/profile.sh

bench-keys: deps
	$(MAKE) --no-print-directory loadable
	bench/scale/keys_run.sh

bench-writes: deps
	$(MAKE) --no-print-directory loadable
	bench/scale/writes_run.sh

bench: bench-scale bench-writes
