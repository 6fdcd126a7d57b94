// `layersec bench kex`: KEM keygen/encaps/decaps medians, the 4-step
// negotiation over TCP loopback and peak RSS per scheme (bench/kex_bench.cc).
#include <cstdlib>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_checks.h"
#include "command.h"
#include "layersec/base/file.h"
#include "layersec/kex/kem.h"
#include "runner.h"

namespace layersec::kexbench {  // bench/kex_bench.cc
nlohmann::json run(const std::vector<kex::KemScheme>& schemes, bool smoke, const std::string& rsa15360_pem,
                   std::ostream& log);
void print(const nlohmann::json& rows, std::ostream& out);
}  // namespace layersec::kexbench

namespace layersec::app {
namespace {

struct BenchOptions {
  std::string json_path;
  bool smoke = false;
  std::vector<std::string> schemes;
  std::string rsa15360_pem;
};

void bench_kex(const BenchOptions& o) {
  std::vector<kex::KemScheme> schemes;
  for (const auto& n : o.schemes) {
    auto s = kex::parse_scheme(n);
    if (!s) throw std::runtime_error("kem: unknown scheme '" + n + "'");
    schemes.push_back(*s);
  }
  std::string pem = o.rsa15360_pem;
  if (pem.empty()) {
    std::vector<std::string> candidates;
    if (const char* src = std::getenv("LAYERSEC_SOURCE_DIR"); src && *src)
      candidates.push_back(std::string(src) + "/testdata/kex/rsa15360.pem");
#ifdef LAYERSEC_SOURCE_DIR
    candidates.push_back(std::string(LAYERSEC_SOURCE_DIR) + "/testdata/kex/rsa15360.pem");
#endif
    candidates.push_back("testdata/kex/rsa15360.pem");
    for (const auto& c : candidates)
      if (check_regular_file(c).empty()) {
        pem = c;
        break;
      }
  }
  std::cout << "layersec bench kex" << (o.smoke ? " (smoke: 3 samples per operation)" : "")
            << ": median microseconds per operation, each call timed on its own\n";
  auto rows = kexbench::run(schemes, o.smoke, o.smoke ? std::string() : pem, std::cout);
  kexbench::print(rows, std::cout);
  if (!o.json_path.empty()) benchrun::write_json(o.json_path, rows);
}

// Order 40, as `kem` (cmd_kem.cc) that registered it before, so `bench
// --help` lists it where it did.
const CommandRegistration reg(40, [](CLI::App& root) {
  auto bopts = std::make_shared<BenchOptions>();
  auto* bk = bench_group(root).add_subcommand(
      "kex", "KEMs: keygen/encaps/decaps medians, 4-step negotiation over TCP loopback, peak RSS per scheme, with the NTRU paper's ratios");
  bk->add_option("--json", bopts->json_path,
                 "write rows {scheme, keygen_us, encaps_us, decaps_us, negotiation_us, peak_rss_kib, ...} to FILE")
      ->check(kOutputFile);
  bk->add_flag("--smoke", bopts->smoke, "3 samples per operation, no RSA-15360: proves the benchmark runs");
  bk->add_option("--scheme", bopts->schemes, "only these schemes (repeatable)");
  bk->add_option("--rsa15360-pem", bopts->rsa15360_pem,
                 "pre-generated RSA-15360 private key (PEM, mode 0600); default testdata/kex/rsa15360.pem if present")
      ->check(kRegularFile);
  bk->callback([bopts] { bench_kex(*bopts); });
});

}  // namespace
}  // namespace layersec::app
