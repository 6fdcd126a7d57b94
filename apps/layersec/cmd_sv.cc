// `layersec sv pcap|decode` and `layersec bench sv`; the `sv` group that
// cmd_sv_net.cc adds publish, subscribe and kdc to. Options are parsed here;
// the work is in src/layersec/sv_io (docs/sv.md):
//
//   sv pcap    sv_io::write_capture: a merging unit's frames (any of the 8
//              profiles, any authentication scheme) as a classic pcap file
//              that Wireshark dissects as `sv`; the offline counterpart of
//              `sv publish`. A symlink at the path is refused, every write
//              and the final fsync/close are checked, and a failure names
//              the path and exits non-zero.
//   sv decode  sv_io::decode_capture: a pcap through the Subscriber (decode,
//              verify, supervise); per-frame results and the stream counters.
//   bench sv   sv_io::run_sv_bench: per profile x scheme, MAC time,
//              publisher per-frame processing (patch + MAC + hand-off to a
//              sink) p50/p99/max, subscriber verification, interarrival
//              budget and margin, RSS; the "none" scheme is the baseline
//              measured in the same run. --micro runs the Google Benchmark
//              micro-benchmarks (bench/sv_bench.cc) instead.
#include <cstdint>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_checks.h"
#include "command.h"
#include "layersec/sv/profiles.h"
#include "layersec/sv/publisher.h"
#include "layersec/sv/subscriber.h"
#include "layersec/sv_io/bench_report.h"
#include "layersec/sv_io/capture.h"
#include "layersec/sv_io/host.h"
#include "runner.h"
#include "sv_cli.h"

namespace layersec::app {
namespace {

using namespace layersec::sv;
using namespace layersec::app::svcli;

// --- sv pcap -------------------------------------------------------------------

// Most frames `sv pcap --frames` writes (96 kHz for 100 s; ~8 GB of 8-ASDU frames).
constexpr std::uint64_t kMaxPcapFrames = 10'000'000;

struct PcapOptions {
  std::string out;
  std::uint64_t frames = 100;
  StreamOptions stream;
};

void run_pcap(const PcapOptions& o) {
  const Profile p = need_profile(o.stream.profile);
  const StreamConfig c = stream_config(o.stream, p);
  const TimePoint start = TimePoint::from_ns(1'796'000'000'000'000'000);  // a fixed capture time
  std::unique_ptr<Publisher> pub;
  if (c.security.scheme == Scheme::kNone) {
    pub = std::make_unique<Publisher>(c, p, start);
  } else {
    KeyMaterial key = file_key(o.stream);
    // The capture's timestamps are fixed, its frame counters are not: a
    // second capture under the same key must not repeat the first's.
    key.initial_counter = sv_io::publisher_counter_base();
    pub = std::make_unique<Publisher>(c, p, start, std::move(key));
  }
  sv_io::write_capture(o.out, *pub, o.frames);
  std::cout << "wrote " << o.frames << " frames of profile " << p.name << " (" << p.sample_rate_hz << "/"
            << p.asdus_per_frame << ", " << pub->frame_template().size() << " bytes, auth "
            << scheme_name(c.security);
  if (c.security.scheme != Scheme::kNone) std::cout << ", key id " << o.stream.key_id;
  std::cout << ") to " << o.out << "\n";
}

// --- sv decode -----------------------------------------------------------------

struct DecodeOptions {
  std::string pcap;
  StreamOptions stream;
  bool json = false;
  bool accept_simulated = false;
  double timeout_ms = 0;  // 0: four interarrival times
};

void run_decode(const DecodeOptions& o) {
  const Profile p = need_profile(o.stream.profile);
  SubscriptionConfig s = subscription_config(o.stream, p, o.accept_simulated);
  s.timeout = o.timeout_ms > 0 ? Duration::microseconds(static_cast<std::int64_t>(o.timeout_ms * 1000))
                               : Duration::microseconds(static_cast<std::int64_t>(4 * p.interarrival_us()) + 1);
  Subscriber sub;
  std::optional<KeyMaterial> key;
  if (s.security.scheme != Scheme::kNone) {
    key = file_key(o.stream);
  }
  const auto id = sub.add_stream(s, std::move(key));
  std::cout << sv_io::decode_capture(o.pcap, sub, id, o.json ? &std::cout : nullptr).dump() << "\n";
}

// --- bench sv ------------------------------------------------------------------

struct BenchOptions {
  std::string json_path;
  bool smoke = false;
  bool micro = false;
  std::size_t frames = 0;  // 0: default (100,000; smoke 500)
  double pacing_s = 0.5;
};

void run_bench(const BenchOptions& o) {
  if (o.micro) {
    benchrun::RunOptions ro;
    ro.filter = "^sv/";
    ro.smoke = o.smoke;
    ro.quiet = true;
    auto figures = benchrun::run_paired(ro);
    std::cout << "layersec bench sv --micro: ns per frame, secured beside unsecured (baseline) in the same run\n";
    benchrun::print_table(figures, "secured_ns", "none_ns");
    return;
  }
  sv_io::SvBenchOptions bo;
  bo.smoke = o.smoke;
  bo.frames = o.frames;
  bo.pacing_s = o.pacing_s;
  const nlohmann::json doc = sv_io::run_sv_bench(bo);
  if (!o.json_path.empty()) benchrun::write_json(o.json_path, doc);
}

const CommandRegistration reg(40, [](CLI::App& root) {
  auto* sv = root.add_subcommand("sv", "IEC 61850-9-2 / 61869-9 Sampled Values tools");
  sv->require_subcommand(1);

  auto po = std::make_shared<PcapOptions>();
  auto* pcap = sv->add_subcommand("pcap", "write a publisher's frames to a classic pcap file (Wireshark: sv)");
  pcap->add_option("--out", po->out, "pcap file to write")->required();
  pcap->add_option("--frames", po->frames, "number of frames, 1.." + std::to_string(kMaxPcapFrames) + " (default 100)")
      ->check(whole_in(1, kMaxPcapFrames));
  add_stream_options(pcap, po->stream, StreamRole::kSender);
  pcap->callback([po] { run_pcap(*po); });

  auto dopt = std::make_shared<DecodeOptions>();
  auto* dec = sv->add_subcommand("decode", "run a pcap through the subscriber (decode, verify, supervise)");
  dec->add_option("--pcap", dopt->pcap, "pcap file")->required()->check(kRegularFile);
  add_stream_options(dec, dopt->stream, StreamRole::kReceiver);
  dec->add_flag("--json", dopt->json, "one JSON line per frame");
  dec->add_option("--timeout-ms", dopt->timeout_ms, "stream timeout in ms, up to an hour (default: four interarrival times)")
      ->check(finite_in(0, 3'600'000));
  dec->add_flag("--accept-simulated", dopt->accept_simulated, "deliver frames with the Simulate bit");
  dec->callback([dopt] { run_decode(*dopt); });

  auto bo = std::make_shared<BenchOptions>();
  auto* bench = bench_group(root).add_subcommand(
      "sv", "SV publisher/subscriber per profile x scheme, beside the unsecured baseline");
  bench->add_option("--json", bo->json_path, "write {rows:[{profile, scheme, mac_ns, interarrival_us, p50_us, "
                                             "p99_us, max_us, margin_p99, rss_kib, ...}], pacing:[...]} to FILE")
      ->check(kOutputFile);  // refused before the (long) run, written through base/file.h
  bench->add_flag("--smoke", bo->smoke, "tiny run that only proves the benchmark works");
  bench->add_flag("--micro", bo->micro, "run the Google Benchmark micro-benchmarks (sv/...) instead");
  bench->add_option("--frames", bo->frames, "frames per row, up to 10,000,000 (default 100000; smoke 500)")
      ->check(whole_in(0, 10'000'000));
  bench->add_option("--pacing-seconds", bo->pacing_s, "paced-sending run per profile, 0.001..60 s (default 0.5)")
      ->check(finite_in(0.001, 60));
  bench->callback([bo] { run_bench(*bo); });
});

}  // namespace
}  // namespace layersec::app
