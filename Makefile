# dilosim -- build, test, demo.  `make help` lists the targets.

PKGS      := gsl libcjson check
DEB_PKGS  := libgsl-dev libcjson-dev check gnuplot-nox pkg-config libopenblas-dev \
             libopenmpi-dev openmpi-bin chromium clang-format

# BLAS: OpenBLAS when pkg-config finds it (models/tensor.c then includes
# <cblas.h> and makes it single-threaded per call), else GSL's gslcblas.
# With OpenBLAS, -lgslcblas is dropped so that one CBLAS is linked and
# libgsl takes its cblas_* symbols from OpenBLAS.
HAVE_OPENBLAS := $(shell pkg-config --exists openblas 2>/dev/null && echo 1)
ifeq ($(HAVE_OPENBLAS),1)
BLAS_PKG  := openblas
BLAS_DEF  := -DDILOSIM_OPENBLAS
NO_LIBS   := -lgslcblas
endif

CC        ?= cc
OPT       ?= -O2
CSTD      := -std=c11 -D_POSIX_C_SOURCE=200809L
WARN      := -Wall -Wextra -Werror
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) $(BLAS_PKG) 2>/dev/null)
# The programs link without Check; only the test suites link it.
LINK_PKGS := $(filter-out check,$(PKGS))
PKG_LIBS   = $(filter-out $(NO_LIBS),$(shell pkg-config --libs $(LINK_PKGS) $(BLAS_PKG) 2>/dev/null))
CHECK_LIBS = $(shell pkg-config --libs check 2>/dev/null)
CFLAGS    += $(CSTD) $(OPT) -g $(WARN) -I. $(BLAS_DEF) $(PKG_CFLAGS) $(SAN)
LDLIBS    += $(PKG_LIBS) -lm -lpthread $(SAN)

# A second build with AddressSanitizer + UndefinedBehaviorSanitizer.
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer \
             -fno-sanitize-recover=all

B         ?= build
LIB_SRC   := $(filter-out sim/cli/main.c,$(wildcard sim/*/*.c models/*.c))
LIB_SRC   := $(filter-out sim/mpi/%,$(LIB_SRC))
LIB_OBJ   := $(LIB_SRC:%.c=$(B)/obj/%.o)
TEST_SRC  := $(wildcard tests/test_*.c)
TEST_BIN  := $(TEST_SRC:tests/%.c=$(B)/tests/%)
BENCH_SRC := $(wildcard bench/*.c)
BENCH_BIN := $(BENCH_SRC:bench/%.c=$(B)/bench/%)

.PHONY: all deps demo test check asan bench plots reproduce experiments clean help FORCE
.SUFFIXES:
.DELETE_ON_ERROR:

all: bin/dilosim

help:
	@echo "make            build bin/dilosim (and bin/dilosim-mpi with Open MPI)"
	@echo "make demo       install what is missing, build, run the 1B demo"
	@echo "make test       install what is missing, build, run every test"
	@echo "                (once plainly, once under ASan+UBSan)"
	@echo "make fuzz       libFuzzer targets, FUZZ_SECONDS each (tests/fuzz/)"
	@echo "make bench      build with -O2 and print the benchmarks"
	@echo "make plots      the paper sweeps and their figures (plots/out/; seconds)"
	@echo "make reproduce  make plots, then Table 4 next to the paper's"
	@echo "make experiments  the training runs of docs/experiments.md: coupled"
	@echo "                runs, then the comparisons (~1 h; resumes)"
	@echo "make report     the HTML report of the paper setups (plots/out/report.html)"
	@echo "make validate-net  the network model against real TCP in namespaces (root, ~12 min)"
	@echo "make install    install under PREFIX (/usr/local; DESTDIR honoured)"
	@echo "make uninstall  remove what make install put there"
	@echo "make clean      remove build outputs"

# Installs the Debian packages that are missing (sudo when not root).
deps:
	@if pkg-config --exists $(PKGS) openblas $(MPI_PKG) 2>/dev/null && command -v gnuplot >/dev/null \
	  && command -v mpirun >/dev/null && command -v chromium >/dev/null \
	  && command -v clang-format >/dev/null; then :; else \
	  echo "installing: $(DEB_PKGS)"; \
	  SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $(DEB_PKGS) >/dev/null; \
	fi

bin/dilosim $(B)/dilosim: $(B)/obj/sim/cli/main.o $(B)/libdilosim.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

# The git revision, for `dilosim --version`: $(B)/version_rev.h is
# rewritten only when the revision changes, and only version.o includes
# it, so a new commit rebuilds one object.  Without git: "unknown".
REVISION := $(shell git -C "$(CURDIR)" describe --always --dirty 2>/dev/null)
ifeq ($(REVISION),)
REVISION := unknown
endif
$(B)/version_rev.h: FORCE
	@mkdir -p $(@D)
	@printf '#define DILOSIM_REVISION "%s"\n' '$(REVISION)' >$@.new; \
	  if cmp -s $@.new $@; then rm -f $@.new; else mv $@.new $@; fi
$(B)/obj/sim/base/version.o: $(B)/version_rev.h
$(B)/obj/sim/base/version.o: CFLAGS += -include $(B)/version_rev.h
FORCE:

$(B)/libdilosim.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(B)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -MMD -MP -c -o $@ $<

$(B)/tests/%: tests/%.c $(wildcard tests/*.h) $(B)/libdilosim.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< $(B)/libdilosim.a $(CHECK_LIBS) $(LDLIBS)

$(B)/bench/%: bench/%.c $(B)/libdilosim.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< $(B)/libdilosim.a $(LDLIBS)

-include $(LIB_OBJ:.o=.d) $(B)/obj/sim/cli/main.d

# bin/dilosim-mpi (sim/mpi/, not in the library): sweep, table and plan
# over the ranks of an MPI job, built when pkg-config knows Open MPI.
MPI_PKG   := ompi-c
HAVE_MPI  := $(shell pkg-config --exists $(MPI_PKG) 2>/dev/null && echo 1)
MPI_OBJ   := $(patsubst %.c,$(B)/obj/%.o,$(wildcard sim/mpi/*.c))
MPI_BIN   := $(if $(HAVE_MPI),bin/dilosim-mpi)
$(MPI_OBJ): CFLAGS += $(shell pkg-config --cflags $(MPI_PKG) 2>/dev/null)
bin/dilosim-mpi $(B)/dilosim-mpi: $(MPI_OBJ) $(B)/libdilosim.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $^ $(shell pkg-config --libs $(MPI_PKG)) $(LDLIBS)
all check bench: $(MPI_BIN)
-include $(MPI_OBJ:.o=.d)

demo: deps
	@$(MAKE) --no-print-directory bin/dilosim
	@scenarios/demo.sh bin/dilosim

# Runs every Check suite and the command-line tests, then the suites again
# in a sanitizer build (build-asan/).
# Every stage runs even when an earlier one fails; the stages that failed
# are named last.  Each stage builds with TEST_JOBS compilers at once (the
# CPUs online); its tests then run one after the other.
TEST_JOBS ?= $(shell nproc 2>/dev/null || echo 1)
test: deps
	@failed=; \
	  $(MAKE) --no-print-directory -j$(TEST_JOBS) check || failed="$$failed check"; \
	  $(MAKE) --no-print-directory -j$(TEST_JOBS) B=build-asan OPT=-O1 \
	    SAN="$(SAN_FLAGS)" asan || failed="$$failed asan"; \
	  $(MAKE) --no-print-directory fuzz-smoke || failed="$$failed fuzz-smoke"; \
	  if [ -n "$$failed" ]; then echo "make test: FAILED:$$failed"; exit 1; fi; \
	  echo "make test: every stage passed"

# A failing suite or script is named again at the end of the pass.
check: bin/dilosim $(TEST_BIN)
	@failed=; for t in $(TEST_BIN); do \
	  $$t || failed="$$failed $${t##*/}"; done; \
	  tests/cli.sh bin/dilosim || failed="$$failed tests/cli.sh"; \
	  tests/style.sh || failed="$$failed tests/style.sh"; \
	  if [ -n "$$failed" ]; then echo "make check: FAILED:$$failed"; exit 1; fi

# The sanitizer pass runs the command-line scripts too, on its own binary
# ($(B)/dilosim), with CLI_QUICK=1 to skip their slowest parts.
asan: $(TEST_BIN) $(B)/dilosim
	@echo "sanitizer build:"; failed=; for t in $(TEST_BIN); do \
	  CK_FORK=no $$t || failed="$$failed $${t##*/}"; done; \
	  CLI_QUICK=1 tests/cli.sh $(B)/dilosim || failed="$$failed tests/cli.sh"; \
	  if [ -n "$$failed" ]; then echo "sanitizer pass: FAILED:$$failed"; exit 1; fi

bench: bin/dilosim $(BENCH_BIN)
	@for b in $(BENCH_BIN); do $$b || exit 1; done
	@bench/bench_sweeps.sh bin/dilosim
	@[ ! -x bin/dilosim-mpi ] || bench/bench_mpi.sh bin/dilosim

# Figures, training runs, the report: the rules of plots/plots.mk, run
# once bin/dilosim is built.  Each file there is remade only when what it
# is made from changed (so `make reproduce` after `make plots` runs no
# simulation), with a line per step.  PLOTS_OUT: where they go.
PLOTS_OUT ?= plots/out
PLOTS_MK  = --no-print-directory -f plots/plots.mk PLOTS_OUT="$(PLOTS_OUT)"
plots: deps
	@$(MAKE) --no-print-directory bin/dilosim
	@$(MAKE) $(PLOTS_MK) plots
	@echo "figures in $(PLOTS_OUT)/"

# The training runs of docs/experiments.md: the 14 coupled runs of
# plots/coupled.sh (a minute or a few), then the 38 runs of
# scenarios/experiments/run.sh (about an hour on two cores at low
# priority); both resume.  Not in `make plots` nor `make test`.
experiments: deps
	@$(MAKE) --no-print-directory bin/dilosim
	@$(MAKE) $(PLOTS_MK) experiments

reproduce: plots
	@echo "reproduce: Table 4 from $(PLOTS_OUT)/sweep_*.csv"
	@PLOTS_OUT="$(PLOTS_OUT)" plots/reproduce.sh

clean:
	rm -rf build build-asan bin plots/out

# The HTML report of the three paper setups (dilosim report).
.PHONY: report install uninstall
report: deps
	@$(MAKE) --no-print-directory bin/dilosim
	@$(MAKE) $(PLOTS_MK) report
	@echo "report in $(PLOTS_OUT)/report.html"

# make install [PREFIX=/usr/local] [DESTDIR=...]: the binaries, the man
# page, bash completion, the scenarios and plot scripts (share/dilosim/,
# in the tree's layout, so the scripts find the scenarios), and README.md
# with docs/ (share/doc/dilosim/, in the tree's layout, so its links work).  Nothing
# outside $(DESTDIR)$(PREFIX) is touched.  bin/dilosim-mpi is installed
# when it has been built.
PREFIX    ?= /usr/local
INST      = $(DESTDIR)$(PREFIX)
INST_DATA = $(INST)/share/dilosim
# The shell sees PREFIX and DESTDIR as one word each, whatever they hold
# (a quote, a backquote, $, a blank): single-quoted, a ' as '\''.
sq         = '$(subst ','\'',$(1))'
Q_INST     = $(call sq,$(INST))
Q_DATA     = $(call sq,$(INST_DATA))
Q_DOC      = $(call sq,$(INST)/share/doc/dilosim)
DOC_FILES  = README.md $(wildcard docs/*.md docs/img/*.png)
DOC_DIRS   = docs docs/img
DATA_FILES = $(shell find scenarios -type f | LC_ALL=C sort) \
             $(wildcard plots/*.gp plots/*.sh)
DATA_DIRS  = $(shell find scenarios -type d | LC_ALL=C sort) plots

install: bin/dilosim
	install -d -m 755 $(Q_INST)/bin $(Q_INST)/share/man/man1 \
	  $(Q_INST)/share/bash-completion/completions
	install -m 755 bin/dilosim $(Q_INST)/bin/dilosim
	if [ -f bin/dilosim-mpi ]; then \
	  install -m 755 bin/dilosim-mpi $(Q_INST)/bin/dilosim-mpi; fi
	install -m 644 docs/dilosim.1 $(Q_INST)/share/man/man1/dilosim.1
	install -m 644 docs/dilosim.bash-completion \
	  $(Q_INST)/share/bash-completion/completions/dilosim
	@for d in $(DATA_DIRS); do install -d -m 755 $(Q_DATA)/"$$d" || exit 1; done
	@for f in $(DATA_FILES); do \
	  m=644; if [ -x "$$f" ]; then m=755; fi; \
	  install -m $$m "$$f" $(Q_DATA)/"$$f" || exit 1; done
	@for d in $(DOC_DIRS); do install -d -m 755 $(Q_DOC)/"$$d" || exit 1; done
	@for f in $(DOC_FILES); do install -m 644 "$$f" $(Q_DOC)/"$$f" || exit 1; done
	@printf 'installed under %s\n' $(Q_INST)

uninstall:
	rm -f $(Q_INST)/bin/dilosim $(Q_INST)/bin/dilosim-mpi \
	  $(Q_INST)/share/man/man1/dilosim.1 \
	  $(Q_INST)/share/bash-completion/completions/dilosim
	@for f in $(DATA_FILES); do rm -f $(Q_DATA)/"$$f"; done
	@for d in $$(printf '%s\n' $(DATA_DIRS) | LC_ALL=C sort -r); do \
	  if [ -d $(Q_DATA)/"$$d" ]; then rmdir $(Q_DATA)/"$$d" 2>/dev/null || :; fi; \
	done; if [ -d $(Q_DATA) ]; then rmdir $(Q_DATA) 2>/dev/null || :; fi
	@for f in $(DOC_FILES); do rm -f $(Q_DOC)/"$$f"; done
	@for d in docs/img docs; do \
	  if [ -d $(Q_DOC)/"$$d" ]; then rmdir $(Q_DOC)/"$$d" 2>/dev/null || :; fi; \
	done; if [ -d $(Q_DOC) ]; then rmdir $(Q_DOC) 2>/dev/null || :; fi

# The network rig (bench/netrig/, docs/validation.md): netrig_ring, a ring
# all-reduce over TCP between network namespaces, and netrig_trace, the
# durations dilosim predicts.  `make validate-net` (root; not in `make
# test`, timing is noisy; QUICK=1 or WORKERS, RATES, SIZES, GAPS, H select
# the cases) compares them; tests/cli_rig.sh checks the rig's setup and
# teardown on a tiny case.
.PHONY: validate-net netrig
NETRIG_BIN := $(B)/netrig/netrig_ring $(B)/netrig/netrig_trace
netrig: $(NETRIG_BIN)
$(B)/netrig/netrig_ring: bench/netrig/ring.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< -lm -lpthread $(SAN)
$(B)/netrig/netrig_trace: bench/netrig/trace.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< $(shell pkg-config --libs libcjson 2>/dev/null) -lm $(SAN)
check asan: $(NETRIG_BIN)
check asan: export NETRIG_DIR = $(CURDIR)/$(B)/netrig
validate-net:
	@[ "$$(id -u)" = 0 ] || { echo "make validate-net: needs root (network namespaces" \
	  "and tc); run it as root" >&2; exit 2; }
	@$(MAKE) --no-print-directory bin/dilosim netrig
	@bench/netrig/validate.sh

include tests/fuzz/fuzz.mk
