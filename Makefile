# rooftune -- build, test, sanitize, benchmark.
#
#   make            build/rooftune
#   make test       install missing Debian packages, build, check the file
#                   graph (scripts/deps.py), run every test
#   make asan       the same tests under AddressSanitizer + UBSan (build-asan/)
#   make bench      speed benchmarks of the space engine (see bench/)
#   make demo       the README's first command
#   make fuzz       every libFuzzer target of fuzz/ for FUZZ_SECONDS each
#                   (clang, build-fuzz/; scripts/run-fuzz); new crashes go
#                   to fuzz/regress/TARGET/ and fail it
#   make device-bundle  a folder to carry to the GPU machine: bin/rooftune,
#                   lib/ (the shared libraries that machine lacks), space
#                   files, the GPU tests, run script (BUNDLE, default
#                   $(BUILD)/device-bundle; built without MPI, in
#                   $(BUILD)/nompi when MPI is on; scripts/device-bundle.sh)
#
# Objects go to $(BUILD)/ mirroring the source tree; headers are tracked
# with -MMD. Every room's .c files form librooftune.a; the CLI and the
# tests link it.

CC      ?= cc
BUILD   ?= build
OPT     ?= -O2
SAN     ?=
# The CUDA target includes the toolkit's headers only: the driver, NVRTC,
# cuBLAS and CUPTI are loaded at run time (targets/cuda/gd.h).
CUDA_HOME ?= /usr/local/cuda
CFLAGS_ALL = -std=c11 -D_GNU_SOURCE $(OPT) -g -Wall -Wextra -Werror -Wshadow \
             -Wstrict-prototypes -Wmissing-prototypes -I. -isystem $(CUDA_HOME)/include \
             -MMD -MP $(SAN) $(CFLAGS)
# GSL is linked statically: its CBLAS must not be visible to the candidates
# the harness dlopens (a baseline calling cblas_sgemm would bind to it).
LDLIBS_ALL = -ljansson -lsqlite3 -lz -Wl,-Bstatic -lgsl -lgslcblas -Wl,-Bdynamic -lpapi -ldl -lm $(LDLIBS)

ROOMS   = common search_spaces tuner cost_model measure db targets targets/host targets/cuda targets/opencl targets/model \
          targets/rvv targets/user mpi
LIB_SRC = $(foreach r,$(ROOMS),$(wildcard $(r)/*.c))
CLI_SRC = $(wildcard cli/*.c)
TEST_SRC = $(wildcard tests/test_*.c)
BENCH_SRC = $(wildcard bench/*.c)

LIB_OBJ = $(LIB_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ = $(CLI_SRC:%.c=$(BUILD)/%.o)
TESTS   = $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
BENCHES = $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)

.PHONY: all test asan bench demo deps clean install uninstall device-bundle fuzz fuzz-build fuzz-merge
all: $(BUILD)/rooftune $(TESTS) $(BUILD)/librtdb.a $(BUILD)/librtdb.so $(BUILD)/rtdb.pc

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c $< -o $@

# cupti_profiler_host.h includes the C++ header <string>: gd_cupti.c (C)
# finds the empty file targets/cuda/cupti_c/string instead.
$(BUILD)/targets/cuda/gd_cupti.o: CFLAGS_ALL += -isystem targets/cuda/cupti_c

# MPI campaigns (mpi/mp.h): with Open MPI's development files (pkg-config
# ompi-c) mpi/mp.c is built with HAVE_MPI and every program links libmpi;
# without them (or with MPI=0) mp.c is a pool of no workers and rooftune
# builds and behaves as before.
MPI ?= $(shell pkg-config --exists ompi-c 2>/dev/null && echo 1 || echo 0)
ifeq ($(MPI),1)
$(BUILD)/mpi/mp.o: CFLAGS_ALL += -DHAVE_MPI $(patsubst -I%,-isystem %,$(shell pkg-config --cflags ompi-c))
LDLIBS_ALL += $(shell pkg-config --libs ompi-c)
endif

$(BUILD)/librooftune.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/rooftune: $(CLI_OBJ) $(BUILD)/librooftune.a
	$(CC) $(SAN) $(LDFLAGS) -o $@ $^ $(LDLIBS_ALL)

# The tests' CUDA emulator (tests/cuda_emu/emu_run.h) is linked into every
# test program and never into librooftune.
TEST_EXTRA = $(BUILD)/tests/cuda_emu/emu_run.o
$(BUILD)/tests/cuda_emu/emu_run.o: tests/cuda_emu/emu_run.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c $< -o $@

$(BUILD)/tests/%: $(BUILD)/tests/%.o $(TEST_EXTRA) $(BUILD)/librooftune.a
	$(CC) $(SAN) $(LDFLAGS) -o $@ $^ -lcmocka $(LDLIBS_ALL)

# The Python package's tests (python/tests/, pytest) use the program and the
# reader library of their build.
$(BUILD)/tests/test_python: | $(BUILD)/rooftune $(BUILD)/librtdb.so

# test_rtdb_adapt counts the allocations of the adapter's hot path.
$(BUILD)/tests/test_rtdb_adapt: LDFLAGS += -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc
$(BUILD)/bundle-link/tests/test_rtdb_adapt: LDFLAGS += -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc

# The option-table parser is the CLI's own (not in librooftune).
$(BUILD)/tests/test_cli_opt: $(BUILD)/tests/test_cli_opt.o $(BUILD)/cli/cli_opt.o $(BUILD)/cli/cli.o \
                             $(TEST_EXTRA) $(BUILD)/librooftune.a
	$(CC) $(SAN) $(LDFLAGS) -o $@ $^ -lcmocka $(LDLIBS_ALL)

# The fuzz harnesses (fuzz/fz.h): in every build, test_fuzz replays their
# regression inputs and seeds through them; make fuzz links each with
# libFuzzer (-DFZ_LIBFUZZER names its function LLVMFuzzerTestOneInput).
FUZZ_TARGETS ?= t1 expr config t4 set rtdb lookup tm
FUZZ_OBJ = $(BUILD)/fuzz/fz.o $(FUZZ_TARGETS:%=$(BUILD)/fuzz/fz_%.o)
$(BUILD)/tests/test_fuzz: $(BUILD)/tests/test_fuzz.o $(FUZZ_OBJ) $(TEST_EXTRA) $(BUILD)/librooftune.a
	$(CC) $(SAN) $(LDFLAGS) -o $@ $^ -lcmocka $(LDLIBS_ALL)
$(BUILD)/fuzz/lf_%.o: fuzz/fz_%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -DFZ_LIBFUZZER -c $< -o $@
$(BUILD)/fuzz/fuzz_%: $(BUILD)/fuzz/lf_%.o $(BUILD)/fuzz/fz.o $(BUILD)/librooftune.a
	$(CC) $(SAN) -fsanitize=fuzzer $(LDFLAGS) -o $@ $^ $(LDLIBS_ALL)
.SECONDARY: $(FUZZ_TARGETS:%=$(BUILD)/fuzz/lf_%.o)   # kept: make fuzz relinks nothing twice

$(BUILD)/bench/%: $(BUILD)/bench/%.o $(BUILD)/librooftune.a
	$(CC) $(SAN) $(LDFLAGS) -o $@ $^ $(LDLIBS_ALL)

# The commit of this build: rt_commit.o is rebuilt when it changes.
RT_COMMIT := $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)$(shell \
               git diff --quiet HEAD 2>/dev/null || echo -dirty)
.PHONY: FORCE
$(BUILD)/commit.txt: FORCE
	@mkdir -p $(BUILD)
	@echo '$(RT_COMMIT)' | cmp -s - $@ || echo '$(RT_COMMIT)' > $@
$(BUILD)/common/rt_commit.o: common/rt_commit.c $(BUILD)/commit.txt
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -DRT_COMMIT='"$(RT_COMMIT)"' -c $< -o $@

# The reader library for code generators: depends on SQLite only, shipped
# as a static and a shared library with a pkg-config file.
RTDB_SONAME = librtdb.so.1
RTDB_SRC = db/rtdb.c db/rtdb_adapt.c
$(BUILD)/pic/db/%.o: db/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -fPIC -c $< -o $@

$(BUILD)/librtdb.a: $(RTDB_SRC:%.c=$(BUILD)/%.o)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/librtdb.so: $(RTDB_SRC:%.c=$(BUILD)/pic/%.o)
	$(CC) $(SAN) $(LDFLAGS) -shared -Wl,-soname,$(RTDB_SONAME) -o $@ $^ -lsqlite3 -lpthread -lm

PREFIX ?= /usr/local
$(BUILD)/rtdb.pc: db/rtdb.pc.in
	sed 's|@PREFIX@|$(PREFIX)|g' $< > $@

# make install PREFIX=... [DESTDIR=...]: the program, the reader library,
# its header and pkg-config file, the kernels' space files (host and CUDA)
# and the cachegrind shim. Every installed file is listed in
# share/rooftune/install-manifest; make uninstall removes exactly those
# (and the folders install made, when empty), nothing else.
INSTALL_FILES = $(BUILD)/rooftune:bin/rooftune:755 \
  $(BUILD)/librtdb.a:lib/librtdb.a:644 \
  $(BUILD)/librtdb.so:lib/$(RTDB_SONAME):755 \
  db/rtdb.h:include/rtdb.h:644 \
  $(BUILD)/rtdb-install.pc:lib/pkgconfig/rtdb.pc:644 \
  cost_model/cm_shim512.h:share/rooftune/cost_model/cm_shim512.h:644 \
  $(foreach f,$(wildcard targets/host/*.json targets/cuda/*.json targets/opencl/*.json targets/model/*.json targets/rvv/*.json),$(f):share/rooftune/$(f):644)
MANIFEST = share/rooftune/install-manifest
install: $(BUILD)/rooftune $(BUILD)/librtdb.a $(BUILD)/librtdb.so
	@sed 's|@PREFIX@|$(PREFIX)|g' db/rtdb.pc.in > $(BUILD)/rtdb-install.pc
	@set -e; root='$(DESTDIR)$(PREFIX)'; : > $(BUILD)/install-manifest; \
	for spec in $(INSTALL_FILES); do \
	  src=$${spec%%:*}; rest=$${spec#*:}; dst=$${rest%:*}; mode=$${rest##*:}; \
	  install -d "$$root/$$(dirname $$dst)"; install -m $$mode "$$src" "$$root/$$dst"; \
	  echo "$$dst" >> $(BUILD)/install-manifest; \
	done; \
	ln -sf $(RTDB_SONAME) "$$root/lib/librtdb.so"; echo lib/librtdb.so >> $(BUILD)/install-manifest; \
	echo $(MANIFEST) >> $(BUILD)/install-manifest; \
	install -m 644 $(BUILD)/install-manifest "$$root/$(MANIFEST)"; \
	echo "installed under $$root ($$(wc -l < $(BUILD)/install-manifest) files, listed in $(MANIFEST))"

# make uninstall PREFIX=... [DESTDIR=...]: the files of the manifest only.
uninstall:
	@set -e; root='$(DESTDIR)$(PREFIX)'; m="$$root/$(MANIFEST)"; \
	if [ ! -f "$$m" ]; then echo "uninstall: no $$m: nothing installed there by rooftune" >&2; exit 1; fi; \
	while IFS= read -r f; do \
	  case "$$f" in ""|/*|*..*) echo "uninstall: skipping odd manifest line '$$f'" >&2; continue;; esac; \
	  if [ -e "$$root/$$f" ] || [ -L "$$root/$$f" ]; then rm -f -- "$$root/$$f"; fi; \
	done < "$$m"; \
	for d in share/rooftune/targets/host share/rooftune/targets/cuda share/rooftune/targets/opencl share/rooftune/targets/model share/rooftune/targets/rvv share/rooftune/targets \
	         share/rooftune/cost_model share/rooftune lib/pkgconfig; do \
	  rmdir -- "$$root/$$d" 2>/dev/null || true; done; \
	echo "removed rooftune from $$root"

# The GPU machine's bundle: the program and the tests linked again with the
# run path $ORIGIN/../lib as DT_RPATH (which, unlike RUNPATH, also serves
# the bundled libraries' own dependencies: libpapi's libpfm).
# The GPU machine has no Open MPI, and libmpi's own RUNPATH would override
# the bundle's DT_RPATH for libmpi's dependencies: with MPI on here, the
# bundle is built again without it, in $(BUILD)/nompi. The tests bundled are
# those the GPU phases run (experiments/h200/run.sh): all of them are over
# the bundle's 30 MiB.
BUNDLE ?= $(BUILD)/device-bundle
BUNDLE_LDFLAGS = -Wl,-rpath,'$$ORIGIN/../lib' -Wl,--disable-new-dtags
BUNDLE_TEST_NAMES ?= test_gd test_ms_cuda test_ms_cupti test_uk test_cm_bench_cuda test_gk_kernels test_opencl test_load
BUNDLE_TESTS = $(BUNDLE_TEST_NAMES:%=$(BUILD)/bundle-link/tests/%)
$(BUILD)/bundle-link/rooftune: $(CLI_OBJ) $(BUILD)/librooftune.a
	@mkdir -p $(dir $@)
	$(CC) $(SAN) $(LDFLAGS) $(BUNDLE_LDFLAGS) -o $@ $^ $(LDLIBS_ALL)
$(BUILD)/bundle-link/tests/%: $(BUILD)/tests/%.o $(TEST_EXTRA) $(BUILD)/librooftune.a
	@mkdir -p $(dir $@)
	$(CC) $(SAN) $(LDFLAGS) $(BUNDLE_LDFLAGS) -o $@ $^ -lcmocka $(LDLIBS_ALL)
ifeq ($(MPI),1)
device-bundle:
	$(MAKE) BUILD=$(BUILD)/nompi MPI=0 BUNDLE=$(BUNDLE) device-bundle
else
device-bundle: $(BUILD)/bundle-link/rooftune $(BUNDLE_TESTS)
	@scripts/device-bundle.sh $(BUILD) $(BUNDLE)
endif

# The README's commands: they install what is missing, then build and run.
# Their builds use every CPU unless make was given -j already.
NPROC := $(shell getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)
SUBMAKE = $(MAKE) --no-print-directory $(if $(findstring j,$(filter-out --%,$(MAKEFLAGS))),,-j$(NPROC))
deps:
	@scripts/deps.sh

test: deps
	@$(SUBMAKE) all
	@python3 scripts/deps.py --build $(BUILD)   # no circle of files, no backend named outside targets/
	@scripts/run-tests $(BUILD)

ASAN_SAN = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
asan: deps
	@$(SUBMAKE) BUILD=build-asan OPT=-O1 SAN="$(ASAN_SAN)" all
	@ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  RT_BUILD_FLAGS="OPT=-O1 SAN='$(ASAN_SAN)'" scripts/run-tests build-asan

bench: deps
	@$(SUBMAKE) $(BUILD)/rooftune $(BENCHES)
	@scripts/run-bench $(BUILD)

# make fuzz [FUZZ_SECONDS=60] [FUZZ_TARGETS="t1 expr ..."]: the library
# built again with clang and ASan+UBSan+libFuzzer instrumentation in
# build-fuzz/, then each target run in turn (scripts/run-fuzz says how).
# make fuzz-merge folds what those runs found (build-fuzz/corpus/TARGET)
# into the committed seeds, keeping only inputs that add coverage.
FUZZ_CC ?= clang-14
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_SAN = -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
fuzz-build:
	@scripts/deps.sh fuzz
	@$(SUBMAKE) BUILD=$(FUZZ_BUILD) CC=$(FUZZ_CC) OPT=-O1 SAN="$(FUZZ_SAN)" \
	  $(FUZZ_TARGETS:%=$(FUZZ_BUILD)/fuzz/fuzz_%)
fuzz: fuzz-build
	@scripts/run-fuzz $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZ_TARGETS)
fuzz-merge: fuzz-build
	@set -e; for t in $(FUZZ_TARGETS); do mkdir -p $(FUZZ_BUILD)/corpus/$$t; \
	  $(FUZZ_BUILD)/fuzz/fuzz_$$t -merge=1 fuzz/corpus/$$t $(FUZZ_BUILD)/corpus/$$t 2>&1 | tail -1; done

demo: deps
	@$(SUBMAKE) $(BUILD)/rooftune
	@scripts/demo $(BUILD)

clean:
	rm -rf build build-asan build-fuzz

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
