# sqlite-dynamodb: a SQLite virtual table and a DAX-like cache over DynamoDB.
#
#   make            build/dynamodb.so (the loadable extension)
#   make test       unit tests + SQL tests + differential test + suites
#                   against DynamoDB Local, and the SQL tests against dynalite
#                   (both started and stopped by the runner)
#   make check      unit tests + SQL tests on DynamoDB Local only (a few minutes)
#   make demo       install what is missing, build, and run the e-commerce
#                   example's 15 access patterns in the sqlite3 shell
#   make shell      the same setup, then the sqlite3 shell to try things
#                   (tools/shell.sh; the server stops when the shell exits)
#   make lint       clang-format check, banned functions, cppcheck, file
#                   cycles (tools/cycles.py), the file map (tools/filemap.py)
#   make format     clang-format -i on every file make lint formats
#   make version    the version (DYN_VERSION of api/dyndb.h, its one place)
#   make deb, make dist, pip install .   the packages (mk/deb.mk,
#                   mk/dist.mk, setup.py; docs/packages.md)
#   SANITIZE=1      build with -fsanitize=address,undefined
#   WERROR=1        warnings are errors (CI)

CC      ?= cc
BUILD   := build
CFLAGS  ?= -O2 -g
WARN    := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
           -Wno-unused-parameter
# WERROR=1 (as CI builds): any warning stops the build.
ifeq ($(WERROR),1)
  WARN += -Werror
endif
ifeq ($(SANITIZE),1)
  CFLAGS += -O1 -fsanitize=address,undefined -fno-omit-frame-pointer
  LDFLAGS += -fsanitize=address,undefined
endif
ALL_CFLAGS := $(CFLAGS) $(WARN) -std=gnu11 -fPIC -pthread -D_GNU_SOURCE
# Each object's header dependencies, written by the compiler next to it
# (X.o: X.d) and included at the end: touching a header rebuilds the
# objects that include it, and only those.  -MP: a deleted header is no
# error.
DEPFLAGS := -MMD -MP
LIBS    := -lcurl -lcjson -lssl -lcrypto -lz -lm -pthread

CLIENT_SRC := client/buf.c client/item.c client/config.c client/client.c \
              client/http.c client/signer.c client/curl_mem.c client/cancel.c \
              client/log.c client/live.c client/json.c client/pack.c \
              client/number.c \
              client/write.c client/creds.c \
              client/creds_process.c client/creds_meta.c client/creds_parse.c \
              client/creds_http.c client/creds_sts.c client/creds_sso.c \
              client/creds_profile.c client/creds_fetch.c client/sso_token.c \
              client/endpoint.c client/scope.c \
              client/describe.c client/read.c client/lek.c client/get.c \
              client/profile.c client/tape.c client/crypto.c client/sigv4.c \
              client/jsonval.c client/meter.c client/rate.c \
              client/throttle.c client/arn.c client/streams.c
CACHE_SRC  := cache/describe.c cache/cache.c cache/read.c \
              cache/invalidate.c cache/store.c cache/store_check.c cache/write.c cache/stream.c \
              cache/shared.c cache/lease.c cache/redis_conn.c cache/resp.c cache/redis_url.c \
              cache/fanout.c cache/wcalls.c cache/hot.c cache/alias.c \
              cache/coherence.c cache/coherence_apply.c cache/coherence_fleet.c \
              cache/fleet.c
EXT_SRC    := ext/extension.c ext/common.c ext/options.c ext/schema.c \
              ext/desc.c ext/plan.c ext/plancodec.c ext/keycond.c ext/cursor.c \
              ext/filter.c ext/lookups.c ext/pages.c ext/keys.c ext/functions.c \
              ext/monitor.c ext/write.c ext/row.c ext/txn.c ext/commit.c \
              ext/commit_send.c \
              ext/import.c ext/stmt.c ext/tables.c ext/attributes.c \
              ext/hot.c ext/multikey.c
API_SRC    := api/client.c api/item.c api/read.c api/write.c
LIB_SRC    := $(CLIENT_SRC) $(CACHE_SRC)
LIB_OBJ    := $(LIB_SRC:%.c=$(BUILD)/%.o)
EXT_OBJ    := $(EXT_SRC:%.c=$(BUILD)/%.o)
API_OBJ    := $(API_SRC:%.c=$(BUILD)/%.o)

UNIT_SRC   := $(wildcard tests/unit/*.c)

# The version, written in one place: DYN_VERSION in api/dyndb.h.  From
# there it reaches dyn_version(), dynamodb_version() (ext/extension.c
# includes the header), dyndb.pc, the .deb, the tarball and the Python
# package (setup.py reads it with the same pattern).
DYN_VERSION := $(shell sed -n 's/^\#define DYN_VERSION *"\(.*\)"/\1/p' \
                 api/dyndb.h)

.PHONY: all loadable deps test check unit demo shell lint format clean libs \
        version

all: loadable

# The libraries a program linked with build/libddb.a needs: the suites
# that build C drivers take them from here (make -s libs), so that a new
# dependency is added once.
libs:
	@echo $(LIBS)

version:
	@echo $(DYN_VERSION)

loadable: $(BUILD)/dynamodb.so

$(BUILD)/%.o: %.c Makefile
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(BUILD)/dynamodb.so: $(LIB_OBJ) $(EXT_OBJ) ext/dynamodb.map
	$(CC) -shared -o $@ $(LIB_OBJ) $(EXT_OBJ) $(LDFLAGS) \
	    -Wl,--version-script=ext/dynamodb.map \
	    -Wl,-soname,dynamodb.so $(LIBS)

# (made anew: ar would keep the members of files since removed)
$(BUILD)/libddb.a: $(LIB_OBJ)
	rm -f $@
	ar rcs $@ $^

# The unit-test binary links the ext/ objects built again with SQLITE_CORE
# (the sqlite3_* calls go to libsqlite3 directly) and UNITTESTS (the
# helpers marked UNITTEST are external, for tests/unit/test_ext.c: see
# ext/dd_ext.h).
UNIT_EXT_OBJ := $(EXT_SRC:%.c=$(BUILD)/unit/%.o)
UNIT_OBJ     := $(UNIT_SRC:%.c=$(BUILD)/unit/%.o)
$(BUILD)/unit/%.o: %.c Makefile
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(DEPFLAGS) -DSQLITE_CORE=1 -DUNITTESTS -c $< -o $@

$(BUILD)/unit-tests: $(UNIT_OBJ) $(UNIT_EXT_OBJ) $(API_OBJ) $(BUILD)/libddb.a
	$(CC) $(ALL_CFLAGS) -o $@ $(UNIT_OBJ) $(UNIT_EXT_OBJ) $(API_OBJ) \
	    $(BUILD)/libddb.a $(LDFLAGS) -lsqlite3 $(LIBS)

unit: $(BUILD)/unit-tests
	$(BUILD)/unit-tests

# Debian packages and DynamoDB Local, whatever is missing (quick when
# nothing is).
deps:
	tools/install-deps.sh

test: deps
	$(MAKE) --no-print-directory loadable $(if $(UNIT_SRC),$(BUILD)/unit-tests)
	tests/harness/run-all.sh

check: deps
	$(MAKE) --no-print-directory loadable $(BUILD)/unit-tests
	RUN_ALL_QUICK=1 tests/harness/run-all.sh

demo: deps
	tools/demo.sh

shell: deps
	$(MAKE) --no-print-directory loadable
	tools/shell.sh

lint: loadable $(API_OBJ)
	tools/lint.sh

# the files make lint's clang-format check reads (tools/lint.sh)
format:
	tools/lint.sh --format

clean:
	rm -rf $(BUILD) .test-tmp python/*.egg-info

# Further targets, one file each: mk/bench.mk (make bench), mk/fuzz.mk
# (make fuzz), mk/install.mk (make install / uninstall, the libraries),
# mk/tsan.mk (the ThreadSanitizer build of the cache test).
-include $(wildcard mk/*.mk)

# The header dependencies the compiler wrote (see DEPFLAGS).
-include $(LIB_OBJ:.o=.d) $(EXT_OBJ:.o=.d) $(API_OBJ:.o=.d) \
         $(UNIT_OBJ:.o=.d) $(UNIT_EXT_OBJ:.o=.d)
