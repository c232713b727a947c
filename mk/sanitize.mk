# SANITIZE=1: AddressSanitizer + UBSan builds, and `make test SANITIZE=1`.
#
# 1. The objects under $(BUILD) remember the flags they were built with
#    ($(BUILD)/.flags): switching SANITIZE on or off rebuilds them (the
#    Makefile's rules alone would keep the old objects).
# 2. With SANITIZE=1, `make test` runs every sqlite3 through a wrapper
#    ($(BUILD)/san/sqlite3, exported as SQLITE3, which every runner uses)
#    that preloads the compiler's libasan: the sqlite3 shell is not built
#    with ASan, and an ASan-built extension can only be loaded into a
#    process whose first library is the ASan runtime.  UBSan reports stop
#    the process (halt_on_error), so they fail the test that caused them;
#    a SEGV stays a SEGV (handle_segv=0), which the runners report as a
#    crash.
#    build/unit-tests is itself built with the sanitizers.  The wrapper
#    also preloads a dlclose() that unloads nothing ($(BUILD)/san/
#    nodlclose.so), so that leak reports at exit name real leaks, with
#    symbols.
#
#   make test SANITIZE=1
#   make valgrind          build/unit-tests under valgrind (memcheck, leaks)

FLAGS_STAMP := $(BUILD)/.flags
FLAGS_TEXT  := $(CC) $(ALL_CFLAGS) $(LDFLAGS)

.PHONY: FORCE valgrind
FORCE:
$(FLAGS_STAMP): FORCE
	@mkdir -p $(dir $@)
	@echo '$(FLAGS_TEXT)' | cmp -s - $@ 2>/dev/null || \
	    echo '$(FLAGS_TEXT)' >$@

$(LIB_OBJ) $(EXT_OBJ) $(UNIT_OBJ) $(UNIT_EXT_OBJ) $(API_OBJ) \
    $(BUILD)/unit-tests: $(FLAGS_STAMP)

ifeq ($(SANITIZE),1)
SAN_SQLITE3 := $(abspath $(BUILD))/san/sqlite3
SAN_LIBASAN := $(shell $(CC) -print-file-name=libasan.so)
SAN_REAL    := $(shell command -v $(or $(SQLITE3),sqlite3))
export SQLITE3 := $(SAN_SQLITE3)

SAN_KEEP    := $(abspath $(BUILD))/san/nodlclose.so

# dlclose() that keeps the library mapped: the sqlite3 shell unloads the
# extension when it closes the database, and LeakSanitizer, which runs at
# exit, would then see the extension's process-wide state (its cache, curl's
# global state) as leaked, with no symbols to say where from.
$(SAN_KEEP): mk/sanitize.mk
	@mkdir -p $(dir $@)
	@printf '%s\n' '/* dlclose that unloads nothing (mk/sanitize.mk) */' \
	  'int dlclose(void *handle);' \
	  'int dlclose(void *handle) { (void)handle; return 0; }' \
	  >$(dir $@)nodlclose.c
	$(CC) -shared -fPIC -O1 -o $@ $(dir $@)nodlclose.c

$(SAN_SQLITE3): mk/sanitize.mk $(FLAGS_STAMP) $(SAN_KEEP)
	@mkdir -p $(dir $@)
	@printf '%s\n' '#!/bin/sh' \
	  '# sqlite3 with the ASan runtime first (mk/sanitize.mk)' \
	  'LD_PRELOAD="$(SAN_LIBASAN) $(SAN_KEEP)$${LD_PRELOAD:+ $$LD_PRELOAD}"' \
	  'ASAN_OPTIONS="$${ASAN_OPTIONS:-detect_leaks=1:handle_segv=0}"' \
	  'UBSAN_OPTIONS="$${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"' \
	  'export LD_PRELOAD ASAN_OPTIONS UBSAN_OPTIONS' \
	  'exec $(SAN_REAL) "$$@"' >$@
	@chmod +x $@

test check: $(SAN_SQLITE3)
endif

# valgrind fails on a memory error or a leak (its exit status 3).  A test
# may also fail under valgrind without any: valgrind computes long double
# with 64 bits, so SQLite's own text-to-double conversion can round
# differently (ext: dd_val_from_sql, 9.5e125); those are reported, not
# counted.
valgrind: $(BUILD)/unit-tests
	@valgrind -q --leak-check=full --show-leak-kinds=definite,indirect \
	    --errors-for-leak-kinds=definite,indirect --error-exitcode=3 \
	    $(BUILD)/unit-tests >$(BUILD)/valgrind.log 2>&1; rc=$$?; \
	grep -v '^ok ' $(BUILD)/valgrind.log; \
	if [ $$rc -eq 3 ]; then echo "valgrind: errors (above)"; exit 1; fi; \
	echo "valgrind: no memory errors, no leaks"
