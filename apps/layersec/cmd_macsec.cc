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
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <nlohmann/json.hpp>

#include "cli_checks.h"
#include "command.h"
#include "layersec/net/pcap.h"
#include "layersec/base/hex.h"
#include "layersec/base/keyfile.h"
#include "layersec/crypto/kdf.h"
#include "layersec/macsec/link.h"
#include "layersec/macsec/link_config.h"
#include "layersec/macsec/secy.h"
#include "runner.h"

namespace layersec::app {
namespace {

using macsec::CipherSuite;

struct MacsecOptions {
  std::string suite = "GCM-AES-128";
  std::string key_file;
  std::string sci = "0211223344550001";
  int an = 0;
  std::uint64_t pn = 1;
  std::string ssci = "00000001";
  std::string salt = "000000000000000000000000";
  bool integrity = false;
  bool no_sci = false;
  bool es = false;
  int offset = 0;
  bool clear_tags = false;
  bool clear_tags_in_icv = false;
  std::string validate_frames = "strict";
  std::uint32_t window = 0;
  bool no_replay = false;
  std::vector<std::string> frames;
  std::string pcap_path;
  bool stats = false;
  bool stats_json = false;
};

std::vector<std::uint8_t> parse_hex(const std::string& what, const std::string& text,
                                    std::size_t size = 0) {
  auto v = from_hex(text);
  if (!v) throw std::runtime_error(what + ": not valid hex");
  if (size != 0 && v->size() != size)
    throw std::runtime_error(what + ": expected " + std::to_string(size) + " octets");
  return *v;
}

CipherSuite suite_of(const MacsecOptions& o) {
  auto s = macsec::cipher_suite_from_string(o.suite);
  if (!s) throw std::runtime_error("unknown cipher suite " + o.suite);
  return *s;
}

SecretBytes load_sak(const MacsecOptions& o, CipherSuite suite) {
  if (o.key_file.empty()) throw std::runtime_error("--key-file is required");
  KeyFileOptions ko;
  ko.expected_size = macsec::sak_size(suite);
  std::string detail;
  auto k = load_key_file(o.key_file, ko, &detail);
  if (!k) {
    // Names the file, the decoded length and the expected one; never a key byte.
    throw std::runtime_error("--key-file: " + key_file_message(o.key_file, k.error(), detail) +
                             (k.error() == KeyFileError::kWrongSize
                                  ? " (" + std::string(macsec::to_string(suite)) + " needs a " +
                                        std::to_string(macsec::sak_size(suite)) + "-octet SAK)"
                                  : std::string()));
  }
  return std::move(k).value();
}

using macsec::key_id;

// An SCI option: 16 hex digits whose port part is not 0.
macsec::Sci sci_option(const char* what, const std::string& text) {
  const macsec::Sci sci{load_be64(parse_hex(what, text, 8).data())};
  if (sci.port() == 0)
    throw std::runtime_error(std::string(what) + ": port identifier 0 (the last 4 hex digits) names no port");
  return sci;
}

// --pn against the suite's PN space (10.5.2: never beyond the last PN).
void check_pn(const MacsecOptions& o, CipherSuite suite) {
  if (o.pn > macsec::max_pn(suite)) {
    throw std::runtime_error("--pn: " + std::to_string(o.pn) + " is beyond the last PN of " +
                             std::string(macsec::to_string(suite)) + " (" + std::to_string(macsec::max_pn(suite)) +
                             ")");
  }
}

macsec::SecYConfig config_of(const MacsecOptions& o, CipherSuite suite) {
  macsec::SecYConfig c;
  c.suite = suite;
  c.sci = sci_option("--sci", o.sci);
  c.confidentiality = !o.integrity;
  if (o.offset != 0 && o.offset != 30 && o.offset != 50)
    throw std::runtime_error("--offset: must be 0, 30 or 50 (802.1AE-2018 10.7.24)");
  c.confidentiality_offset = static_cast<std::uint8_t>(o.offset);
  c.include_sci = !o.no_sci;
  c.use_es = o.es;
  c.vlan_mode = o.clear_tags ? macsec::VlanMode::kClearTag : macsec::VlanMode::kStandard;
  c.clear_tags_in_icv = o.clear_tags_in_icv;
  if (o.validate_frames == "strict") {
    c.validate_frames = macsec::ValidateFrames::kStrict;
  } else if (o.validate_frames == "check") {
    c.validate_frames = macsec::ValidateFrames::kCheck;
  } else if (o.validate_frames == "disabled") {
    c.validate_frames = macsec::ValidateFrames::kDisabled;
  } else {
    throw std::runtime_error("--validate must be strict, check or disabled");
  }
  c.replay_protect = !o.no_replay;
  c.replay_window = o.window;
  return c;
}

macsec::SaKeys sa_keys(const MacsecOptions& o, const SecretBytes& sak, std::vector<std::uint8_t>& salt_store) {
  macsec::SaKeys k;
  k.sak = sak.span();
  k.ssci = load_be32(parse_hex("--ssci", o.ssci, 4).data());
  salt_store = parse_hex("--salt", o.salt, macsec::kSaltSize);
  std::copy(salt_store.begin(), salt_store.end(), k.salt.begin());
  return k;
}

// An Ethernet capture (libpcap via net::PcapWriter); timestamps 1 s apart.
void write_pcap(const std::string& path, const std::vector<std::vector<std::uint8_t>>& frames) {
  std::string why;
  auto w = net::PcapWriter::open(path, net::PcapPrecision::kMicro, Duration::zero(), &why);
  if (!w) throw std::runtime_error("cannot write " + path + ": " + why);
  std::int64_t t = 1700000000;
  for (const auto& f : frames) w->record(TimePoint::from_ns(t++ * 1000000000), f);
  w->close();
}

void print_stats(const macsec::SecYStats& s) {
  s.for_each([](std::string_view name, std::uint64_t v) {
    if (v != 0) std::cerr << "  " << name << " " << v << "\n";
  });
}

// One JSON line on stderr: the SecY counters and the per-SC / per-SA tables.
void print_stats_json(const macsec::SecY& y) {
  nlohmann::json j = macsec::per_sc_json(y);
  j["secy"] = macsec::to_json(y.stats());
  std::cerr << j.dump() << "\n";
}

void run_protect(const MacsecOptions& o) {
  const CipherSuite suite = suite_of(o);
  check_pn(o, suite);
  const SecretBytes sak = load_sak(o, suite);
  std::cerr << "macsec protect: " << macsec::to_string(suite) << " key id " << key_id(sak)
            << " AN " << o.an << " first PN " << o.pn << "\n";
  macsec::SecY y(config_of(o, suite));
  std::vector<std::uint8_t> salt;
  auto st = y.install_tx_sa(static_cast<std::uint8_t>(o.an), sa_keys(o, sak, salt), o.pn);
  if (!st) throw std::runtime_error("install SA: " + std::string(macsec::to_string(st.error())));
  if (!y.set_encoding_sa(static_cast<std::uint8_t>(o.an)).ok())
    throw std::runtime_error("set encoding SA failed");
  std::vector<std::vector<std::uint8_t>> out_frames;
  for (const auto& text : o.frames) {
    const auto frame = parse_hex("--hex", text);
    std::vector<std::uint8_t> out(frame.size() + 64);
    auto n = y.protect(frame, out);
    if (!n) throw std::runtime_error("protect: " + std::string(macsec::to_string(n.error())));
    out.resize(*n);
    std::cout << to_hex(out) << "\n";
    out_frames.push_back(std::move(out));
  }
  if (!o.pcap_path.empty()) write_pcap(o.pcap_path, out_frames);
  if (o.stats) print_stats(y.stats());
  if (o.stats_json) print_stats_json(y);
}

void run_validate(const MacsecOptions& o) {
  const CipherSuite suite = suite_of(o);
  check_pn(o, suite);
  const SecretBytes sak = load_sak(o, suite);
  macsec::SecYConfig c = config_of(o, suite);
  const macsec::Sci peer = c.sci;
  // Our own transmit SCI is not used here; it only must not be the peer's.
  c.sci = macsec::Sci{peer.value == 0x0200000000000001ULL ? 0x0200000000000002ULL : 0x0200000000000001ULL};
  std::cerr << "macsec validate: " << macsec::to_string(suite) << " key id " << key_id(sak)
            << " AN " << o.an << " lowest PN " << o.pn << " validateFrames "
            << macsec::to_string(c.validate_frames) << "\n";
  macsec::SecY y(c);
  std::vector<std::uint8_t> salt;
  if (!y.add_rx_sc(peer).ok()) throw std::runtime_error("add receive SC failed");
  auto st = y.install_rx_sa(peer, static_cast<std::uint8_t>(o.an), sa_keys(o, sak, salt), o.pn);
  if (!st) throw std::runtime_error("install SA: " + std::string(macsec::to_string(st.error())));
  bool all_verified = true;
  for (const auto& text : o.frames) {
    auto frame = parse_hex("--hex", text);
    auto r = y.validate(frame);
    if (!r) {
      all_verified = false;
      std::cout << "dropped " << macsec::to_string(r.error());
      if (r.error() == macsec::ReceiveDrop::kBadTag)
        std::cout << " " << macsec::to_string(y.last_sectag_error());
      std::cout << "\n";
    } else if (r->verified()) {
      std::cout << "verified " << to_hex(r->frame) << " " << int(r->an) << " " << r->pn << "\n";
    } else {
      all_verified = false;
      std::cout << "delivered " << macsec::to_string(r->disposition) << " " << to_hex(r->frame)
                << "\n";
    }
  }
  if (o.stats) print_stats(y.stats());
  if (o.stats_json) print_stats_json(y);
  if (!all_verified) set_exit_code(2);
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
