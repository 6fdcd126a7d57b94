// All micro-benchmarks in one Google Benchmark binary (for ad-hoc runs with
// the usual --benchmark_* flags). `layersec bench ...` is the usual front end.
#include <benchmark/benchmark.h>

BENCHMARK_MAIN();
