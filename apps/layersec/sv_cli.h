// Helpers shared by the `layersec sv ...` commands (cmd_sv.cc: pcap, decode,
// bench sv; cmd_sv_net.cc: publish, subscribe, kdc): key files, sample
// generation, profile/scheme lookup, counters as JSON, clocks and latency
// statistics. Header-only; everything here is for the CLI, not the library.
#pragma once

#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli_checks.h"
#include "layersec/base/keyfile.h"
#include "layersec/base/secret.h"
#include "layersec/sv/profiles.h"
#include "layersec/sv/security.h"
#include "layersec/sv/stream.h"
#include "layersec/sv/subscriber.h"

namespace layersec::app::svcli {

using namespace layersec::sv;

// --- keys ----------------------------------------------------------------------

// Reads a key file (hex text, base/keyfile.h). Refused unless only the owner
// can read it (mode 0600 or stricter). The key is never printed; its id is.
inline SecretBytes load_key_file(const std::string& path) {
  auto key = layersec::load_key_file(path);  // base/keyfile.h: 0600 owner-only, hex
  if (!key) throw std::runtime_error("key file " + path + ": " + std::string(to_string(key.error())));
  return std::move(key).value();
}

inline KeyMaterial key_material(SecretBytes key, std::uint32_t key_id) {
  KeyMaterial k;
  k.key_id = key_id;
  k.key = std::move(key);
  k.time_of_current_key = 0;
  return k;
}

// First frameCounter of a publisher run: the wall-clock time in ns (the
// "fresh per-start value" of docs/sv.md). The counter then advances by one
// per frame, so it stays below the wall clock in ns (at most 96,000 frames a
// second against 10^9 ns), and a later run, which starts at a later wall
// time, never repeats a value of an earlier one under the same key. Refused
// when the clock is obviously unset (before 2020-01-01): then it says
// nothing about earlier runs.
inline std::uint64_t publisher_counter_base() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  const std::int64_t ns = static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
  constexpr std::int64_t k2020 = 1'577'836'800LL * 1'000'000'000LL;
  if (ns < k2020) {
    throw std::runtime_error("the wall clock reads " + std::to_string(ts.tv_sec) +
                             " s since 1970 (before 2020): a secured publisher starts its frame counter at the "
                             "wall-clock time so that a restart never repeats one; set the clock first");
  }
  return static_cast<std::uint64_t>(ns);
}

// Deterministic, plausible samples: a 50 Hz three-phase set (currents in mA,
// voltages in 10 mV, as 9-2LE scales them) with neutral = sum.
inline void fill_samples(std::vector<Sample>& s, std::size_t asdus, std::uint64_t first_sample, std::uint32_t rate) {
  static const double kTwoPi = 6.283185307179586;
  for (std::size_t a = 0; a < asdus; ++a) {
    const double t = static_cast<double>(first_sample + a) / rate;
    Sample* ch = &s[a * 8];
    std::int32_t isum = 0, vsum = 0;
    for (int ph = 0; ph < 3; ++ph) {
      const double w = kTwoPi * 50.0 * t - ph * kTwoPi / 3.0;
      ch[ph] = Sample{static_cast<std::int32_t>(1000.0 * std::sin(w)), 0};
      ch[4 + ph] = Sample{static_cast<std::int32_t>(6350000.0 * std::sin(w)), 0};  // 63.5 kV
      isum += ch[ph].value;
      vsum += ch[4 + ph].value;
    }
    ch[3] = Sample{isum, 0};
    ch[7] = Sample{vsum, 0};
  }
}

inline Profile need_profile(const std::string& name) {
  auto p = find_profile(name);
  if (!p) throw std::runtime_error("unknown profile " + name + " (use e.g. 4000/1 or LE-50Hz-80spc)");
  return *p;
}

inline SecurityConfig need_scheme(const std::string& name) {
  auto s = parse_scheme(name);
  if (!s) throw std::runtime_error("unknown authentication scheme " + name);
  return *s;
}

// --- one stream's options (sv pcap / publish send it, sv decode / subscribe receive it) ---

struct StreamOptions {
  std::string profile = "4000/1";
  std::string sv_id = "LAYERSEC01";
  std::uint16_t appid = 0x4000;
  std::string auth = "none";
  std::string key_file;
  std::uint32_t key_id = 1;
  std::uint32_t smp_cnt_wrap = 0;  // 0: the profile's default
  // sender only
  std::uint32_t conf_rev = 1;
  bool no_vlan = false;
  bool simulate = false;
};

enum class StreamRole : std::uint8_t { kSender, kReceiver };

inline void add_stream_options(CLI::App* cmd, StreamOptions& o, StreamRole role) {
  const bool tx = role == StreamRole::kSender;
  cmd->add_option("--profile", o.profile, "profile name or RATE/ASDUS (default 4000/1)");
  cmd->add_option("--sv-id", o.sv_id, tx ? "svID (default LAYERSEC01)" : "expected svID");
  cmd->add_option("--appid", o.appid, tx ? "APPID (default 0x4000 = 16384)" : "subscribed APPID")
      ->check(whole_in(0, 0xFFFF));
  cmd->add_option("--auth", o.auth,
                  tx ? "none, hmac-sha256[-80|-128], aes-gmac-[64|128], blake2s, chaskey12-full, chaskey12-selective"
                     : "expected authentication scheme (default none)");
  cmd->add_option("--key", o.key_file, "key file (hex text, mode 0600)");
  cmd->add_option("--key-id", o.key_id, tx ? "key id carried in the extension (default 1)" : "key id (default 1)")
      ->check(whole_in(0, 0xFFFFFFFFu));
  cmd->add_option("--smp-cnt-wrap", o.smp_cnt_wrap,
                  tx ? "smpCnt wraps at N, 1..65536 (default: the sample rate, 65536 above 65536/s)"
                     : "the publisher's smpCnt wrap, 1..65536 (default: the profile's, 65536 above 65536/s)")
      ->check(whole_in(1, kMaxSmpCntWrap));
  if (tx) {
    cmd->add_option("--conf-rev", o.conf_rev, "confRev (default 1)")->check(whole_in(0, 0xFFFFFFFFu));
    cmd->add_flag("--no-vlan", o.no_vlan, "omit the 802.1Q priority tag");
    cmd->add_flag("--simulate", o.simulate, "set the Simulate bit");
  }
}

// The publisher's stream for `o` at profile `p` (scheme from --auth).
inline StreamConfig stream_config(const StreamOptions& o, const Profile& p) {
  StreamConfig c;
  c.asdus_per_frame = p.asdus_per_frame;
  c.eth.has_vlan = !o.no_vlan;
  c.sv_id = o.sv_id;
  c.appid = o.appid;
  c.conf_rev = o.conf_rev;
  c.simulate = o.simulate;
  c.smp_cnt_wrap = o.smp_cnt_wrap;
  c.security = need_scheme(o.auth);
  c.security.sender_id = o.appid;
  return c;
}

// The subscription for `o` at profile `p` (no timeout set).
inline SubscriptionConfig subscription_config(const StreamOptions& o, const Profile& p,
                                              bool accept_simulated) {
  SubscriptionConfig s;
  s.appid = o.appid;
  s.sv_id = o.sv_id;
  s.asdus_per_frame = p.asdus_per_frame;
  s.smp_cnt_wrap = o.smp_cnt_wrap != 0 ? o.smp_cnt_wrap : p.smp_cnt_wrap();
  if (s.smp_cnt_wrap < p.asdus_per_frame) {
    throw std::runtime_error("--smp-cnt-wrap " + std::to_string(s.smp_cnt_wrap) + " is below the " +
                             std::to_string(p.asdus_per_frame) + " ASDUs of a " + std::string(p.name) + " frame");
  }
  s.security = need_scheme(o.auth);
  s.accept_simulated = accept_simulated;
  return s;
}

// The --key file's key for a scheme that needs one.
inline KeyMaterial file_key(const StreamOptions& o) {
  if (o.key_file.empty()) throw std::runtime_error("--auth " + o.auth + " needs --key FILE");
  return key_material(load_key_file(o.key_file), o.key_id);
}

// One stream's counters as a JSON object (sv decode, sv subscribe).
inline nlohmann::json counters_json(const StreamCounters& c) {
  return nlohmann::json{{"received", c.received},
                        {"delivered", c.delivered},
                        {"gaps", c.gaps},
                        {"missing_samples", c.missing_samples},
                        {"duplicates", c.duplicates},
                        {"stale", c.stale},
                        {"replays", c.replays},
                        {"bad_tag", c.bad_tag},
                        {"unknown_key", c.unknown_key},
                        {"bad_extension", c.bad_extension},
                        {"unexpected_extension", c.unexpected_extension},
                        {"invariant_mismatch", c.invariant_mismatch},
                        {"conf_rev_changes", c.conf_rev_changes},
                        {"simulated", c.simulated},
                        {"timeouts", c.timeouts},
                        {"wrong_no_asdu", c.wrong_no_asdu},
                        {"wrong_dataset", c.wrong_dataset},
                        {"wrong_sv_id", c.wrong_sv_id},
                        {"bad_smp_cnt", c.bad_smp_cnt},
                        {"replayed_counter", c.replayed_counter},
                        {"smp_cnt_resyncs", c.smp_cnt_resyncs},
                        {"key_changes", c.key_changes}};
}

inline std::int64_t clock_ns(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}
inline std::int64_t mono_ns() { return clock_ns(CLOCK_MONOTONIC); }
// CPU time of this thread: unaffected by time spent descheduled on a loaded machine.
inline std::int64_t thread_cpu_ns() { return clock_ns(CLOCK_THREAD_CPUTIME_ID); }

inline std::string loadavg() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return a + " " + b + " " + c;
}

inline long rss_kib() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;  // Linux: KiB, peak of the process so far
}

struct Percentiles {
  double p50 = 0, p99 = 0, max = 0, mean = 0;
};

inline Percentiles percentiles(std::vector<std::int64_t>& ns) {
  Percentiles r;
  if (ns.empty()) return r;
  std::sort(ns.begin(), ns.end());
  auto at = [&](double q) {
    const std::size_t i = std::min(ns.size() - 1, static_cast<std::size_t>(q * static_cast<double>(ns.size())));
    return static_cast<double>(ns[i]) / 1000.0;
  };
  r.p50 = at(0.50);
  r.p99 = at(0.99);
  r.max = static_cast<double>(ns.back()) / 1000.0;
  double sum = 0;
  for (auto v : ns) sum += static_cast<double>(v);
  r.mean = sum / static_cast<double>(ns.size()) / 1000.0;
  return r;
}

// mean/p50/p99/max in microseconds of nanosecond samples (sorts them).
inline nlohmann::json stats_json(std::vector<std::int64_t>& ns) {
  const auto p = percentiles(ns);
  return nlohmann::json{{"samples", ns.size()}, {"mean", p.mean}, {"p50", p.p50}, {"p99", p.p99}, {"max", p.max}};
}

}  // namespace layersec::app::svcli
