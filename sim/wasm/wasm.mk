# wasm.mk -- the engine compiled to WebAssembly for the interactive page
# (`make wasm`: $(B)/wasm/dilosim-engine.js, read by `dilosim report
# --interactive`), included by the Makefile.
#
# The module is the C engine itself: the scenario loader, the engine, the
# run's JSON and the plan's search (sim/base, sim/config, sim/engine,
# sim/out/report.c and explain_out.c, sim/study/plan*.c, table.c, grid.c) and the glue of
# sim/wasm/engine.c, built by emcc -O2 with SINGLE_FILE (the .wasm inside
# the .js, so a file:// page and node both load it) and MODULARIZE.  No
# threads: pool.c's pthread_create fails in a build without -pthread and
# its pool runs every task on the calling thread (pool.h), as it does
# natively when the system refuses threads, with the same results.
#
# GSL and cJSON: Debian ships no WebAssembly build of either, and none is
# vendored here.  sim/wasm/fetch_src.sh fetches Debian's source packages
# of the very versions the native build links (from deb.debian.org's
# pool, each .dsc checked against a pinned sha256, the tarballs against
# the .dsc) into $(B)/wasm/src, and the files the engine needs are
# compiled from there: the same MT19937, exponential, Weibull and
# gaussian draws and gsl_sf_gamma as natively, so failures and stragglers
# draw the same numbers.  GSL's config.h is made from its config.h.in for
# a C99 libc with IEEE arithmetic (musl, emscripten's).
#
# One object per source in $(B)/wasm/obj, so a change recompiles one file.
# Without emcc, `make wasm` says so and fails; `make report` and
# tests/cli_interactive.sh then write and test the static page.
EMCC       ?= emcc
HAVE_EMCC  := $(shell command -v $(EMCC) >/dev/null 2>&1 && echo 1)
WASM       := $(B)/wasm
WASM_JS    := $(WASM)/dilosim-engine.js
WASM_SRCD  := $(WASM)/src
WASM_INC   := $(WASM)/inc
# emscripten's optimizer runs on node and needs the Debian node modules
export NODE_PATH := $(if $(NODE_PATH),$(NODE_PATH):)/usr/share/nodejs

WASM_OWN   := $(filter sim/base/% sim/config/% sim/engine/%,$(LIB_SRC)) \
              sim/out/report.c sim/out/explain_out.c \
              $(filter sim/study/plan%.c,$(LIB_SRC)) \
              sim/study/table.c sim/study/grid.c sim/wasm/engine.c \
              sim/wasm/libm.c
# GSL's files the engine reaches (rng, the draws, gamma, Brent's roots,
# the plan's eigen decomposition), and their dependencies
WASM_GSL   := rng/rng.c rng/mt.c rng/types.c rng/inline.c randist/exponential.c \
              randist/weibull.c randist/gauss.c \
              specfunc/gamma.c specfunc/exp.c specfunc/log.c specfunc/psi.c \
              specfunc/zeta.c specfunc/elementary.c specfunc/trig.c \
              specfunc/pow_int.c specfunc/result.c \
              err/error.c err/stream.c err/message.c err/strerror.c \
              sys/infnan.c sys/fdiv.c sys/coerce.c sys/minmax.c sys/pow_int.c \
              roots/brent.c roots/fsolver.c roots/convergence.c \
              eigen/symmv.c eigen/sort.c linalg/symmtd.c linalg/householder.c \
              blas/blas.c cblas/ddot.c cblas/daxpy.c cblas/dcopy.c \
              cblas/dgemv.c cblas/dger.c cblas/dnrm2.c cblas/dscal.c cblas/dsymv.c \
              cblas/dsyr2.c cblas/xerbla.c vector/init.c vector/view.c \
              vector/oper.c vector/vector.c vector/copy.c vector/subvector.c vector/swap.c matrix/init.c \
              matrix/view.c matrix/matrix.c matrix/rowcol.c matrix/copy.c \
              matrix/submatrix.c matrix/swap.c block/init.c sort/sort.c
WASM_CJSON := cJSON.c
WASM_OBJ   := $(WASM_OWN:%.c=$(WASM)/obj/%.o) \
              $(WASM_GSL:%.c=$(WASM)/obj/gsl/%.o) \
              $(WASM_CJSON:%.c=$(WASM)/obj/cjson/%.o)
WASM_CFLAGS := -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -I$(WASM_INC)
WASM_FNS   := _dl_free,_dl_scenario,_dl_methods,_dl_run,_dl_plan,_dl_curve,_malloc,_free
WASM_LDFLAGS := -O2 -s SINGLE_FILE=1 -s MODULARIZE=1 \
              -s EXPORT_NAME=dilosimEngine -s ALLOW_MEMORY_GROWTH=1 \
              -s ENVIRONMENT=web,node -s FILESYSTEM=1 -s WASM_ASYNC_COMPILATION=0 \
              -s EXPORTED_FUNCTIONS=$(WASM_FNS) \
              -s EXPORTED_RUNTIME_METHODS=ccall,UTF8ToString

.PHONY: wasm wasm-src
wasm:
ifeq ($(HAVE_EMCC),1)
	@$(MAKE) --no-print-directory $(WASM)/src/.fetched
	@$(MAKE) --no-print-directory $(WASM_JS)
else
	@echo "make wasm: $(EMCC) not found: install emscripten (apt-get install" \
	  "emscripten) to build the interactive page's engine" >&2; exit 1
endif

# The sources, once: fetched, checked, unpacked; the headers where
# #include <gsl/...> and <cjson/cJSON.h> find them; GSL's config.h.
$(WASM)/src/.fetched: sim/wasm/fetch_src.sh
	@sim/wasm/fetch_src.sh $(WASM_SRCD)
	@mkdir -p $(WASM_INC)/gsl $(WASM_INC)/cjson
	@for h in $(WASM_SRCD)/gsl/*/gsl_*.h $(WASM_SRCD)/gsl/gsl_*.h; do \
	  cp -f "$$h" $(WASM_INC)/gsl/ || exit 1; done
	@cp -f $(WASM_SRCD)/cjson/cJSON.h $(WASM_INC)/cjson/
	@sed -e 's/^#undef \(HAVE_DECL_[A-Z0-9]*\)$$/#define \1 1/' \
	  -e 's/^#define HAVE_DECL_\(FEENABLEEXCEPT\|FESETTRAPENABLE\|FPRND_T\|FINITE\) 1$$/#define HAVE_DECL_\1 0/' \
	  -e 's/^#undef \(HAVE_IEEE_COMPARISONS\|HAVE_IEEE_DENORMALS\|HAVE_C99_INLINE\|STDC_HEADERS\|HAVE_\(STD\|INT\)[A-Z]*_H\|HAVE_STRING_H\|HAVE_MEMCPY\|HAVE_MEMMOVE\|HAVE_VPRINTF\)$$/#define \1 1/' \
	  $(WASM_SRCD)/gsl/config.h.in >$(WASM_INC)/config.h
	@touch $@

$(WASM)/obj/%.o: %.c $(WASM)/src/.fetched
	@mkdir -p $(@D)
	$(EMCC) $(WASM_CFLAGS) $(WARN) $(WASM_NOWARN) -I. -MMD -MP -c -o $@ $<
# libm.c: log, exp, pow, log10 as glibc computes them (see the file),
# built on the tables and internal header of emscripten's musl
EM_ROOT    = $(shell $(dir $(shell command -v $(EMCC)))em-config EMSCRIPTEN_ROOT 2>/dev/null)
MUSL       = $(EM_ROOT)/system/lib/libc/musl/src
$(WASM)/obj/sim/wasm/libm.o: WASM_CFLAGS += -I$(MUSL)/math -I$(MUSL)/internal \
  -I$(MUSL)/include
$(WASM)/obj/sim/wasm/libm.o: WASM_NOWARN := -Wno-unused-but-set-variable
$(WASM)/obj/sim/base/version.o: $(B)/version_rev.h
$(WASM)/obj/sim/base/version.o: WASM_CFLAGS += -include $(B)/version_rev.h
$(WASM)/obj/gsl/%.o: $(WASM)/src/.fetched
	@mkdir -p $(@D)
	$(EMCC) $(WASM_CFLAGS) -I$(WASM_SRCD)/gsl -w -c -o $@ $(WASM_SRCD)/gsl/$*.c
$(WASM)/obj/cjson/%.o: $(WASM)/src/.fetched
	@mkdir -p $(@D)
	$(EMCC) $(WASM_CFLAGS) -w -c -o $@ $(WASM_SRCD)/cjson/$*.c

$(WASM_JS): $(WASM_OBJ)
	$(EMCC) $(WASM_LDFLAGS) -o $@ $^ -lm

-include $(WASM_OWN:%.c=$(WASM)/obj/%.d)
