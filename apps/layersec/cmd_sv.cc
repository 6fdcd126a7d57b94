// `layersec sv pcap|decode` and `layersec bench sv`; the `sv` group that
// cmd_sv_net.cc adds publish, subscribe and kdc to.
//
//   sv pcap    writes a merging unit's frames (any of the 8 profiles, any
//              authentication scheme) to a classic pcap file that Wireshark
//              dissects as `sv`; the offline counterpart of `sv publish`.
//              Written through base/file.h's OutputFile: a symlink at the
//              path is refused, every write and the final fsync/close are
//              checked, and a failure names the path and exits non-zero.
//   sv decode  reads a pcap through the Subscriber (decode, verify, supervise)
//              and prints per-frame results and the stream counters.
//   bench sv   per profile x scheme: MAC time, publisher per-frame processing
//              (patch + MAC + hand-off to a sink) p50/p99/max, subscriber
//              verification, interarrival budget and margin, RSS; the "none"
//              scheme is the baseline measured in the same run.
//
// Captures are read with the net module's libpcap wrapper.
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "command.h"
#include "cli_checks.h"
#include "layersec/base/file.h"
#include "layersec/base/hex.h"
#include "layersec/base/keyfile.h"
#include "layersec/base/secret.h"
#include "layersec/crypto/kdf.h"
#include "layersec/net/io.h"
#include "layersec/net/pcap.h"
#include "layersec/sv/kdc.h"
#include "layersec/sv/profiles.h"
#include "layersec/sv/publisher.h"
#include "layersec/sv/subscriber.h"
#include "runner.h"
#include "sv_cli.h"

namespace layersec::app {
namespace {

using namespace layersec::sv;
using namespace layersec::app::svcli;

// --- pcap (net::PcapWriter / net::PcapReader, over libpcap) -------------------

// Every record of an Ethernet capture (times in ns since the Unix epoch).
std::vector<net::PcapRecord> read_pcap(const std::string& path) {
  std::string why;
  auto reader = net::PcapReader::open(path, &why);
  if (!reader) throw std::runtime_error("cannot read " + path + ": " + why);
  return reader->read_all();
}

// --- sv pcap -------------------------------------------------------------------

// Most frames `sv pcap --frames` writes (96 kHz for 100 s; ~8 GB of 8-ASDU frames).
constexpr std::uint64_t kMaxPcapFrames = 10'000'000;

struct PcapOptions {
  std::string out;
  std::uint64_t frames = 100;
  StreamOptions stream;
};

// Classic pcap (microsecond timestamps, LINKTYPE_ETHERNET): the 24-byte
// global header, then a 16-byte record header per frame, all little-endian
// (readers learn the byte order from the magic), whatever the host.
void put_le32(std::uint8_t* p, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

void write_pcap_header(OutputFile& out) {
  std::array<std::uint8_t, 24> h{};
  put_le32(h.data(), 0xA1B2C3D4);   // magic, microsecond timestamps
  h[4] = 2;                         // version 2.4
  h[6] = 4;
  put_le32(h.data() + 16, 65535);   // snaplen
  put_le32(h.data() + 20, 1);       // LINKTYPE_ETHERNET
  out.write(ByteSpan(h));
}

void write_pcap_record(OutputFile& out, TimePoint t, ByteSpan frame) {
  std::array<std::uint8_t, 16> h{};
  const std::int64_t ns = std::max<std::int64_t>(t.ns(), 0);
  put_le32(h.data(), static_cast<std::uint32_t>(ns / 1'000'000'000));
  put_le32(h.data() + 4, static_cast<std::uint32_t>((ns % 1'000'000'000) / 1000));
  put_le32(h.data() + 8, static_cast<std::uint32_t>(frame.size()));
  put_le32(h.data() + 12, static_cast<std::uint32_t>(frame.size()));
  out.write(ByteSpan(h));
  out.write(frame);
}

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
    key.initial_counter = publisher_counter_base();
    pub = std::make_unique<Publisher>(c, p, start, std::move(key));
  }
  OutputFile out(o.out);  // FileError names the path (symlink, not regular, write or close failure)
  write_pcap_header(out);
  std::vector<Sample> samples(p.asdus_per_frame * 8);
  for (std::uint64_t k = 0; k < o.frames; ++k) {
    fill_samples(samples, p.asdus_per_frame, k * p.asdus_per_frame, p.sample_rate_hz);
    const TimePoint t = pub->next_deadline();
    auto f = pub->build_next(samples);
    if (!f) throw std::runtime_error("publisher failed: " + std::string(to_string(pub->last_security_error())));
    write_pcap_record(out, t, *f);
  }
  out.close();
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
  std::size_t n = 0;
  for (const auto& r : read_pcap(o.pcap)) {
    ++n;
    const TimePoint now = r.time;
    sub.poll(now);
    auto d = sub.on_frame(r.frame, now);
    if (o.json) {
      nlohmann::json line{{"frame", n}};
      if (d) {
        line["delivered"] = true;
        line["svID"] = std::string(d->frame->asdus[0].sv_id_string());
        std::vector<std::uint16_t> cnts;
        for (std::size_t i = 0; i < d->frame->no_asdu; ++i) cnts.push_back(d->frame->asdus[i].smp_cnt);
        line["smpCnt"] = cnts;
        line["missing"] = d->missing_samples;
      } else {
        line["delivered"] = false;
        line["reason"] = std::string(to_string(d.error()));
      }
      std::cout << line.dump() << "\n";
    } else {
      d.ignore();
    }
  }
  nlohmann::json counters = counters_json(sub.counters(id));
  counters["frames"] = n;
  counters["malformed"] = sub.malformed_total();
  counters["unknown_appid"] = sub.unknown_appid();
  std::cout << nlohmann::json{{"counters", counters}}.dump() << "\n";
}

// --- bench sv ------------------------------------------------------------------

struct BenchOptions {
  std::string json_path;
  bool smoke = false;
  bool micro = false;
  std::size_t frames = 0;  // 0: default (100,000; smoke 500)
  double pacing_s = 0.5;
};

// A sink standing in for the NIC's TX ring: the frame is copied into the
// next slot, as an AF_PACKET TX_RING or a sendto() would copy it.
class RingSink {
 public:
  RingSink() : slots_(kSlots * kSlotBytes) {}
  ByteSpan put(ByteSpan frame) {
    std::uint8_t* slot = slots_.data() + (next_++ % kSlots) * kSlotBytes;
    std::memcpy(slot, frame.data(), std::min(frame.size(), kSlotBytes));
    return ByteSpan(slot, frame.size());
  }

 private:
  static constexpr std::size_t kSlots = 64;
  static constexpr std::size_t kSlotBytes = 2048;
  std::vector<std::uint8_t> slots_;
  std::size_t next_ = 0;
};

const char* const kBenchSchemes[] = {"none", "hmac-sha256", "aes-gmac-128", "blake2s", "chaskey12-full",
                                     "chaskey12-selective"};

nlohmann::json bench_row(const Profile& p, const std::string& scheme, std::size_t frames, std::size_t mac_iters) {
  StreamConfig c;
  c.sv_id = "TESTMU0101";
  c.asdus_per_frame = p.asdus_per_frame;
  c.security = need_scheme(scheme);
  c.security.sender_id = c.appid;
  SubscriptionConfig sc;
  sc.sv_id = c.sv_id;
  sc.asdus_per_frame = p.asdus_per_frame;
  sc.smp_cnt_wrap = p.smp_cnt_wrap();
  sc.security = c.security;
  sc.timeout = Duration::seconds(3600);

  std::unique_ptr<Publisher> pub;
  Subscriber sub;
  std::unique_ptr<MacEngine> mac_engine;
  if (c.security.scheme == Scheme::kNone) {
    pub = std::make_unique<Publisher>(c, p, TimePoint{});
    sub.add_stream(sc);
  } else {
    SecretBytes key = crypto::random_key(key_bytes_for(c.security.scheme));
    auto e = MacEngine::create(c.security, key.span());
    if (!e) throw std::runtime_error("MAC engine: " + std::string(to_string(e.error())));
    mac_engine = std::move(e).value();
    pub = std::make_unique<Publisher>(c, p, TimePoint{}, key_material(key.clone(), 1));
    sub.add_stream(sc, key_material(std::move(key), 1));
  }

  std::vector<Sample> samples(p.asdus_per_frame * 8);
  fill_samples(samples, p.asdus_per_frame, 0, p.sample_rate_hz);
  RingSink sink;
  // Warm-up (caches, branch predictors, lazy OpenSSL init).
  for (int i = 0; i < 200; ++i) {
    auto f = pub->build_next(samples);
    if (!f) throw std::runtime_error("publisher failed in warm-up");
    auto d = sub.on_frame(sink.put(*f), TimePoint{});
    if (!d) throw std::runtime_error("subscriber dropped a warm-up frame: " + std::string(to_string(d.error())));
  }

  // 1. MAC alone over this profile's frame: mean of mac_iters calls, as
  // thread CPU time (robust against preemption) and as wall time.
  double mac_ns = 0;
  double mac_wall_ns = 0;
  std::size_t mac_input = 0;
  if (mac_engine) {
    std::vector<std::uint8_t> frame(pub->frame_template().bytes().begin(), pub->frame_template().bytes().end());
    const auto& r = pub->frame_template().regions();
    const auto l = extension_layout(c.security);
    mac_input = mac_engine->mac_input_size(r, l);
    std::array<std::uint8_t, 32> tag{};
    const auto c0 = thread_cpu_ns();
    const auto t0 = mono_ns();
    for (std::size_t i = 0; i < mac_iters; ++i) {
      frame[r.smp_cnt_offset[0] + 1] = static_cast<std::uint8_t>(i);  // defeat any caching
      auto st = mac_engine->compute_frame(frame, r, l, MutableByteSpan(tag.data(), l.tag_len));
      if (!st) throw std::runtime_error("MAC failed");
    }
    mac_wall_ns = static_cast<double>(mono_ns() - t0) / static_cast<double>(mac_iters);
    mac_ns = static_cast<double>(thread_cpu_ns() - c0) / static_cast<double>(mac_iters);
  }

  // 2. Publisher per frame (patch + MAC + hand-off) and 3. subscriber verify.
  std::vector<std::int64_t> pub_ns(frames), sub_ns(frames);
  std::size_t delivered = 0;
  for (std::size_t k = 0; k < frames; ++k) {
    samples[0].value = static_cast<std::int32_t>(k);  // new values every frame
    const auto t0 = mono_ns();
    auto f = pub->build_next(samples);
    ByteSpan sent;
    if (f) sent = sink.put(*f);
    const auto t1 = mono_ns();
    if (!f) throw std::runtime_error("publisher failed");
    auto d = sub.on_frame(sent, TimePoint{});
    const auto t2 = mono_ns();
    if (d) ++delivered;
    pub_ns[k] = t1 - t0;
    sub_ns[k] = t2 - t1;
  }
  if (delivered != frames) throw std::runtime_error("subscriber dropped frames during the benchmark");
  const auto pp = percentiles(pub_ns);
  const auto sp = percentiles(sub_ns);
  const double ia = p.interarrival_us();
  return nlohmann::json{{"profile", std::string(p.name)},
                        {"rate", std::to_string(p.sample_rate_hz) + "/" + std::to_string(p.asdus_per_frame)},
                        {"scheme", scheme},
                        {"frame_bytes", pub->frame_template().size()},
                        {"mac_input_bytes", mac_input},
                        {"mac_ns", mac_ns},
                        {"mac_wall_ns", mac_wall_ns},
                        {"mac_iterations", mac_engine ? mac_iters : 0},
                        {"interarrival_us", ia},
                        {"frames", frames},
                        {"p50_us", pp.p50},
                        {"p99_us", pp.p99},
                        {"max_us", pp.max},
                        {"mean_us", pp.mean},
                        {"margin_p99", ia / pp.p99},
                        {"within_budget_p99", pp.p99 < ia},
                        {"sub_p50_us", sp.p50},
                        {"sub_p99_us", sp.p99},
                        {"sub_max_us", sp.max},
                        {"sub_margin_p99", ia / sp.p99},
                        {"rss_kib", rss_kib()}};
}

// Paced sending on absolute deadlines: sleep with clock_nanosleep(TIMER_ABSTIME)
// until shortly before each frame's deadline (timer slack set to 1 ns), spin
// the rest, build and hand off; lateness = start of processing - deadline.
// When the loop falls behind, Publisher::skip_to() skips the frames whose
// deadlines already passed (counted), keeping smpCnt aligned with time.
constexpr std::int64_t kSpinNs = 60'000;  // wake-up latency budget before a deadline

nlohmann::json pacing_row(const Profile& p, double seconds) {
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  StreamConfig c;
  c.sv_id = "TESTMU0101";
  c.asdus_per_frame = p.asdus_per_frame;
  c.security = need_scheme("chaskey12-selective");
  SecretBytes key = crypto::random_key(16);
  const TimePoint start = TimePoint::from_ns(mono_ns() + 1'000'000);
  Publisher pub(c, p, start, key_material(std::move(key), 1));
  std::vector<Sample> samples(p.asdus_per_frame * 8);
  fill_samples(samples, p.asdus_per_frame, 0, p.sample_rate_hz);
  RingSink sink;
  const auto frames = static_cast<std::size_t>(seconds * p.frames_per_second());
  std::vector<std::int64_t> late;
  late.reserve(frames);
  std::size_t sent = 0;
  while (pub.frame_index() < frames) {
    const TimePoint dl = pub.next_deadline();
    const std::int64_t wake = dl.ns() - kSpinNs;
    if (mono_ns() < wake) {
      timespec ts{static_cast<time_t>(wake / 1'000'000'000), static_cast<long>(wake % 1'000'000'000)};
      while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) != 0) {
      }
    }
    std::int64_t now = mono_ns();
    while (now < dl.ns()) now = mono_ns();
    late.push_back(now - dl.ns());
    auto f = pub.build_next(samples);
    if (!f) throw std::runtime_error("publisher failed while pacing");
    sink.put(*f);
    ++sent;
    pub.skip_to(TimePoint::from_ns(mono_ns()));
  }
  const auto lp = percentiles(late);
  return nlohmann::json{{"profile", std::string(p.name)},
                        {"scheme", "chaskey12-selective"},
                        {"interarrival_us", p.interarrival_us()},
                        {"frames_due", frames},
                        {"frames_sent", sent},
                        {"frames_skipped", pub.counters().skipped_frames},
                        {"lateness_p50_us", lp.p50},
                        {"lateness_p99_us", lp.p99},
                        {"lateness_max_us", lp.max},
                        {"method", "clock_nanosleep(TIMER_ABSTIME) to deadline-60us, then spin; timer slack 1 ns"}};
}

// KDC handshake and distribution times per ML-KEM set (the issue's "ML-KEM
// KDC handshake times"): wall time (CLOCK_MONOTONIC) of each step, in-process,
// over `iterations` fresh handshakes of one IED.
nlohmann::json kdc_row(kex::KemScheme kem, std::size_t iterations) {
  using namespace layersec::sv::kdc;
  KdcConfig cfg;
  cfg.kem = kem;
  auto kdc = Kdc::create(cfg);
  if (!kdc) throw std::runtime_error("KDC: " + std::string(to_string(kdc.error())));
  auto a = (*kdc)->register_ied("MU01");
  auto b = (*kdc)->register_ied("P101");
  if (!a || !b) throw std::runtime_error("KDC registration failed");
  const std::vector<std::uint8_t> ek((*kdc)->public_key().begin(), (*kdc)->public_key().end());
  auto ied = IedClient::create("MU01", kem, std::move(a).value(), ek);
  if (!ied) throw std::runtime_error("IED: " + std::string(to_string(ied.error())));
  StreamGroupConfig g;
  g.security = need_scheme("chaskey12-selective");
  g.publisher = "P101";  // MU01 joins below, so handshakes time authentication alone
  auto stream = (*kdc)->add_stream(g, TimePoint::from_ns(clock_ns(CLOCK_REALTIME)));
  if (!stream) throw std::runtime_error("KDC stream: " + std::string(to_string(stream.error())));
  std::vector<std::int64_t> req_ns, verify_ns, confirm_ns, seal_ns, open_ns, total_ns;
  std::size_t req_bytes = 0, res_bytes = 0, dist_bytes = 0;
  std::int64_t t = clock_ns(CLOCK_REALTIME);
  bool joined = false;
  for (std::size_t i = 0; i < iterations; ++i) {
    const TimePoint now = TimePoint::from_ns(t += 1'000'000);
    const auto t0 = mono_ns();
    auto req = (*ied)->start(now);
    const auto t1 = mono_ns();
    if (!req) throw std::runtime_error("IED request failed");
    auto res = (*kdc)->on_auth_request(*req, now);
    const auto t2 = mono_ns();
    if (!res) throw std::runtime_error("KDC refused a request: " + std::string(to_string(res.error())));
    auto ok = (*ied)->on_auth_response(res->response, now);
    const auto t3 = mono_ns();
    if (!ok) throw std::runtime_error("IED refused the confirmation");
    if (!joined) {  // join after the first handshake; later handshakes also deliver the key
      auto j = (*kdc)->add_member(*stream, "MU01", Role::kSubscriber, now);
      if (!j) throw std::runtime_error("KDC join failed");
      joined = true;
      continue;
    }
    for (const auto& d : res->distributions) {
      auto u = (*ied)->on_key_distribution(d.message, now);
      if (!u) throw std::runtime_error("IED refused a distribution: " + std::string(to_string(u.error())));
    }
    // One rekey sealed for the two members, opened by this IED.
    const auto t4 = mono_ns();
    auto out = (*kdc)->rekey(*stream, now);
    const auto t5 = mono_ns();
    if (!out) throw std::runtime_error("KDC rekey failed");
    std::int64_t open = 0;
    for (const auto& d : *out) {
      if (d.recipient != "MU01") continue;
      dist_bytes = d.message.size();
      const auto o0 = mono_ns();
      auto u = (*ied)->on_key_distribution(d.message, now);
      open = mono_ns() - o0;
      if (!u) throw std::runtime_error("IED refused a rekey: " + std::string(to_string(u.error())));
    }
    req_bytes = req->size();
    res_bytes = res->response.size();
    req_ns.push_back(t1 - t0);
    verify_ns.push_back(t2 - t1);
    confirm_ns.push_back(t3 - t2);
    total_ns.push_back(t3 - t0);
    seal_ns.push_back((t5 - t4) / static_cast<std::int64_t>(std::max<std::size_t>(out->size(), 1)));
    open_ns.push_back(open);
  }
  return nlohmann::json{{"kem", std::string(kex::scheme_name(kem))},
                        {"iterations", total_ns.size()},
                        {"handshake_us", stats_json(total_ns)},
                        {"ied_request_us", stats_json(req_ns)},
                        {"kdc_verify_us", stats_json(verify_ns)},
                        {"ied_confirm_us", stats_json(confirm_ns)},
                        {"distribution_seal_us_per_member", stats_json(seal_ns)},
                        {"distribution_open_us", stats_json(open_ns)},
                        {"request_bytes", req_bytes},
                        {"response_bytes", res_bytes},
                        {"distribution_bytes", dist_bytes}};
}

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
  const std::size_t frames = o.frames ? o.frames : (o.smoke ? 500 : 100'000);
  const std::size_t mac_iters = o.smoke ? 1'000 : 100'000;
  nlohmann::json rows = nlohmann::json::array();
  const std::string load_before = loadavg();
  std::printf("layersec bench sv: %zu frames per row, MAC mean of %zu (thread CPU time); publisher = patch + MAC + "
              "copy to a TX slot; load average %s\n",
              frames, mac_iters, load_before.c_str());
  std::printf("%-20s %-20s %6s %9s %9s %8s %8s %8s %9s %8s %8s %7s\n", "profile", "scheme", "bytes", "mac_ns",
              "ia_us", "p50_us", "p99_us", "max_us", "margin", "sub_p99", "x_none", "rss");
  for (const auto& p : paper_profiles()) {
    double none_p99 = 0;
    for (const char* s : kBenchSchemes) {
      auto row = bench_row(p, s, frames, mac_iters);
      if (std::string(s) == "none") none_p99 = row["p99_us"].get<double>();
      row["p99_vs_none"] = none_p99 > 0 ? row["p99_us"].get<double>() / none_p99 : 0.0;
      std::printf("%-20s %-20s %6zu %9.1f %9.3f %8.3f %8.3f %8.2f %9.1f %8.3f %8.2f %7ld\n",
                  row["profile"].get<std::string>().c_str(), s, row["frame_bytes"].get<std::size_t>(),
                  row["mac_ns"].get<double>(), row["interarrival_us"].get<double>(), row["p50_us"].get<double>(),
                  row["p99_us"].get<double>(), row["max_us"].get<double>(), row["margin_p99"].get<double>(),
                  row["sub_p99_us"].get<double>(), row["p99_vs_none"].get<double>(), row["rss_kib"].get<long>());
      rows.push_back(std::move(row));
    }
  }
  nlohmann::json pacing = nlohmann::json::array();
  const double pace_s = o.smoke ? 0.01 : o.pacing_s;
  std::printf("\npaced sending on absolute deadlines (clock_nanosleep TIMER_ABSTIME to 60 us before, then spin; "
              "%.2f s per profile, chaskey12-selective; lateness = processing start - deadline):\n%-20s %9s %8s %8s %8s %10s %10s %10s\n",
              pace_s, "profile", "ia_us", "due", "sent", "skipped", "late_p50", "late_p99", "late_max");
  for (const auto& p : paper_profiles()) {
    auto row = pacing_row(p, pace_s);
    std::printf("%-20s %9.3f %8zu %8zu %8llu %10.2f %10.2f %10.2f\n", row["profile"].get<std::string>().c_str(),
                row["interarrival_us"].get<double>(), row["frames_due"].get<std::size_t>(),
                row["frames_sent"].get<std::size_t>(),
                static_cast<unsigned long long>(row["frames_skipped"].get<std::uint64_t>()),
                row["lateness_p50_us"].get<double>(), row["lateness_p99_us"].get<double>(),
                row["lateness_max_us"].get<double>());
    pacing.push_back(std::move(row));
  }
  nlohmann::json kdc_rows = nlohmann::json::array();
  const std::size_t kdc_iters = o.smoke ? 5 : 200;
  std::printf("\nKDC (ML-KEM), %zu handshakes per set, wall time in us (mean / p99): request = IED encaps + "
              "tag, verify = KDC decaps + checks + confirm + sealing the IED's current group key, confirm = IED check; seal/open = one group-key "
              "distribution:\n%-12s %18s %16s %16s %16s %16s %16s %7s %7s %7s\n",
              kdc_iters, "kem", "handshake", "request", "verify", "confirm", "seal", "open", "req_B", "res_B",
              "dist_B");
  for (auto kem : {kex::KemScheme::kMlKem512, kex::KemScheme::kMlKem768, kex::KemScheme::kMlKem1024}) {
    auto row = kdc_row(kem, kdc_iters + 1);
    auto ms = [&](const char* k) {
      char b[40];
      std::snprintf(b, sizeof b, "%.1f / %.1f", row[k]["mean"].get<double>(), row[k]["p99"].get<double>());
      return std::string(b);
    };
    std::printf("%-12s %18s %16s %16s %16s %16s %16s %7zu %7zu %7zu\n", row["kem"].get<std::string>().c_str(),
                ms("handshake_us").c_str(), ms("ied_request_us").c_str(), ms("kdc_verify_us").c_str(),
                ms("ied_confirm_us").c_str(), ms("distribution_seal_us_per_member").c_str(),
                ms("distribution_open_us").c_str(), row["request_bytes"].get<std::size_t>(),
                row["response_bytes"].get<std::size_t>(), row["distribution_bytes"].get<std::size_t>());
    kdc_rows.push_back(std::move(row));
  }
  std::printf("\nReference (the paper's figures, Raspberry Pi, not measured here): publisher 71.93 us/frame "
              "for 1-ASDU profiles, failing the 96 kHz profile's 10.4 us interarrival.\n");
  if (!o.json_path.empty()) {
    nlohmann::json doc{{"rows", rows},
                       {"loadavg_before", load_before},
                       {"loadavg_after", loadavg()},
                       {"frames_per_row", frames},
                       {"mac_iterations", mac_iters},
                       {"pacing", pacing},
                       {"kdc", kdc_rows},
                       {"smoke", o.smoke},
                       {"paper_reference",
                        {{"publisher_us_per_frame_1asdu", 71.93},
                         {"interarrival_96khz_us", 10.4},
                         {"note", "figures reported by arXiv 2608.22123 on a Raspberry Pi testbed, not measured here"}}}};
    benchrun::write_json(o.json_path, doc);
  }
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
