// `layersec bench modeb`: Mode B group-key establishment for N = 1..64
// subscribers per KEM (bench/modeb_bench.cc), with the bare-KEM and the
// PSK-distribution baselines measured in the same rounds.
#include <algorithm>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli_checks.h"
#include "command.h"
#include "modeb_bench.h"
#include "runner.h"

namespace layersec::app {
namespace {

struct Options {
  std::string json_path;
  bool smoke = false;
  std::vector<std::string> schemes;
  std::vector<std::size_t> sizes;
  int max_rounds = 25;
  double seconds = 0.5;
  bool someip = false;
};

void run(const Options& o) {
  modebbench::Options mo;
  for (const auto& n : o.schemes) {
    auto s = kex::parse_scheme(n);
    if (!s) throw std::runtime_error("bench modeb: unknown scheme '" + n + "'");
    mo.schemes.push_back(*s);
  }
  mo.group_sizes = o.sizes;
  mo.smoke = o.smoke;
  if (o.max_rounds < 1) throw std::runtime_error("bench modeb: --rounds must be at least 1");
  mo.max_rounds = o.max_rounds;
  mo.min_rounds = std::min(mo.min_rounds, o.max_rounds);
  mo.seconds_per_case = o.seconds;
  mo.someip = o.someip;
  std::cout << "layersec bench modeb" << (o.smoke ? " (smoke: one round per case)" : "")
            << ": Mode B distribution of one group key to N subscribers, in process, medians over rounds\n";
  auto rows = modebbench::run(mo, std::cout);
  modebbench::print(rows, std::cout);
  if (!o.json_path.empty()) benchrun::write_json(o.json_path, rows);
}

const CommandRegistration reg(41, [](CLI::App& root) {
  auto opts = std::make_shared<Options>();
  auto* cmd = bench_group(root).add_subcommand(
      "modeb", "Mode B group-key establishment for N = 1..64 subscribers per KEM, beside bare-KEM and PSK baselines");
  cmd->add_option("--json", opts->json_path,
                  "write rows {scheme, n, publisher_cpu_us, subscriber_cpu_us, keyed_group_model_us, "
                  "baseline_kem_cpu_us, ratio_vs_kem, ...} to FILE")
      ->check(kOutputFile);
  cmd->add_flag("--smoke", opts->smoke, "one round per (KEM, N): proves the benchmark runs");
  cmd->add_option("--scheme", opts->schemes, "only these KEMs (repeatable; default seven)");
  cmd->add_option("--n", opts->sizes, "group sizes (repeatable; default 1 2 4 8 16 32 64)")->check(whole_in(1, 1024));
  cmd->add_option("--rounds", opts->max_rounds, "at most this many timed rounds per case (default 25)")
      ->check(whole_in(1, 100000));
  cmd->add_option("--seconds", opts->seconds, "time budget per case after 3 rounds (default 0.5)")
      ->check(finite_in(0, 3600));
  cmd->add_flag("--someip", opts->someip,
                "also key the group over the SOME/IP key-management service on the simulated segment (one run per case)");
  cmd->callback([opts] { run(*opts); });
});

}  // namespace
}  // namespace layersec::app
