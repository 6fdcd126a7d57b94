// `layersec bench crypto`: every MAC/AEAD wrapper beside a bare OpenSSL loop.
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_checks.h"
#include "command.h"
#include "runner.h"

const char* layersec_crypto_baseline_kind(const std::string& primitive);

namespace layersec::app {
namespace {

struct Options {
  std::string json_path;
  bool smoke = false;
  double min_time = 0.2;
  std::string filter = ".*";
};

void run(const Options& o) {
  benchrun::RunOptions ro;
  ro.filter = "^crypto/(" + o.filter + ")/";
  ro.smoke = o.smoke;
  ro.min_time_s = o.min_time;
  ro.quiet = true;
  auto figures = benchrun::run_paired(ro);
  std::cout << "layersec bench crypto: ns per operation, ours beside the baseline measured in "
               "the same run (ratio = ours / baseline)\n";
  benchrun::print_table(figures, "ours_ns", "baseline_ns");
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& f : figures) {
    const std::string primitive = f.key.empty() ? "" : f.key[0];
    rows.push_back({{"primitive", primitive},
                    {"bytes", f.bytes},
                    {"ns_per_op", f.ns_per_op},
                    {"baseline_ns_per_op", f.baseline_ns_per_op},
                    {"ratio", f.ratio},
                    {"baseline", layersec_crypto_baseline_kind(primitive)}});
  }
  if (!o.json_path.empty()) benchrun::write_json(o.json_path, rows);
}

const CommandRegistration reg(50, [](CLI::App& root) {
  auto opts = std::make_shared<Options>();
  auto* cmd = bench_group(root).add_subcommand(
      "crypto", "MAC and AEAD wrappers beside bare context-reusing OpenSSL loops");
  cmd->add_option("--json", opts->json_path, "write rows {primitive, bytes, ns_per_op, "
                                              "baseline_ns_per_op, ratio} to FILE")
      ->check(kOutputFile);
  cmd->add_flag("--smoke", opts->smoke, "tiny run that only proves the benchmarks work");
  cmd->add_option("--min-time", opts->min_time, "seconds per benchmark (default 0.2)")
      ->check(finite_in(0.001, 3600));
  cmd->add_option("--filter", opts->filter, "regex over primitive names");
  cmd->callback([opts] { run(*opts); });
});

}  // namespace
}  // namespace layersec::app
