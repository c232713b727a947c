# make fuzz: the libFuzzer harnesses of tests/fuzz/ (clang with
# -fsanitize=fuzzer,address,undefined), each run for FUZZ_SECONDS on its
# seed corpus (tests/fuzz/corpus/NAME) plus what it finds (build/fuzz/corpus/
# NAME).  A crash, a leak or undefined behaviour stops the run, leaves the
# input in build/fuzz/crash-* (or leak-*, timeout-*) and fails the target.
#
#   make fuzz                          every harness, FUZZ_SECONDS (60) each
#   make fuzz FUZZERS=response FUZZ_SECONDS=600
#   make fuzz-build                    only build them
#
# The harnesses: response (page, item, error and DescribeTable parsers),
# json (AttributeValue <-> JSON converters, number canonical form), options
# (CREATE VIRTUAL TABLE option parser of ext/options.c), read_body (the
# Query/Scan expression builder).  tests/suites/23-fuzz.sh runs a short pass
# (5 s each) in make test.

FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZERS      ?= response json options read_body
FUZZ_DIR     := $(BUILD)/fuzz
FUZZ_CFLAGS  := -g -O1 -fno-omit-frame-pointer \
                -fsanitize=address,undefined,fuzzer-no-link \
                -fno-sanitize-recover=undefined -std=gnu11 -pthread \
                -D_GNU_SOURCE -DSQLITE_CORE=1 -DUNITTESTS $(WARN)
FUZZ_SRC     := $(CLIENT_SRC) $(CACHE_SRC)
FUZZ_OBJ     := $(FUZZ_SRC:%.c=$(FUZZ_DIR)/%.o)
# the options harness links the ext/ files (UNITTESTS: dd_bool is
# external, see ext/dd_ext.h)
FUZZ_EXT_OBJ := $(patsubst %.c,$(FUZZ_DIR)/%.o,$(EXT_SRC))
FUZZ_BINS    := $(FUZZERS:%=$(FUZZ_DIR)/fuzz_%)

.PHONY: fuzz fuzz-build
.SECONDARY: $(FUZZ_OBJ) $(FUZZ_EXT_OBJ)
$(FUZZ_DIR)/%.o: %.c mk/fuzz.mk
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(FUZZ_DIR)/fuzz_options: $(FUZZ_EXT_OBJ)
$(FUZZ_DIR)/fuzz_options: FUZZ_MORE := $(FUZZ_EXT_OBJ)
# (a harness's own header dependencies go to $(FUZZ_DIR)/dep/, where the
# pattern fuzz_% does not reach)
$(FUZZ_DIR)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_OBJ) mk/fuzz.mk
	@mkdir -p $(FUZZ_DIR)/dep
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(DEPFLAGS) -MF $(FUZZ_DIR)/dep/fuzz_$*.d \
	    -MT $@ -fsanitize=fuzzer -o $@ $< $(FUZZ_MORE) $(FUZZ_OBJ) \
	    -lsqlite3 $(LIBS)

-include $(FUZZ_OBJ:.o=.d) $(FUZZ_EXT_OBJ:.o=.d) \
         $(FUZZERS:%=$(FUZZ_DIR)/dep/fuzz_%.d)

fuzz-build: $(FUZZ_BINS)

fuzz: fuzz-build
	@for f in $(FUZZERS); do \
	  mkdir -p $(FUZZ_DIR)/corpus/$$f; \
	  echo "fuzz: $$f for $(FUZZ_SECONDS) s"; \
	  if ! $(FUZZ_DIR)/fuzz_$$f -max_total_time=$(FUZZ_SECONDS) \
	      -artifact_prefix=$(FUZZ_DIR)/ -print_final_stats=1 \
	      $(FUZZ_DIR)/corpus/$$f tests/fuzz/corpus/$$f \
	      >$(FUZZ_DIR)/$$f.log 2>&1; then \
	    tail -40 $(FUZZ_DIR)/$$f.log; echo "fuzz: $$f FAILED"; exit 1; \
	  fi; \
	  grep -E '^stat::(number_of_executed_units|peak_rss_mb)' \
	      $(FUZZ_DIR)/$$f.log; \
	done
