# layersec quick start:
#   make demo   install dependencies, build Release, run the self test and the main job
#               (layersec demo: the paper's ten scenarios; results in build/demo-results)
#   make test   install dependencies, build, run the whole ctest suite
# Other targets: test-asan (ASan+UBSan build with clang, Debug), fuzz (libFuzzer
# build with clang), bench (Release benchmarks), package (Release build and the
# Debian package build/release/layersec_*.deb, docs/install.md), clean.
JOBS ?= $(shell nproc)
CMAKE_COMMON = -G Ninja -DLAYERSEC_WERROR=ON

.PHONY: deps demo test test-asan fuzz fuzz-campaign bench package clean

deps:
	@./scripts/install-deps.sh

build/release/build.ninja: | deps
	cmake -S . -B build/release $(CMAKE_COMMON) -DCMAKE_BUILD_TYPE=Release

demo: deps build/release/build.ninja
	cmake --build build/release -j $(JOBS) --target layersec
	./build/release/apps/layersec/layersec selftest
	./build/release/apps/layersec/layersec demo --out build/demo-results

test: deps
	cmake -S . -B build/test $(CMAKE_COMMON) -DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build build/test -j $(JOBS)
	ctest --test-dir build/test --output-on-failure -j $(JOBS)

test-asan: deps
	cmake -S . -B build/asan $(CMAKE_COMMON) -DCMAKE_BUILD_TYPE=Debug -DLAYERSEC_SANITIZE=ON \
	  -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14
	cmake --build build/asan -j $(JOBS)
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --test-dir build/asan --output-on-failure -j $(JOBS) -LE slow

fuzz: deps
	cmake -S . -B build/fuzz $(CMAKE_COMMON) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLAYERSEC_FUZZ=ON \
	  -DLAYERSEC_TESTS=OFF -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14
	cmake --build build/fuzz -j $(JOBS)
	@echo "fuzzers are in build/fuzz/fuzz/ (run e.g. build/fuzz/fuzz/secoc_fuzz -max_total_time=60)"

# 10^7 executions of every libFuzzer target, one at a time (docs/fuzz.md);
# e.g. make fuzz-campaign FUZZ_CAMPAIGN_ARGS="--runs 100000 --targets frame,ber".
fuzz-campaign: deps
	./scripts/fuzz_campaign.sh --jobs $(JOBS) $(FUZZ_CAMPAIGN_ARGS)

bench: deps build/release/build.ninja
	cmake --build build/release -j $(JOBS) --target layersec
	./build/release/apps/layersec/layersec bench crypto --json build/release/bench-crypto.json

# The CLI, the static libraries, headers, CMake and pkg-config files, the
# selftest vectors and the docs in one .deb (CPack; cmake/layersec_install.cmake).
package: deps build/release/build.ninja
	cmake --build build/release -j $(JOBS) --target layersec_install_set
	cd build/release && cpack -G DEB
	@ls build/release/layersec_*.deb

clean:
	rm -rf build
