// `layersec macsec protect|validate`: run frames through a SecY with a
// static SAK (like `ip macsec add ... key`), for interop tests with scapy and
// tshark; and `layersec bench macsec`: the SecY beside bare OpenSSL AES-GCM.
//
//   layersec macsec protect  --suite S --key-file F [options] --hex FRAME [--hex FRAME ...]
//   layersec macsec validate --suite S --key-file F --sci SCI [options] --hex FRAME [...]
//   (--stats prints the non-zero MIB counters, --stats-json the counters with
//   the per-SC and per-SA tables as one JSON line, both on stderr)
//
// The SAK is read from a key file (hex text, base/keyfile.h) that must not be accessible by
// group or others (mode 0600 or 0400; anything else is refused). Only a key
// id (first 4 octets of SHA-256 of the key) is ever printed.
//
// protect prints one line per frame: the secure frame in hex. With --pcap
// FILE the secure frames are also written as a classic pcap (Ethernet).
// validate prints one line per frame:
//   verified <hex of delivered frame> <an> <pn>
//   delivered <InPkts counter> <hex>        (not verified; validateFrames not Strict)
//   dropped <InPkts counter> [<SecTAG error>]
// and exits 0 only if every frame was verified.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <benchmark/benchmark.h>
#include <nlohmann/json.hpp>

#include "cli_checks.h"
#include "command.h"
#include "layersec/macsec/cipher_suite.h"
#include "layersec/macsec/frame_tool.h"
#include "layersec/macsec/static_sa_config.h"
#include "runner.h"

namespace layersec::app {
namespace {

using MacsecOptions = macsec::StaticSaOptions;

// The work is in macsec/frame_tool.h; a frame that did not verify ends the
// process with status 2.
void run_protect(const MacsecOptions& o) { macsec::protect_static_frames(o, std::cout, std::cerr); }

void run_validate(const MacsecOptions& o) {
  if (!macsec::validate_static_frames(o, std::cout, std::cerr)) set_exit_code(2);
}

void add_common(CLI::App* cmd, MacsecOptions& o) {
  cmd->add_option("--suite", o.suite, "GCM-AES-128 | GCM-AES-256 | GCM-AES-XPN-128 | GCM-AES-XPN-256")
      ->check(CLI::Validator(
          [](std::string& s) -> std::string {
            if (macsec::cipher_suite_from_string(s)) return {};
            return "'" + s + "' is not a cipher suite (GCM-AES-128, GCM-AES-256, GCM-AES-XPN-128, GCM-AES-XPN-256)";
          },
          "SUITE"));
  cmd->add_option("--key-file", o.key_file, "SAK file (hex), mode 0600 or 0400")->required()->check(kRegularFile);
  cmd->add_option("--an", o.an, "association number 0..3")->check(whole_in(0, 3));
  cmd->add_option("--ssci", o.ssci, "XPN: SSCI of the transmitter (8 hex digits)");
  cmd->add_option("--salt", o.salt, "XPN: 12-octet salt (24 hex digits)");
  cmd->add_flag("--integrity", o.integrity, "integrity only (E=0, C=0)");
  cmd->add_option("--offset", o.offset, "confidentiality offset 0, 30 or 50")->check(whole_in(0, 50));
  cmd->add_flag("--clear-tags", o.clear_tags, "clear-tag VLAN mode (tags before the SecTAG)");
  cmd->add_flag("--clear-tags-in-icv", o.clear_tags_in_icv, "clear tags covered by the ICV");
  cmd->add_option("--hex", o.frames, "frame in hex (repeatable)")->required();
  cmd->add_flag("--stats", o.stats, "print the non-zero MIB counters to stderr");
  cmd->add_flag("--stats-json", o.stats_json,
                "print the MIB counters with the per-SC and per-SA tables as one JSON line to stderr");
}

// ---- bench ------------------------------------------------------------------
//
// The macsec benchmarks report the CPU time of batches of frames through
// Google Benchmark's manual time (bench/macsec_bench.cc explains why), with a
// "frames_per_iteration" counter; manual time appends
// "/manual_time" to their names; benchrun::run_paired() does not strip that
// suffix, so the figures are collected here with the same pairing rule:
// "macsec/<suite>/<op>/<ours|baseline>/<bytes>".

struct BenchOptions {
  std::string json_path;
  bool smoke = false;
  double min_time = 0.2;
};

class MacsecCollector : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const auto& r : runs) {
      if (r.error_occurred || r.run_type != Run::RT_Iteration) continue;
      const double scale = r.time_unit == benchmark::kNanosecond    ? 1.0
                           : r.time_unit == benchmark::kMicrosecond ? 1e3
                           : r.time_unit == benchmark::kMillisecond ? 1e6
                                                                    : 1e9;
      // One iteration processes frames_per_iteration frames (CPU-timed batch).
      double frames = 1;
      if (auto it = r.counters.find("frames_per_iteration"); it != r.counters.end() && it->second > 0)
        frames = it->second;
      collected.emplace_back(r.benchmark_name(), r.GetAdjustedRealTime() * scale / frames);
    }
  }
  std::vector<std::pair<std::string, double>> collected;
};

struct MacsecFigure {
  std::string suite;
  std::string op;
  std::size_t bytes = 0;
  double ours_ns = 0;
  double baseline_ns = 0;
};

std::vector<MacsecFigure> run_macsec_benchmarks(const BenchOptions& o) {
  std::string filter = "--benchmark_filter=^macsec/";
  std::string min_time = "--benchmark_min_time=" + std::to_string(o.smoke ? 0.001 : o.min_time);
  std::string argv0 = "layersec";
  char* argv[] = {argv0.data(), filter.data(), min_time.data(), nullptr};
  int argc = 3;
  benchmark::Initialize(&argc, argv);
  MacsecCollector collector;
  if (benchmark::RunSpecifiedBenchmarks(&collector) == 0)
    throw std::runtime_error("no macsec benchmark registered");
  std::vector<MacsecFigure> figures;
  for (const auto& [name, ns] : collector.collected) {
    std::vector<std::string> parts;
    std::size_t start = 0;
    while (start <= name.size()) {
      const std::size_t slash = name.find('/', start);
      parts.push_back(name.substr(start, slash == std::string::npos ? std::string::npos : slash - start));
      if (slash == std::string::npos) break;
      start = slash + 1;
    }
    while (!parts.empty() && (parts.back() == "manual_time" || parts.back() == "real_time" ||
                              parts.back().find(':') != std::string::npos))
      parts.pop_back();
    if (parts.size() != 5 || parts[0] != "macsec") continue;
    const std::size_t bytes = std::stoul(parts[4]);
    auto it = std::find_if(figures.begin(), figures.end(), [&](const MacsecFigure& f) {
      return f.suite == parts[1] && f.op == parts[2] && f.bytes == bytes;
    });
    if (it == figures.end()) {
      figures.push_back(MacsecFigure{parts[1], parts[2], bytes, 0, 0});
      it = figures.end() - 1;
    }
    (parts[3] == "baseline" ? it->baseline_ns : it->ours_ns) = ns;
  }
  return figures;
}

void run_bench(const BenchOptions& o) {
  const auto figures = run_macsec_benchmarks(o);
  std::printf("layersec bench macsec: CPU ns per frame, SecY beside bare context-reusing OpenSSL "
              "AES-GCM in the same run (ratio = ours / bare; goal <= 1.25 at 1500 octets)\n");
  std::printf("%-16s %-9s %6s %12s %9s %14s %7s\n", "suite", "op", "bytes", "ns_per_frame",
              "gbit_s", "baseline_ns", "ratio");
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& f : figures) {
    if (f.ours_ns <= 0 || f.baseline_ns <= 0) continue;
    const double gbit = static_cast<double>(f.bytes) * 8.0 / f.ours_ns;
    const double ratio = f.ours_ns / f.baseline_ns;
    std::printf("%-16s %-9s %6zu %12.1f %9.3f %14.1f %7.3f\n", f.suite.c_str(), f.op.c_str(),
                f.bytes, f.ours_ns, gbit, f.baseline_ns, ratio);
    rows.push_back({{"suite", f.suite},
                    {"op", f.op},
                    {"bytes", f.bytes},
                    {"ns_per_frame", f.ours_ns},
                    {"gbit_s", gbit},
                    {"baseline_ns_per_frame", f.baseline_ns},
                    {"ratio", ratio}});
  }
  if (!o.json_path.empty()) benchrun::write_json(o.json_path, rows);
}

const CommandRegistration reg(40, [](CLI::App& root) {
  // The `macsec` group may already exist (link commands register into it too).
  CLI::App* group = nullptr;
  try {
    group = root.get_subcommand("macsec");
  } catch (const CLI::OptionNotFound&) {
    group = root.add_subcommand("macsec", "IEEE 802.1AE MACsec SecY helpers (static SAKs)");
    group->require_subcommand(1);
  }

  auto po = std::make_shared<MacsecOptions>();
  auto* protect = group->add_subcommand("protect", "protect frames with one transmit SA");
  add_common(protect, *po);
  protect->add_option("--sci", po->sci, "our SCI (16 hex digits)");
  protect->add_option("--pn", po->pn, "PN of the first frame (64-bit for XPN)")
      ->check(whole_in(1, UINT64_MAX));
  protect->add_flag("--no-sci", po->no_sci, "omit the SCI from the SecTAG (SC=0)");
  protect->add_flag("--es", po->es, "set ES when the SCI is omitted (SCI = SA || 0001)");
  protect->add_option("--pcap", po->pcap_path, "also write the secure frames to a pcap file");
  protect->callback([po] { run_protect(*po); });

  auto vo = std::make_shared<MacsecOptions>();
  auto* validate = group->add_subcommand("validate", "validate frames with one receive SA");
  add_common(validate, *vo);
  validate->add_option("--sci", vo->sci, "SCI of the transmitter (16 hex digits)")->required();
  validate->add_option("--pn", vo->pn, "lowest acceptable PN of the receive SA")->check(whole_in(1, UINT64_MAX));
  validate->add_option("--validate", vo->validate_frames, "strict | check | disabled")
      ->check(CLI::IsMember({"strict", "check", "disabled"}));
  validate->add_option("--window", vo->window, "replayWindow")->check(whole_in(0, UINT32_MAX));
  validate->add_flag("--no-replay", vo->no_replay, "replayProtect off");
  validate->callback([vo] { run_validate(*vo); });

  auto bo = std::make_shared<BenchOptions>();
  auto* bench = bench_group(root).add_subcommand(
      "macsec", "SecY protect/validate beside bare context-reusing OpenSSL AES-GCM");
  bench->add_option("--json", bo->json_path,
                    "write rows {suite, op, bytes, ns_per_frame, gbit_s, baseline_ns_per_frame, "
                    "ratio} to FILE")
      ->check(kOutputFile);
  bench->add_flag("--smoke", bo->smoke, "tiny run that only proves the benchmarks work");
  bench->add_option("--min-time", bo->min_time, "seconds per benchmark (default 0.2; 0.001..60)")
      ->check(finite_in(0.001, 60));
  bench->callback([bo] { run_bench(*bo); });
});

}  // namespace
}  // namespace layersec::app
