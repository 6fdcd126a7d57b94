// Driver for fuzz targets without libFuzzer: replays every file in the given
// corpus folders, then `--iterations N` deterministic pseudo-random inputs
// (lengths 0..2048, some derived by mutating corpus files). Exits non-zero
// only if the target crashes or aborts (which ends the process anyway).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

int main(int argc, char** argv) {
  std::size_t iterations = 0;
  std::vector<std::vector<std::uint8_t>> corpus;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--iterations") == 0 && i + 1 < argc) {
      iterations = std::strtoull(argv[++i], nullptr, 10);
      continue;
    }
    std::filesystem::path p(argv[i]);
    std::vector<std::filesystem::path> files;
    if (std::filesystem::is_directory(p)) {
      for (const auto& e : std::filesystem::directory_iterator(p))
        if (e.is_regular_file()) files.push_back(e.path());
    } else if (std::filesystem::exists(p)) {
      files.push_back(p);
    }
    for (const auto& f : files) {
      std::ifstream in(f, std::ios::binary);
      corpus.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
  }
  for (const auto& c : corpus) LLVMFuzzerTestOneInput(c.data(), c.size());
  std::mt19937_64 rng(0x6c61796572736563ULL);  // fixed seed: reproducible
  std::vector<std::uint8_t> buf;
  for (std::size_t i = 0; i < iterations; ++i) {
    if (!corpus.empty() && (i % 2 == 0)) {
      buf = corpus[rng() % corpus.size()];
      const std::size_t flips = 1 + rng() % 4;
      for (std::size_t k = 0; k < flips && !buf.empty(); ++k) {
        switch (rng() % 4) {
          case 0: buf[rng() % buf.size()] ^= static_cast<std::uint8_t>(1u << (rng() % 8)); break;
          case 1: buf[rng() % buf.size()] = static_cast<std::uint8_t>(rng()); break;
          case 2: buf.resize(rng() % (buf.size() + 1)); break;
          default: buf.insert(buf.begin() + static_cast<long>(rng() % (buf.size() + 1)),
                              static_cast<std::uint8_t>(rng())); break;
        }
      }
    } else {
      buf.resize(rng() % 2049);
      for (auto& b : buf) b = static_cast<std::uint8_t>(rng());
    }
    LLVMFuzzerTestOneInput(buf.data(), buf.size());
  }
  std::printf("fuzz: %zu corpus inputs, %zu generated inputs, no crash\n", corpus.size(), iterations);
  return 0;
}
