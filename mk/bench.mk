# make bench: the cache benchmark (bench/).  Starts its own DynamoDB Local
# (2 GiB heap), loads the tables, prints (a) cached point lookups through
# SQL against a native table, (b) the C-level hit path in ns/op, (c) Zipf
# hit ratios with full Scans in between, segmented against plain LRU.
# Only prints; nothing is asserted.  See bench/README.md.
#
#   make bench                          everything
#   make bench BENCH_ARGS="--only c"    some parts (a, b, c)
#   BENCH_KEYS=N BENCH_LOOKUPS=N        sizes of (a) (default 20000, 100000)

BENCH_BIN := $(BUILD)/bench-cache

.PHONY: bench
$(BENCH_BIN): bench/bench.c $(BUILD)/libddb.a mk/bench.mk
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(DEPFLAGS) -MF $@.d -o $@ bench/bench.c \
	    $(BUILD)/libddb.a $(LDFLAGS) -lsqlite3 $(LIBS)
-include $(BENCH_BIN).d

bench: deps
	$(MAKE) --no-print-directory loadable $(BENCH_BIN)
	bench/run.sh $(BENCH_ARGS)
	$(MAKE) --no-print-directory bench-redis
	$(MAKE) --no-print-directory bench-streams
	$(MAKE) --no-print-directory bench-cpu

# make bench-streams: coherence=streams, the lag (p50, p90, p99) of an
# outside write seen by a cached read, idle and under a steady write load
# (STREAMS_RATE writes a second, default 50; STREAMS_N writes, default
# 100).  bench/streams_lag.sh; part of make bench.
.PHONY: bench-streams
bench-streams: deps
	$(MAKE) --no-print-directory loadable
	bench/streams_lag.sh

# make bench-redis: the shared cache tier for a fleet: 8 reader processes
# (bench/redis_reader.c on libdyndb) of 10,000 hot keys at 20 ms a
# DynamoDB request, without and with Redis; a warm shared hit against a
# DynamoDB round trip.  bench/redis.sh; part of make bench.
BENCH_REDIS_BIN := $(BUILD)/bench-redis-reader
.PHONY: bench-redis
$(BENCH_REDIS_BIN): bench/redis_reader.c $(API_OBJ) $(BUILD)/libddb.a \
                    mk/bench.mk
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Iapi -o $@ bench/redis_reader.c $(API_OBJ) \
	    $(BUILD)/libddb.a $(LDFLAGS) $(LIBS)

bench-redis: deps
	$(MAKE) --no-print-directory loadable $(BENCH_REDIS_BIN)
	bench/redis.sh

# make bench-instr: part (a)'s warm lookups counted in instructions
# (callgrind; the machine's load does not change them).  bench/instr.sh.
.PHONY: bench-instr
bench-instr: deps
	$(MAKE) --no-print-directory loadable
	bench/instr.sh

# make bench-request: what one request costs the client in instructions
# (callgrind): 2,000 cold GetItems from the sqlite3 shell against the same
# requests from a bare libcurl loop (bench/scale/curl_floor.c) in the same
# run; the call, the signing, curl, the allocator, the answer and the
# CRC-32 a request, and the RESULT line.  bench/request_instr.sh.
.PHONY: bench-request
bench-request: deps
	$(MAKE) --no-print-directory loadable
	bench/request_instr.sh

# make bench-warm: warm (cached) lookups against a native table with the
# same rows, in instructions (callgrind), items of 5, 12 and 40
# attributes, the key, the whole item and three json_extract selected;
# RESULT lines (goal 1.15x).  bench/warm_instr.sh, bench/warm_instr.c.
BENCH_WARM_BIN := $(BUILD)/bench-warm-instr
.PHONY: bench-warm
$(BENCH_WARM_BIN): bench/warm_instr.c mk/bench.mk
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ bench/warm_instr.c -lsqlite3

bench-warm: deps
	$(MAKE) --no-print-directory loadable $(BENCH_WARM_BIN)
	bench/warm_instr.sh

# make bench-decode: decoding Scan pages against its floor (simdjson, from
# Debian's libsimdjson-dev) in instructions an item, the outputs compared
# byte for byte, and the CPU of a full Scan with the default segments
# against segments=1.  bench/decode_instr.sh; part of make bench.
BENCH_DECODE_BIN := $(BUILD)/bench-decode
BENCH_DECODE_FLOOR := $(BUILD)/bench-decode-floor
.PHONY: bench-decode
$(BENCH_DECODE_BIN): bench/decode_bench.c $(BUILD)/libddb.a mk/bench.mk
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Iclient -o $@ bench/decode_bench.c \
	    $(BUILD)/libddb.a $(LDFLAGS) $(LIBS)
$(BENCH_DECODE_FLOOR): bench/decode_floor.cc mk/bench.mk
	@mkdir -p $(dir $@)
	$(CXX) -O2 -g -std=c++17 -Wall -Wextra -Werror -o $@ \
	    bench/decode_floor.cc -lsimdjson

bench-decode: deps
	$(MAKE) --no-print-directory loadable $(BENCH_DECODE_BIN) \
	    $(BENCH_DECODE_FLOOR)
	bench/decode_instr.sh

# make bench-cpu: the CPU goals in one table: bench-decode, bench-warm and
# bench-request, each beside its floor measured in the same run, with the
# load average at the start and the end, and bench-scale's newest client
# CPU an item beside boto3's and the JS SDK's (make bench runs bench-scale
# first).  bench/cpu.sh, bench/cpu_table.py; part of make bench.
.PHONY: bench-cpu
bench-cpu: deps
	bench/cpu.sh
