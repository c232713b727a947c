# make bench-scale: the side-by-side benchmark of issue 6 (bench/scale/):
# the extension in the sqlite3 shell against boto3 (client and paginator)
# and the AWS SDK for JavaScript v3, on ~100,000 items in its own DynamoDB
# Local; full Scans (COUNT and items), a Query of a 10,000-item partition,
# 2,000 GetItems cold and warm, and segments=1 vs 8 behind a proxy adding
# 20 ms to every call.  Prints wall, client CPU, CPU per item, ratios and
# peak RSS; asserts nothing.  See bench/scale/README.md.
#
#   make bench-scale                    everything (about 12 minutes)
#   make bench-scale-profile            callgrind of workloads 2 and 5
#   make bench-keys                     2,000 keys at 20 ms: the join, keys =,
#                                       boto3 batch_get_item (about 2 minutes)
#   BENCH_REPS, BENCH_SCAN_REPS, BENCH_BUDGET, BENCH_DELAY_MS: see run.sh

.PHONY: bench-scale bench-scale-profile bench-keys
bench-scale: deps
	$(MAKE) --no-print-directory loadable
	bench/scale/run.sh

bench-scale-profile: deps
	$(MAKE) --no-print-directory loadable
	bench/scale/profile.sh

bench-keys: deps
	$(MAKE) --no-print-directory loadable
	bench/scale/keys_run.sh

bench: bench-scale bench-keys
