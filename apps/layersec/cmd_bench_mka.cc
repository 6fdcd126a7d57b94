// `layersec bench mka`: MKA on the user-space MACsec link between two
// network namespaces (bench/mka_bench.h): bring-up time from link up to the
// first protected frame, datagrams lost across rekeys while a flow runs
// (beside the same flow without rekeys, measured in the same run), and the
// time to exclude a member that leaves. Root; the figures printed and, with
// --json, written as JSON.
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>

#include "runner.h"
#include "cli_checks.h"
#include "command.h"
#include "layersec/bench/mka_bench.h"

namespace layersec::app {
namespace {

struct Options {
  std::string json_path;
  bench::MkaBenchOptions bench;
};

void run(const Options& o) {
  const auto rep = bench::run_mka_bench(o.bench);
  bench::write_mka_bench_table(std::cout, rep);
  if (!o.json_path.empty()) benchrun::write_json(o.json_path, bench::mka_bench_json(rep));
  if (rep.rekey.lost != 0) set_exit_code(1);
}

const CommandRegistration reg(60, [](CLI::App& root) {
  auto o = std::make_shared<Options>();
  auto* cmd = bench_group(root).add_subcommand(
      "mka", "MKA on the MACsec link across namespaces: bring-up time, frames lost during rekeys, member exclusion");
  cmd->add_option("--json", o->json_path, "write {options, bringup, rekey, exclusion, method, notes} to FILE")
      ->check(kOutputFile);
  cmd->add_option("--cipher-suite", o->bench.cipher_suite, "gcm-aes-128 (default), gcm-aes-256, gcm-aes-xpn-128|256")
      ->check(CLI::IsMember({"gcm-aes-128", "gcm-aes-256", "gcm-aes-xpn-128", "gcm-aes-xpn-256"}));
  cmd->add_option("--rate", o->bench.rate, "UDP datagrams/s in the load phases (default 10000)")
      ->check(finite_in(10, 200000));
  cmd->add_option("--seconds", o->bench.seconds, "length of each load phase (default 4)")->check(finite_in(0.2, 600));
  cmd->add_option("--rekey-interval-ms", o->bench.rekey_interval_ms, "SAK lifetime in the rekey phase (default 1000)")
      ->check(whole_in(1000, 600000));
  cmd->add_option("--hello-ms", o->bench.hello_ms, "MKA Hello Time (default 2000)")->check(whole_in(100, 60000));
  cmd->add_option("--life-ms", o->bench.life_ms, "MKA Life Time (default 6000)")->check(whole_in(300, 600000));
  cmd->add_option("--program", o->bench.program, "the layersec binary to run the links (default: this one)");
  cmd->callback([o] {
    if (o->bench.life_ms <= o->bench.hello_ms) throw std::invalid_argument("--life-ms must exceed --hello-ms");
    run(*o);
  });
});

}  // namespace
}  // namespace layersec::app
