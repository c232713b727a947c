# make tsan: the cache engine (cache/store.c) under ThreadSanitizer, 8
# threads mixing reads and writes on one small store (tests/tsan/).  Its
# own binary, built apart from everything else (no -fsanitize=address, no
# libddb.a: the test supplies the item/page reference counting the store
# calls).  tests/suites/10-tsan-cache.sh builds and runs it in `make test`.
#
#   make tsan                      build and run (TSAN_ITERATIONS per thread)
#   make TSAN_CC=clang tsan        with clang instead of $(CC)

TSAN_CC    ?= $(CC)
TSAN_BIN   := $(BUILD)/tsan-cache
TSAN_FLAGS := -O1 -g -fsanitize=thread -fno-omit-frame-pointer $(WARN) \
              -std=gnu11 -pthread -D_GNU_SOURCE

.PHONY: tsan
$(TSAN_BIN): tests/tsan/tsan_cache.c cache/store.c cache/store_check.c \
             cache/store_int.h cache/store.h \
             client/ddb_client.h mk/tsan.mk
	@mkdir -p $(dir $@)
	$(TSAN_CC) $(TSAN_FLAGS) -o $@ tests/tsan/tsan_cache.c cache/store.c \
	    cache/store_check.c

tsan: $(TSAN_BIN)
	TSAN_OPTIONS="halt_on_error=0 exitcode=66 $(TSAN_OPTIONS)" \
	    $(TSAN_BIN) $(TSAN_ITERATIONS)
