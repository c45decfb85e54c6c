# tests/fuzz/fuzz.mk -- libFuzzer targets (included by the Makefile).
#
#   make fuzz        build every target and fuzz each for FUZZ_SECONDS
#                    (default 600) at low priority, one after the other;
#                    crashes go to build-fuzz/crashes/
#   make fuzz-smoke  what `make test` runs: replay tests/fuzz/regress/,
#                    then a short fixed run of each target over its seed
#                    corpus; fails on any crash; skipped (with a note)
#                    when clang or libFuzzer is missing
#                    (FUZZ_FLAGS: more libFuzzer options for both)
#
# Everything is built in build-fuzz/ with clang: the library sources are
# compiled again there with coverage and ASan+UBSan (build/ is not used).

FUZZ_CC       ?= clang
FUZZ_B        := build-fuzz
FUZZ_SECONDS  ?= 600
FUZZ_FLAGS    ?=
FUZZ_DEB_PKGS := clang libclang-rt-dev
FUZZ_TARGETS  := scenario faults cost run measure
FUZZ_SAN      := -fsanitize=address,undefined -fno-sanitize-recover=all \
                 -fno-omit-frame-pointer
FUZZ_CFLAGS   := $(CSTD) -O1 -g $(WARN) -I. $(BLAS_DEF) $(FUZZ_SAN)
FUZZ_LIB_OBJ  := $(LIB_SRC:%.c=$(FUZZ_B)/obj/%.o)
FUZZ_BIN      := $(FUZZ_TARGETS:%=$(FUZZ_B)/fuzz_%)
FUZZ_LIBS      = $(filter-out $(NO_LIBS),$(shell pkg-config --libs gsl libcjson \
                 $(BLAS_PKG) 2>/dev/null)) -lm -lpthread

# Per target: longest input, and executions of the smoke run.
FUZZ_LEN_scenario := 8192
FUZZ_LEN_run      := 4096
FUZZ_LEN_faults   := 2048
FUZZ_LEN_cost     := 1024
FUZZ_LEN_measure  := 4096
FUZZ_RUNS_scenario := 20000
FUZZ_RUNS_run      := 2000
FUZZ_RUNS_faults   := 20000
FUZZ_RUNS_cost     := 20000
FUZZ_RUNS_measure  := 20000

# Whether clang links a libFuzzer target here (runs when used).
FUZZ_PROBE = printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n)\
{(void)d;(void)n;return 0;}\n' | $(FUZZ_CC) -x c -fsanitize=fuzzer - \
  -o $(FUZZ_B)/probe >/dev/null 2>&1

.PHONY: fuzz fuzz-build fuzz-smoke fuzz-deps fuzz-clean

fuzz-clean:
	rm -rf $(FUZZ_B)

# Installs clang and its libFuzzer runtime when missing, as `deps` does;
# a failed installation is reported, not fatal (fuzz-smoke then skips).
fuzz-deps:
	@mkdir -p $(FUZZ_B)
	@if $(FUZZ_PROBE); then :; elif command -v apt-get >/dev/null; then \
	  echo "installing: $(FUZZ_DEB_PKGS)"; \
	  SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  { $$SUDO apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq \
	      $(FUZZ_DEB_PKGS) >/dev/null; } || \
	  echo "fuzz: could not install $(FUZZ_DEB_PKGS)"; \
	fi

$(FUZZ_B)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link $(PKG_CFLAGS) \
	  -MMD -MP -c -o $@ $<

$(FUZZ_B)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h tests/run_protocol.h $(FUZZ_LIB_OBJ)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $(PKG_CFLAGS) -o $@ $< \
	  $(FUZZ_LIB_OBJ) $(FUZZ_LIBS)

$(FUZZ_B)/seeds: tests/fuzz/seeds.c $(FUZZ_LIB_OBJ)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link $(PKG_CFLAGS) \
	  -o $@ $< $(FUZZ_LIB_OBJ) $(FUZZ_LIBS)

# The seed corpora (mkcorpus.sh) and dictionaries (mkdict.sh), rebuilt
# when the scenarios, the committed seeds or the sources change.
FUZZ_SEED_IN := $(shell find scenarios tests/fuzz/corpus tests/data/measure -type f 2>/dev/null)
$(FUZZ_B)/corpus/.stamp: $(FUZZ_B)/seeds tests/fuzz/mkcorpus.sh $(FUZZ_SEED_IN)
	@tests/fuzz/mkcorpus.sh $(FUZZ_B)/seeds $(FUZZ_B)/corpus
	@touch $@

$(FUZZ_B)/%.dict: tests/fuzz/mkdict.sh tests/fuzz/json.dict \
                  tests/fuzz/faults.dict tests/fuzz/measure.dict $(LIB_SRC)
	@mkdir -p $(@D)
	@tests/fuzz/mkdict.sh $* >$@

fuzz-build: $(FUZZ_BIN) $(FUZZ_B)/corpus/.stamp \
            $(FUZZ_TARGETS:%=$(FUZZ_B)/%.dict)

# One target: name, executions (-runs=N) or seconds (-max_total_time=S),
# work corpus; prints the executions and what was found.
FUZZ_ONE = t=$$1; lim=$$2; work=$$3; \
  mkdir -p $(FUZZ_B)/crashes $$work; \
  cp $(FUZZ_B)/corpus/$$t/* $$work/ 2>/dev/null; \
  log=$(FUZZ_B)/$$t.log; before=$$(ls $(FUZZ_B)/crashes | wc -l); \
  $$nice $(FUZZ_B)/fuzz_$$t $$lim -max_len=$$4 -timeout=10 \
    -dict=$(FUZZ_B)/$$t.dict -print_final_stats=1 \
    -artifact_prefix=$(FUZZ_B)/crashes/$$t- $$opts $(FUZZ_FLAGS) $$work >$$log 2>&1; \
  rc=$$?; \
  execs=$$(grep -h 'stat::number_of_executed_units' $$log | \
           awk '{s += $$2} END {print s + 0}'); \
  [ "$$execs" != 0 ] || execs=$$(sed -n 's/^.\([0-9][0-9]*\): cov.*/\1/p' $$log | \
                                tail -n 1); \
  found=$$(( $$(ls $(FUZZ_B)/crashes | wc -l) - before )); \
  echo "fuzz $$t: $$execs executions, $$found finding(s), exit $$rc \
(log $$log)"; \
  [ $$rc = 0 ] && [ $$found = 0 ]

fuzz: fuzz-deps
	@$(MAKE) --no-print-directory fuzz-build
	@fail=0; for t in $(FUZZ_TARGETS); do \
	  set -- $$t -max_total_time=$(FUZZ_SECONDS) $(FUZZ_B)/work/$$t; \
	  case $$t in scenario) set -- "$$@" $(FUZZ_LEN_scenario);; \
	    run) set -- "$$@" $(FUZZ_LEN_run);; \
	    faults) set -- "$$@" $(FUZZ_LEN_faults);; \
	    cost) set -- "$$@" $(FUZZ_LEN_cost);; \
	    measure) set -- "$$@" $(FUZZ_LEN_measure);; esac; \
	  ( nice="nice -n 10"; opts=-fork=1\ -ignore_crashes=1; $(FUZZ_ONE) ) || fail=1; \
	done; ls $(FUZZ_B)/crashes; exit $$fail

# Smoke: a fixed seed and a fresh copy of the corpus, so that a run is
# the same each time; the regression inputs are replayed whole first.
fuzz-smoke: fuzz-deps
	@if ! $(FUZZ_PROBE); then \
	  echo "fuzz smoke: skipped ($(FUZZ_CC) with libFuzzer not found)"; \
	  exit 0; fi; \
	$(MAKE) --no-print-directory -j$(TEST_JOBS) fuzz-build || exit 1; \
	fail=0; for t in $(FUZZ_TARGETS); do \
	  reg=$$(ls tests/fuzz/regress/$$t/* 2>/dev/null); \
	  if [ -n "$$reg" ]; then \
	    $(FUZZ_B)/fuzz_$$t -timeout=10 $$reg >$(FUZZ_B)/$$t-regress.log 2>&1 || \
	    { echo "fuzz $$t: a regression input fails (see \
$(FUZZ_B)/$$t-regress.log)"; fail=1; }; fi; \
	  rm -rf $(FUZZ_B)/smoke/$$t; \
	  case $$t in \
	    scenario) set -- $$t -runs=$(FUZZ_RUNS_scenario) $(FUZZ_B)/smoke/$$t \
	                 $(FUZZ_LEN_scenario);; \
	    run) set -- $$t -runs=$(FUZZ_RUNS_run) $(FUZZ_B)/smoke/$$t \
	            $(FUZZ_LEN_run);; \
	    faults) set -- $$t -runs=$(FUZZ_RUNS_faults) $(FUZZ_B)/smoke/$$t \
	               $(FUZZ_LEN_faults);; \
	    cost) set -- $$t -runs=$(FUZZ_RUNS_cost) $(FUZZ_B)/smoke/$$t \
	             $(FUZZ_LEN_cost);; \
	    measure) set -- $$t -runs=$(FUZZ_RUNS_measure) $(FUZZ_B)/smoke/$$t \
	                $(FUZZ_LEN_measure);; esac; \
	  ( nice=; opts=-seed=1; $(FUZZ_ONE) ) || fail=1; \
	done; exit $$fail

-include $(FUZZ_LIB_OBJ:.o=.d)
