# A thin driver over CMake. Every entry point installs what is missing first (scripts/deps.sh),
# and only what it needs: the binary's build dependencies, plus the test tools for `make test`.
#   make / make build   build build/knee (and nothing else)
#   make install        build/knee, its man page and bash/zsh completion under PREFIX (DESTDIR honoured)
#   make deb            build-deb/knee_<version>_<arch>.deb (CPack), with the same files under /usr
#   make test           build everything, run the exact tier (in parallel), the exact tier again
#                       under ASan+UBSan, then the timing tier (plain, one test at a time)
#   make lab            build and run the main job (knee lab; LAB_ARGS='all --quick' and so on)
#   make bench          build and run the benchmarks (bench/README.md)
BUILD   ?= build
ASAN    ?= build-asan
DEB     ?= build-deb
PREFIX  ?= /usr/local
JOBS    ?= $(shell nproc)
# The exact tier's tests mostly wait on sockets, timers and child processes: ctest runs
# EXACT_JOBS of them at a time (four per core; measured in docs/INTERNALS.md, "Tests: two
# tiers"). The timing tier's run one at a time (RUN_SERIAL).
EXACT_JOBS ?= $(shell echo $$(( $$(nproc) * 4 )))
CTEST   = ctest --output-on-failure
ASAN_ENV = ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# CMake's makefiles call make recursively: without this, every level says where it is.
MAKEFLAGS += --no-print-directory
# $(call configure,DIR,FLAGS): quietly (CMake's status lines go away; warnings and errors
# are on stderr and stay).
configure = cmake -S . -B $(1) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(2) >/dev/null

.PHONY: all deps build install uninstall deb test test-fast test-exact test-asan test-timing test-build asan-build lab bench fuzz fuzz-run format format-check clean

all: build

deps:
	@scripts/deps.sh

build: deps
	@$(call configure,$(BUILD))
	@cmake --build $(BUILD) -j$(JOBS) --target knee
	@echo "built $(BUILD)/knee (try ./$(BUILD)/knee --help; 'make install' puts it on the PATH)"

install: build
	@$(call configure,$(BUILD),-DCMAKE_INSTALL_PREFIX=$(PREFIX))
	@cmake --build $(BUILD) -j$(JOBS) --target knee knee_docs
	@DESTDIR=$(DESTDIR) cmake --install $(BUILD)

uninstall:
	@test -f $(BUILD)/install_manifest.txt || { echo "nothing installed from $(BUILD)" >&2; exit 1; }
	@while read -r f || [ -n "$$f" ]; do rm -fv "$(DESTDIR)$$f"; done < $(BUILD)/install_manifest.txt

deb:
	@scripts/deps.sh --deb
	@$(call configure,$(DEB),-DCMAKE_INSTALL_PREFIX=/usr -DKNEE_TESTS=OFF)
	@cmake --build $(DEB) -j$(JOBS)
	@cd $(DEB) && cpack -G DEB

# Everything the tests run: unit tests, replayers, benchmark tools, man page, completions.
test-build:
	@scripts/deps.sh --test
	@$(call configure,$(BUILD),-DKNEE_TESTS=ON)
	@cmake --build $(BUILD) -j$(JOBS)

# The three parts of `make test` (docs/INTERNALS.md, "Tests: two tiers"): the exact tier plain,
# the exact tier under ASan+UBSan, the timing tier plain and serial, last, on a machine no
# build is loading. Every part runs even when one before it failed; make test fails when any did.
test: test-build
	@failed=""; \
	echo "== make test: the exact tier ($(EXACT_JOBS) tests at a time)"; \
	(cd $(BUILD) && $(CTEST) -L exact -j$(EXACT_JOBS)) || failed="$$failed exact"; \
	echo "== make test: the exact tier under ASan+UBSan"; \
	($(MAKE) asan-build && cd $(ASAN) && $(ASAN_ENV) $(CTEST) -L exact -j$(EXACT_JOBS)) || failed="$$failed exact-ASan"; \
	echo "== make test: the timing tier (one test at a time)"; \
	(cd $(BUILD) && $(CTEST) -L timing) || failed="$$failed timing"; \
	if [ -n "$$failed" ]; then echo "make test: FAILED:$$failed" >&2; exit 1; fi; \
	echo "make test: the exact tier, plain and under ASan+UBSan, and the timing tier passed"

# Each part alone: the exact tier plain, the exact tier under ASan+UBSan, the timing tier.
test-exact: test-build
	cd $(BUILD) && $(CTEST) -L exact -j$(EXACT_JOBS)

test-asan: asan-build
	cd $(ASAN) && $(ASAN_ENV) $(CTEST) -L exact -j$(EXACT_JOBS)

test-timing: test-build
	cd $(BUILD) && $(CTEST) -L timing

# Both tiers plain, no ASan pass.
test-fast: test-build
	@failed=""; \
	(cd $(BUILD) && $(CTEST) -L exact -j$(EXACT_JOBS)) || failed="$$failed exact"; \
	(cd $(BUILD) && $(CTEST) -L timing) || failed="$$failed timing"; \
	if [ -n "$$failed" ]; then echo "make test-fast: FAILED:$$failed" >&2; exit 1; fi

asan-build:
	@scripts/deps.sh --test
	@cmake -S . -B $(ASAN) -DCMAKE_BUILD_TYPE=Debug -DKNEE_SANITIZE=ON -DKNEE_TESTS=ON >/dev/null
	@cmake --build $(ASAN) -j$(JOBS)

lab: build
	./$(BUILD)/knee lab $(LAB_ARGS)

bench:
	@scripts/deps.sh --bench
	@$(call configure,$(BUILD))
	@cmake --build $(BUILD) -j$(JOBS)
	bench/run.sh

fuzz:
	@scripts/deps.sh --test
	@CC=clang cmake -S . -B build-fuzz -DKNEE_FUZZ=ON -DKNEE_TESTS=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@cmake --build build-fuzz -j$(JOBS)

# Every fuzz target for a fixed time (FUZZ_SECONDS each, default 120); findings are copied
# into tests/fuzz/corpus/<name>/ (replayed by make test) and the target fails.
fuzz-run: fuzz
	@scripts/fuzz-run.sh $(or $(FUZZ_SECONDS),120)

format:
	clang-format -i $$(git ls-files --cached --others --exclude-standard '*.c' '*.h')

# Fails (listing the files) when a C source is not as .clang-format says; CI runs it.
format-check:
	@scripts/deps.sh --test
	@bad=$$(for f in $$(git ls-files --cached --others --exclude-standard '*.c' '*.h'); do clang-format --dry-run -Werror "$$f" >/dev/null 2>&1 || echo "$$f"; done); \
	if [ -n "$$bad" ]; then echo "not clang-formatted (run 'make format'):" $$bad >&2; exit 1; fi

clean:
	rm -rf $(BUILD) $(ASAN) $(DEB) build-fuzz
