# ringsim - a thin wrapper around CMake.  `make run` and `make test` do all
# the set-up on Debian/Ubuntu (scripts/install-deps.sh installs what is
# missing with apt-get).
BUILD    ?= build
ASAN     ?= build-asan
PORT     ?= 3000
DB       ?= ringsim.db
JOBS     ?= $(shell nproc 2>/dev/null || echo 2)
# Tests at a time: one more than the cores.  On the two-core machine, two
# at a time kept the cores 64% busy (25.3 min of wall for 32 min of CPU on
# a quiet fresh clone): the browser and CLI tests wait on the processes
# they drive.  Three at a time: 23.7 min (ctest 1,271 s against 1,341 s).
# Tests that time the server or kill it run alone (RUN_SERIAL).
TEST_JOBS ?= $(shell echo $$(( $$(nproc 2>/dev/null || echo 2) + 1 )))

TSAN     ?= build-tsan
PREFIX   ?= /usr/local

.PHONY: test-long all build run test lint-c install package test-asan test-tsan asan-build tsan-build test-crash-long bench bench-lib bench-trace bench-ceph bench-10m bench-layout bench-load fuzz fuzz-api fuzz-http fuzz-open fuzz-import fuzz-trace fuzz-build deps deps-test npm clean

all: build

deps:
	@scripts/install-deps.sh

deps-test:
	@scripts/install-deps.sh --test

$(BUILD)/Makefile: CMakeLists.txt
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null

build: deps $(BUILD)/Makefile
	cmake --build $(BUILD) -j $(JOBS) -- --no-print-directory

# `make run` builds the program and its manual page only (no tests, no
# benchmarks: those are `make` and `make test`), and installs nothing.
run: deps $(BUILD)/Makefile
	cmake --build $(BUILD) -j $(JOBS) --target ringsim manpage -- --no-print-directory
	@echo "ringsim: open http://localhost:$(PORT)/ (Ctrl-C stops); the manual: man -l docs/ringsim.1"
	$(BUILD)/ringsim serve --port $(PORT) --db $(DB)

# `make install PREFIX=/usr DESTDIR=/tmp/root`: the binary (with the page),
# the scenarios, ringsim(1), bash completion and docs/api.md.
install: build
	DESTDIR="$(DESTDIR)" cmake --install $(BUILD) --prefix "$(PREFIX)"

# A Debian package (CPack) in $(BUILD): ringsim_VERSION_ARCH.deb.
package: build
	cmake --build $(BUILD) --target package

node_modules/.package-lock.json: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	@touch $@

npm: node_modules/.package-lock.json

# Everything, in three builds and one run of ctest (-j 2, the machine's
# two cores): the tests that drive the C code (unit, CLI, API, random
# requests, hardening) under AddressSanitizer + UndefinedBehaviorSanitizer;
# on the plain build, what needs it (the page's tests, lint, the crash
# and fault tests, install and package) and what answers shapes once
# (scenarios, docs, the comparisons with real programs, whose C paths the
# unit tests drive under the sanitizers); the threaded paths under
# ThreadSanitizer.  CMakeLists.txt ("which tree runs which test") gives
# each test its tree; the ones that time the server or start real
# clusters run alone (RUN_SERIAL).
ALL      ?= build-all
test: deps-test npm build asan-build tsan-build
	cmake -S . -B $(BUILD) -DRINGSIM_REQUIRE_REFS=ON >/dev/null
	cmake --build $(BUILD) -j $(JOBS) -- --no-print-directory
	scripts/ctest-all.sh $(ALL) $(BUILD) $(ASAN) $(TSAN)
	cd $(ALL) && ctest --output-on-failure -j $(TEST_JOBS) -LE '^dup$$'

asan-build: deps
	cmake -S . -B $(ASAN) -DCMAKE_BUILD_TYPE=Debug -DRINGSIM_SANITIZE=ON -DRINGSIM_REQUIRE_REFS=ON >/dev/null
	cmake --build $(ASAN) -j $(JOBS) -- --no-print-directory

# The threaded paths only: the server, the engine's tests and libringsim's
# lookups from many threads on one placement; only their programs are built.
tsan-build: deps
	cmake -S . -B $(TSAN) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRINGSIM_TSAN=ON >/dev/null
	cmake --build $(TSAN) -j $(JOBS) --target ringsim test_sim test_lib_threads -- --no-print-directory

# One tree's share of make test on its own.
test-asan: asan-build
	cd $(ASAN) && ctest --output-on-failure -j 2 -LE '^dup$$'

test-tsan: tsan-build
	cd $(TSAN) && ctest --output-on-failure -j 2 -LE '^dup$$'

# The crash test at length: more rounds, bigger operations (minutes); then
# two servers and the CLI writing one database at once, `check` after each
# of WRITERS_ROUNDS rounds.
CRASH_ROUNDS ?= 60
CRASH_SCALE  ?= 3
WRITERS_ROUNDS ?= 300
test-crash-long: build
	CRASH_ROUNDS=$(CRASH_ROUNDS) CRASH_SCALE=$(CRASH_SCALE) CRASH_VERBOSE=1 \
	  node tests/crash_test.mjs $(BUILD)/ringsim
	WRITERS_ROUNDS=$(WRITERS_ROUNDS) WRITERS_VERBOSE=1 \
	  node tests/writers_test.mjs $(BUILD)/ringsim

# The engine's random topologies (tests/test_sim.c), SIM_ROUNDS seeds
# instead of make test's 400.
SIM_ROUNDS ?= 5000
test-long: build test-crash-long
	SIM_ROUNDS=$(SIM_ROUNDS) $(BUILD)/test_sim

bench: build
	$(BUILD)/bench_ringsim
	$(BUILD)/bench_place
	$(BUILD)/bench_history
	$(BUILD)/bench_diff
	$(BUILD)/bench_ketama
	$(BUILD)/bench_envoy
	$(BUILD)/bench_textbook
	$(BUILD)/bench_workload
	$(BUILD)/bench_traffic
	$(MAKE) --no-print-directory bench-trace
	$(MAKE) --no-print-directory bench-lib

# libringsim against the engine's own lookups, then the Python module's
# lookup_many of 1M keys against the C library and Debian's uhashring.
# `ringsim trace` beside a bare read-split-hash loop over a ten-million-line
# access log, lines per second by format, memory at 1M and 10M lines
# (bench/bench_trace.c; about 1 GiB in /tmp, a few minutes).
bench-trace: build
	$(BUILD)/bench_trace

bench-lib: build
	$(BUILD)/bench_lib
	PYTHONPATH=$(BUILD)/python /usr/bin/python3 bench/bench_python.py $(BUILD)/bench_lib

# 10M keys / 1000 nodes against 1M / 100 under ring and cassandra: key gen
# and a node add per key moved (bench/bench_place.c part 5; about five
# minutes, 1.2 GB of work files under $TMPDIR).
bench-10m: build
	$(BUILD)/bench_place --10m

# The keys table's candidate layouts, SQLite alone, at 1M keys (all of
# them) and 10M keys (today's ring, and schema 6 with and without its
# position index) (bench/probe_layout.c; tens of minutes on two cores).
bench-layout: build
	$(BUILD)/probe_layout 1000000 3
	$(BUILD)/probe_layout 10000000 1 /tmp coord-pos,coord-posbulk

# CRUSH: 1M PG seeds through one map, ringsim's core against crushtool
# --test in the same run (medians of 5; needs ceph-base: make deps-test).
bench-ceph: build
	$(BUILD)/bench_ceph 1000000 5

# HTTP load with wrk on loopback at 1M keys, beside nginx serving a file in
# the same run (bench/load.sh; about three minutes).
bench-load: build
	bench/load.sh $(BUILD)/ringsim

# Property fuzzing of the engine with libFuzzer (clang): random operation
# sequences must always pass `check`.  FUZZ_SECONDS bounds the run.
FUZZ_SECONDS ?= 120
# The fuzz targets are built by CMake from the same libraries as the
# program (fuzz/CMakeLists.txt), in a clang tree of their own.
FUZZ     ?= build-fuzz
fuzz-build: deps
	cmake -S . -B $(FUZZ) -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug -DRINGSIM_FUZZ=ON >/dev/null
	cmake --build $(FUZZ) -j $(JOBS) --target fuzz_sim fuzz_open fuzz_api fuzz_http fuzz_trace \
	  $(addprefix fuzz_import_,$(IMPORT_FORMATS)) -- --no-print-directory

fuzz: fuzz-build
	mkdir -p $(BUILD)/fuzz-corpus
	$(FUZZ)/fuzz/fuzz_sim -max_total_time=$(FUZZ_SECONDS) -max_len=200 $(BUILD)/fuzz-corpus
	$(MAKE) fuzz-import

# The import parsers (src/io/import_*.c), one target per format, each with any
# bytes from its seeds (fuzz/import-seeds/FORMAT, small: alias bombs, deep
# nesting, anchors, ids, twins and many tokens among them; the 16 MiB
# worst cases are generated by unit_import and the hardening test): a
# result with valid nodes or a refusal with a line, never a crash, a
# timeout or a memory blow-up.  The YAML formats use fuzz/yaml.dict.
# FUZZ_SECONDS per format.
IMPORT_FORMATS = nginx haproxy libmemcached twemproxy envoy nodetool redis
fuzz-import: fuzz-build
	set -e; for f in $(IMPORT_FORMATS); do \
	  mkdir -p $(BUILD)/fuzz-import-$$f-corpus; \
	  dict=; case $$f in envoy|twemproxy) dict=-dict=fuzz/yaml.dict;; esac; \
	  $(FUZZ)/fuzz/fuzz_import_$$f -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -timeout=10 $$dict \
	    $(BUILD)/fuzz-import-$$f-corpus fuzz/import-seeds/$$f; \
	done

# The request-log readers (src/io/trace_read.c) with any bytes in any format:
# a reader or a refusal with a message, every key a name, never a crash.
fuzz-trace: fuzz-build
	mkdir -p $(BUILD)/fuzz-trace-corpus
	$(FUZZ)/fuzz/fuzz_trace -max_total_time=$(FUZZ_SECONDS) -max_len=300000 -timeout=10 \
	  $(BUILD)/fuzz-trace-corpus

# The API's routes and handlers with random requests: never a crash, never
# an answer that is not 200/201 or a well-formed error object.
fuzz-api: fuzz-build
	mkdir -p $(BUILD)/fuzz-api-corpus
	$(FUZZ)/fuzz/fuzz_api -max_total_time=$(FUZZ_SECONDS) -max_len=65536 $(BUILD)/fuzz-api-corpus

# The server's real request path: raw bytes through the head parser, the
# chunked decoder and the request checks (http_parse.c) on to the handlers.
fuzz-http: fuzz-build
	mkdir -p $(BUILD)/fuzz-http-corpus
	$(FUZZ)/fuzz/fuzz_http -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -dict=fuzz/http.dict \
	  $(BUILD)/fuzz-http-corpus fuzz/http-seeds

# Opening damaged databases: a valid small file, cut and with bytes
# flipped, must open (or be refused), check and read without a crash.
fuzz-open: fuzz-build
	mkdir -p $(BUILD)/fuzz-open-corpus
	$(FUZZ)/fuzz/fuzz_open -max_total_time=$(FUZZ_SECONDS) -max_len=400 -timeout=30 \
	  $(BUILD)/fuzz-open-corpus

# clang-tidy over src/ (its folders too) with all of .clang-tidy: the
# analyzer and the bug-finding checks, JOBS files at a time.  (make test's
# ctest `tidy` runs the list CMakeLists.txt chooses for its time budget.)
lint-c: build
	TIDY_JOBS=$(JOBS) scripts/tidy.sh $(BUILD)

clean:
	rm -rf $(BUILD) $(ASAN) $(TSAN)
