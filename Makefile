# A thin driver over CMake. Every entry point installs what is missing first.
#   make        build build/knee
#   make test   build, run every test, then the same tests under ASan+UBSan
#   make lab    build and run the main job (knee lab; LAB_ARGS='all --quick' and so on)
#   make bench  build and run the benchmarks (bench/README.md)
BUILD   ?= build
ASAN    ?= build-asan
JOBS    ?= $(shell nproc)
CTEST   = ctest --output-on-failure -j$(JOBS)

.PHONY: all deps build test test-fast test-asan lab bench fuzz format format-check clean

all: build

deps:
	@scripts/deps.sh

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@cmake --build $(BUILD) -j$(JOBS)

test: build
	cd $(BUILD) && $(CTEST)
	@$(MAKE) --no-print-directory test-asan

test-fast: build
	cd $(BUILD) && $(CTEST)

test-asan: deps
	@cmake -S . -B $(ASAN) -DCMAKE_BUILD_TYPE=Debug -DKNEE_SANITIZE=ON >/dev/null
	@cmake --build $(ASAN) -j$(JOBS)
	cd $(ASAN) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 $(CTEST)

lab: build
	./$(BUILD)/knee lab $(LAB_ARGS)

bench: build
	@scripts/deps.sh --bench
	bench/run.sh

fuzz: deps
	@CC=clang cmake -S . -B build-fuzz -DKNEE_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@cmake --build build-fuzz -j$(JOBS)

format:
	clang-format -i $$(git ls-files --cached --others --exclude-standard '*.c' '*.h')

# Fails (listing the files) when a C source is not as .clang-format says; CI runs it.
format-check: deps
	@bad=$$(for f in $$(git ls-files --cached --others --exclude-standard '*.c' '*.h'); do clang-format --dry-run -Werror "$$f" >/dev/null 2>&1 || echo "$$f"; done); \
	if [ -n "$$bad" ]; then echo "not clang-formatted (run 'make format'):" $$bad >&2; exit 1; fi

clean:
	rm -rf $(BUILD) $(ASAN) build-fuzz
